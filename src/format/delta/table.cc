// Loading Delta snapshots: checkpoint selection, commit replay, protocol gating, time travel, history.
#include "lakerun/format/delta/table.h"

#include <algorithm>

#include "format/delta/checkpoint_reader.h"
#include "format/delta/json_codec.h"
#include "format/delta/log_files.h"
#include "format/delta/log_replay.h"
#include "lakerun/base/error.h"

namespace lakerun::delta {
namespace {

std::string TableContext(const std::string& path, int64_t version) {
  return StrCat("table ", path, " version ", version);
}

ActionSet ReadCommit(FileSystem& fs, const std::string& table, int64_t version, const std::string& file) {
  const std::string context = StrCat(TableContext(table, version), " file ", file);
  std::string text;
  try {
    text = fs.ReadFile(file);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, context, ": cannot read commit: ", e.what());
  }
  return internal::ParseActionLines(text, context);
}

// Checks that the snapshot's column mapping mode is one this reader knows.
void CheckColumnMapping(const Snapshot& s) {
  const bool supported = s.protocol.min_reader_version == 2 ||
                         (s.protocol.min_reader_version == 3 && s.protocol.HasReaderFeature("columnMapping"));
  if (!supported) return;
  auto it = s.metadata.configuration.find("delta.columnMapping.mode");
  if (it == s.metadata.configuration.end()) return;
  LAKERUN_CHECK_AS(CorruptDataError, it->second == "none" || it->second == "name" || it->second == "id",
                   s.Describe(), ": delta.columnMapping.mode must be none, name or id, got '", it->second, "'");
}

// Commit timestamps: the in-commit timestamp where the commit carries one, otherwise the commit file's
// modification time, made strictly increasing (a clock that went backwards must not reorder versions).
std::vector<CommitRecord> BuildHistory(FileSystem& fs, const std::string& table, const internal::LogListing& log) {
  std::vector<CommitRecord> out;
  int64_t previous = INT64_MIN;
  for (const auto& [version, file] : log.commits) {
    CommitRecord record;
    record.version = version;
    ActionSet actions = ReadCommit(fs, table, version, file);
    record.commit_info = actions.commit_info;
    if (actions.commit_info && actions.commit_info->in_commit_timestamp) {
      record.timestamp_ms = *actions.commit_info->in_commit_timestamp;
    } else {
      record.timestamp_ms = log.commit_mtimes.at(version);
      if (previous != INT64_MIN && record.timestamp_ms <= previous) record.timestamp_ms = previous + 1;
    }
    previous = record.timestamp_ms;
    out.push_back(std::move(record));
  }
  return out;
}

// The newest version a listing of the log shows; nullopt when it holds no commit or checkpoint.
std::optional<int64_t> LatestIn(const internal::LogListing& log) {
  std::optional<int64_t> latest;
  if (!log.commits.empty()) latest = log.commits.rbegin()->first;
  if (!log.checkpoints.empty()) latest = std::max(latest.value_or(-1), log.checkpoints.rbegin()->first);
  return latest;
}

// A replayed snapshot's timestamp (its commit's in-commit timestamp, else the commit file's modification time), then
// the checks that it can be read.
void FinishSnapshot(const internal::LogListing& log, Snapshot* snapshot) {
  if (snapshot->commit_info && snapshot->commit_info->in_commit_timestamp) {
    snapshot->timestamp_ms = *snapshot->commit_info->in_commit_timestamp;
  } else if (log.commit_mtimes.count(snapshot->version)) {
    snapshot->timestamp_ms = log.commit_mtimes.at(snapshot->version);
  }
  CheckReadable(snapshot->protocol, snapshot->Describe());
  CheckColumnMapping(*snapshot);
}

// The snapshot at `version` of `table`, whose log `log` lists.
Snapshot SnapshotAt(const DeltaTable& table, const internal::LogListing& log, int64_t version) {
  FileSystem& fs = table.fs();
  const std::string& path = table.path();
  const std::string log_dir = table.log_path();
  LAKERUN_CHECK(!log.commits.empty() || !log.checkpoints.empty(), "table ", path,
                ": not a Delta table (", log_dir, " holds no commit)");
  const int64_t latest = LatestIn(log).value_or(-1);
  LAKERUN_CHECK(version >= 0 && version <= latest, "table ", path, ": version ", version,
                " does not exist (the latest version is ", latest, ")");

  Snapshot snapshot;
  snapshot.table_path = path;
  snapshot.version = version;
  internal::StateBuilder state;

  // The newest checkpoint at or below `version`.
  int64_t start = 0;
  auto cp = log.checkpoints.upper_bound(version);
  if (cp != log.checkpoints.begin()) {
    --cp;
    const internal::CheckpointFiles& files = cp->second.front();
    state.Apply(internal::ReadCheckpoint(fs, log_dir, files, TableContext(path, cp->first)),
                StrCat(TableContext(path, cp->first), " checkpoint ", files.paths.front()));
    snapshot.checkpoint_version = cp->first;
    start = cp->first + 1;
  }
  const int64_t oldest_commit = log.commits.empty() ? -1 : log.commits.begin()->first;
  for (int64_t v = start; v <= version; ++v) {
    auto it = log.commits.find(v);
    if (it == log.commits.end()) {
      if (v < oldest_commit) {
        LAKERUN_THROW(CorruptDataError, TableContext(path, version), ": cannot be reconstructed: commit file ",
                      JoinPath(log_dir, CommitFileName(v)), " has been cleaned up and no checkpoint between version ",
                      v, " and version ", version, " covers it (the oldest retained commit is version ",
                      oldest_commit, ")");
      }
      LAKERUN_THROW(CorruptDataError, TableContext(path, version), ": commit file ",
                    JoinPath(log_dir, CommitFileName(v)), " (version ", v,
                    ") is missing from the middle of the log; the log is corrupt");
    }
    ActionSet actions = ReadCommit(fs, path, v, it->second);
    if (v == version) snapshot.commit_info = actions.commit_info;
    state.Apply(std::move(actions), StrCat(TableContext(path, v), " file ", it->second));
  }
  state.Finish(&snapshot, TableContext(path, version));
  if (!snapshot.commit_info && log.commits.count(version)) {
    snapshot.commit_info = ReadCommit(fs, path, version, log.commits.at(version)).commit_info;
  }
  FinishSnapshot(log, &snapshot);
  return snapshot;
}

}  // namespace

