// Creating Delta tables and committing to them, safely under concurrent writers.
//
//   CreateTableOptions create;
//   create.partition_columns = {"split"};
//   auto table = lakerun::delta::CreateTable("/data/t", schema, create);
//   ActionSet actions;
//   actions.adds.push_back(add);                        // e.g. from WriteDataFiles (writer.h)
//   CommitOptions opts;
//   opts.txn = Txn{"my-job", 17};                       // idempotent: a retry of txn 17 becomes a no-op
//   CommitResult r = Commit(table, actions, opts);      // r.version, r.skipped
//
// Every log entry is created with FileSystem::CreateExclusive (put-if-absent; link(2) on local disks), so two
// writers never both win version v. A writer that loses the race re-reads the commits it missed and checks them:
// a concurrent protocol or metaData change, or (for commits that remove files) a concurrent remove of the same file,
// is a conflict (ConcurrentModificationError); a blind append simply retries at the next version. Retries are
// bounded by CommitOptions::max_attempts. After committing version v, a checkpoint is written when
// v % checkpoint interval == 0 (table property delta.checkpointInterval, default 10).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/actions.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::delta {

/// A concurrent commit made this one impossible (it changed the protocol or metadata, or removed a file this
/// commit depends on), or the retries ran out.
class ConcurrentModificationError : public Error {
  using Error::Error;
};

struct CreateTableOptions {
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> configuration;
  std::optional<std::string> name;
  std::optional<std::string> description;
  /// Default: reader 1, writer 2 (no table features needed for plain appends).
  Protocol protocol;
};

struct CommitOptions {
  std::string operation = "WRITE";
  std::map<std::string, std::string> operation_parameters;
  /// Recorded in the commit; if the table already has this appId at a version >= txn->version, the commit is
  /// skipped (CommitResult::skipped).
  std::optional<Txn> txn;
  /// Attempts at creating the next log entry before giving up with ConcurrentModificationError.
  int max_attempts = 200;
  /// Write a checkpoint after commits whose version is a multiple of this (0: never). The table property
  /// delta.checkpointInterval overrides it.
  int checkpoint_interval = 10;
};

struct CommitResult {
  int64_t version = -1;  ///< the version committed (or, when skipped, the version that already had the txn)
  bool skipped = false;  ///< the txn was already committed; nothing was written
  int attempts = 0;
  bool checkpointed = false;
};

/// Throws NotImplemented unless lakerun can write to a table with this protocol and metadata (writer versions up to
/// 7 with the writer features it honours; tables using invariants, CHECK constraints, generated or identity
/// columns, row tracking or clustering are refused with the feature named).
void CheckWritable(const Snapshot& snapshot);

/// Creates version 0 (protocol + metaData + commitInfo). Throws InvalidArgument if the table already exists or the
/// partition columns are not top-level primitive columns of `schema`.
DeltaTable CreateTable(const std::string& path, const DataTypePtr& schema, const CreateTableOptions& options = {},
                       FileSystem& fs = UriFileSystem());

/// Commits `actions` (adds, removes, txns, domain metadata; protocol/metaData for schema changes) on top of the
/// latest version. `read_version`, when set, is the snapshot the caller based its work on: commits after it are
/// checked for conflicts.
CommitResult Commit(const DeltaTable& table, ActionSet actions, const CommitOptions& options = {},
                    std::optional<int64_t> read_version = std::nullopt);

}  // namespace lakerun::delta
