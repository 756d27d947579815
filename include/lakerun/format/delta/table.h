// Opening a Delta table and loading snapshots by log replay.
//
//   lakerun::delta::DeltaTable table("/data/events");
//   Snapshot latest = table.Latest();
//   Snapshot v3 = table.AtVersion(3);                       // time travel by version
//   Snapshot then = table.AtTimestamp(1700000000000);       // latest version committed at or before this ms
//   for (const auto& c : table.History()) ...               // commitInfo per version
//
// Replay starts from the newest complete checkpoint at or below the version asked for (classic, multi-part with every
// part present, or v2 with its sidecars), then applies the JSON commits after it in order. The snapshot's protocol
// is checked: reader versions 1-3 and the reader features columnMapping, deletionVectors, timestampNtz, v2Checkpoint
// and vacuumProtocolCheck are supported; anything else throws NotImplemented naming the feature.
//
// Errors name the table, the version and the file: a missing commit in the middle of the log, a corrupt JSON line, a
// checkpoint that cannot be read are CorruptDataError; an empty or absent _delta_log is InvalidArgument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/snapshot.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::delta {

/// The reader features this implementation supports.
const std::vector<std::string>& SupportedReaderFeatures();
/// Throws NotImplemented unless a reader can read a table with `protocol`. `context` names the table and version.
void CheckReadable(const Protocol& protocol, const std::string& context);

/// The name of a commit file: "00000000000000000007.json".
std::string CommitFileName(int64_t version);
/// True if `path` is a directory holding a `_delta_log/` directory.
bool IsDeltaTable(const std::string& path, FileSystem& fs = UriFileSystem());

class DeltaTable {
 public:
  /// `path` is the table root (the directory holding `_delta_log/`). `fs` must outlive this object.
  explicit DeltaTable(std::string path, FileSystem& fs = UriFileSystem());

  /// The newest committed version, or nullopt if the log has no commit or checkpoint yet.
  std::optional<int64_t> LatestVersion() const;
  Snapshot Latest() const;
  Snapshot AtVersion(int64_t version) const;
  /// The newest version whose commit timestamp is <= `timestamp_ms`. Throws InvalidArgument if every retained
  /// commit is newer.
  Snapshot AtTimestamp(int64_t timestamp_ms) const;
  /// Every retained commit, oldest first, with its timestamp and commitInfo.
  std::vector<CommitRecord> History() const;

  /// Applies the commits after `base.version` up to `version` (or the newest) to `base`; cheaper than a full replay.
  Snapshot Update(const Snapshot& base, std::optional<int64_t> version = std::nullopt) const;

  const std::string& path() const { return path_; }
  std::string log_path() const;
  FileSystem& fs() const { return fs_; }

 private:
  std::string path_;
  FileSystem& fs_;
};

}  // namespace lakerun::delta