const std::vector<std::string>& SupportedReaderFeatures() {
  // typeWidening: files written before a column was widened are read as the table's type (the Delta scan and the
  // loader convert them: integers, floats, dates to timestamp_ntz, decimals to a wider precision or scale).
  static const std::vector<std::string> kFeatures = {"columnMapping", "deletionVectors", "timestampNtz",
                                                     "typeWidening", "typeWidening-preview", "v2Checkpoint",
                                                     "vacuumProtocolCheck"};
  return kFeatures;
}

void CheckReadable(const Protocol& protocol, const std::string& context) {
  LAKERUN_CHECK_AS(NotImplemented, protocol.min_reader_version >= 1 && protocol.min_reader_version <= 3, context,
                   ": requires Delta reader version ", protocol.min_reader_version,
                   "; lakerun reads reader versions 1 to 3");
  if (protocol.min_reader_version < 3) return;
  const auto& supported = SupportedReaderFeatures();
  for (const auto& feature : protocol.reader_features.value_or(std::vector<std::string>{})) {
    if (std::find(supported.begin(), supported.end(), feature) == supported.end()) {
      std::string list;
      for (const auto& s : supported) list += (list.empty() ? "" : ", ") + s;
      LAKERUN_THROW(NotImplemented, context, ": requires the reader table feature '", feature,
                    "', which lakerun does not support (supported: ", list, ")");
    }
  }
}

std::string CommitFileName(int64_t version) { return internal::VersionPrefix(version) + ".json"; }

