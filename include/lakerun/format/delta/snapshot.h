// The state of a Delta table at one version: protocol, metadata, live files, tombstones and transaction ids.
//
// A Snapshot is a value: DeltaTable (table.h) builds it by log replay and nothing changes it afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/actions.h"

namespace lakerun::delta {

enum class ColumnMappingMode { kNone, kName, kId };

struct Snapshot {
  std::string table_path;  ///< the table root as given to DeltaTable
  int64_t version = -1;
  Protocol protocol;
  Metadata metadata;
  /// Live logical files, sorted by (path, deletion vector id).
  std::vector<AddFile> files;
  /// Remove tombstones still in the state (for vacuum; never read).
  std::vector<RemoveFile> tombstones;
  /// Latest txn version per appId.
  std::map<std::string, int64_t> app_versions;
  /// Live domain metadata by domain.
  std::map<std::string, DomainMetadata> domains;
  /// The commitInfo of the commit at `version`, when its commit file has one.
  std::optional<CommitInfo> commit_info;
  /// The commit timestamp of `version` (in-commit timestamp or the commit file's modification time), in ms.
  int64_t timestamp_ms = 0;
  /// The checkpoint version replay started from, if any.
  std::optional<int64_t> checkpoint_version;

  /// The column mapping mode the protocol and `delta.columnMapping.mode` put in force.
  ColumnMappingMode column_mapping_mode() const;
  /// The latest txn version recorded for `app_id`.
  std::optional<int64_t> TxnVersion(const std::string& app_id) const;
  /// "table <path> version <v>", for error messages.
  std::string Describe() const;
  /// The absolute (file-system) path of a data file: the add path percent-decoded and joined to the table root.
  std::string DataFilePath(const AddFile& file) const;
  /// Live rows: numRecords minus deletion-vector cardinality, summed over files; nullopt when a file lacks stats.
  std::optional<int64_t> NumRecords() const;
};

/// One entry of a table's history.
struct CommitRecord {
  int64_t version = 0;
  int64_t timestamp_ms = 0;
  std::optional<CommitInfo> commit_info;
};

}  // namespace lakerun::delta