bool IsDeltaTable(const std::string& path, FileSystem& fs) {
  auto info = fs.Stat(JoinPath(path, "_delta_log"));
  return info && info->is_directory;
}

DeltaTable::DeltaTable(std::string path, FileSystem& fs) : path_(std::move(path)), fs_(fs) {
  while (path_.size() > 1 && path_.back() == '/') path_.pop_back();
}

std::string DeltaTable::log_path() const { return JoinPath(path_, "_delta_log"); }

std::optional<int64_t> DeltaTable::LatestVersion() const {
  if (!IsDeltaTable(path_, fs_)) return std::nullopt;
  return LatestIn(internal::ListLog(fs_, log_path()));
}

// Latest and AtVersion list the log once: on an object store each listing and each check is a round trip.
Snapshot DeltaTable::Latest() const {
  std::optional<internal::LogListing> log;
  if (IsDeltaTable(path_, fs_)) log = internal::ListLog(fs_, log_path());
  const std::optional<int64_t> latest = log ? LatestIn(*log) : std::nullopt;
  LAKERUN_CHECK(latest.has_value(), "table ", path_, ": not a Delta table (", log_path(),
                " is missing or holds no commit)");
  return SnapshotAt(*this, *log, *latest);
}

Snapshot DeltaTable::AtVersion(int64_t version) const {
  LAKERUN_CHECK(IsDeltaTable(path_, fs_), "table ", path_, ": not a Delta table (no _delta_log directory)");
  return SnapshotAt(*this, internal::ListLog(fs_, log_path()), version);
}


Snapshot DeltaTable::Update(const Snapshot& base, std::optional<int64_t> version) const {
  const std::string log_dir = log_path();
  internal::LogListing log = internal::ListLog(fs_, log_dir);
  const int64_t latest = log.commits.empty() ? base.version : std::max(base.version, log.commits.rbegin()->first);
  const int64_t target = version.value_or(latest);
  LAKERUN_CHECK(target >= base.version && target <= latest, "table ", path_, ": cannot update version ",
                base.version, " to version ", target, " (the latest version is ", latest, ")");
  if (target == base.version) return base;
  internal::StateBuilder state(base);
  Snapshot snapshot;
  snapshot.table_path = path_;
  snapshot.version = target;
  snapshot.checkpoint_version = base.checkpoint_version;
  for (int64_t v = base.version + 1; v <= target; ++v) {
    auto it = log.commits.find(v);
    LAKERUN_CHECK_AS(CorruptDataError, it != log.commits.end(), TableContext(path_, target), ": commit file ",
                     JoinPath(log_dir, CommitFileName(v)), " (version ", v, ") is missing from the log");
    ActionSet actions = ReadCommit(fs_, path_, v, it->second);
    if (v == target) snapshot.commit_info = actions.commit_info;
    state.Apply(std::move(actions), StrCat(TableContext(path_, v), " file ", it->second));
  }
  state.Finish(&snapshot, TableContext(path_, target));
  FinishSnapshot(log, &snapshot);
  return snapshot;
}

std::vector<CommitRecord> DeltaTable::History() const {
  LAKERUN_CHECK(IsDeltaTable(path_, fs_), "table ", path_, ": not a Delta table (no _delta_log directory)");
  return BuildHistory(fs_, path_, internal::ListLog(fs_, log_path()));
}

Snapshot DeltaTable::AtTimestamp(int64_t timestamp_ms) const {
  const std::vector<CommitRecord> history = History();
  LAKERUN_CHECK(!history.empty(), "table ", path_, ": has no commits to time travel over");
  const CommitRecord* found = nullptr;
  for (const auto& record : history) {
    if (record.timestamp_ms <= timestamp_ms) found = &record;
  }
  LAKERUN_CHECK(found != nullptr, "table ", path_, ": timestamp ", timestamp_ms,
                " ms is before the earliest retained commit (version ", history.front().version, " at ",
                history.front().timestamp_ms, " ms)");
  Snapshot s = AtVersion(found->version);
  s.timestamp_ms = found->timestamp_ms;
  return s;
}

}  // namespace lakerun::delta
