// Optimistic commits with put-if-absent log entries, conflict checks, bounded retries and txn idempotence.
#include "lakerun/format/delta/commit.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "format/delta/json_codec.h"
#include "format/delta/uri.h"
#include "lakerun/base/logging.h"
#include "lakerun/base/stale_temporaries.h"
#include "lakerun/format/delta/checkpoint.h"

namespace lakerun::delta {
namespace {

using nlohmann::json;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool ConfigTrue(const Metadata& m, const std::string& key) {
  auto it = m.configuration.find(key);
  if (it == m.configuration.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  return v == "true";
}

// True if any field (at any depth) carries column metadata `key`.
bool AnyFieldHas(const DataType& type, const std::string& key) {
  for (const auto& f : type.fields) {
    if (f.metadata.count(key)) return true;
    if (f.type && AnyFieldHas(*f.type, key)) return true;
  }
  if (type.element && AnyFieldHas(*type.element, key)) return true;
  if (type.key && AnyFieldHas(*type.key, key)) return true;
  if (type.value && AnyFieldHas(*type.value, key)) return true;
  return false;
}

bool AnyFieldHasPrefix(const DataType& type, const std::string& prefix) {
  for (const auto& f : type.fields) {
    for (const auto& [k, v] : f.metadata) {
      if (k.rfind(prefix, 0) == 0) return true;
    }
    if (f.type && AnyFieldHasPrefix(*f.type, prefix)) return true;
  }
  return false;
}

std::string LogPath(const DeltaTable& table, int64_t version) {
  return JoinPath(table.log_path(), CommitFileName(version));
}

ActionSet ReadCommitActions(const DeltaTable& table, int64_t version) {
  const std::string path = LogPath(table, version);
  return internal::ParseActionLines(table.fs().ReadFile(path),
                                    StrCat("table ", table.path(), " version ", version, " file ", path));
}

int CheckpointInterval(const Snapshot& s, int fallback) {
  auto it = s.metadata.configuration.find("delta.checkpointInterval");
  if (it == s.metadata.configuration.end()) return fallback;
  try {
    return std::max(0, std::stoi(it->second));
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

void CheckWritable(const Snapshot& s) {
  const std::string context = s.Describe();
  CheckReadable(s.protocol, context);
  const int w = s.protocol.min_writer_version;
  LAKERUN_CHECK_AS(NotImplemented, w >= 1 && w <= 7, context, ": requires Delta writer version ", w,
                   "; lakerun writes writer versions 1 to 7");
  const DataType& schema = *s.metadata.schema;
  // Features whose presence is fine for a writer that only appends (and whose metadata we check for use below).
  static const std::set<std::string> kSupported = {
      "appendOnly",      "invariants",      "checkConstraints", "changeDataFeed",   "generatedColumns",
      "columnMapping",   "identityColumns", "deletionVectors",  "timestampNtz",     "v2Checkpoint",
      "vacuumProtocolCheck", "domainMetadata", "inCommitTimestamp", "allowColumnDefaults"};
  if (w == 7) {
    for (const auto& f : s.protocol.writer_features.value_or(std::vector<std::string>{})) {
      LAKERUN_CHECK_AS(NotImplemented, kSupported.count(f) > 0, context, ": requires the writer table feature '", f,
                       "', which lakerun does not support for writing");
    }
  }
  auto feature_on = [&](const std::string& name, int since_version) {
    return w == 7 ? s.protocol.HasWriterFeature(name) : w >= since_version;
  };
  if (feature_on("invariants", 2)) {
    LAKERUN_CHECK_AS(NotImplemented, !AnyFieldHas(schema, "delta.invariants"), context,
                     ": the schema has column invariants (writer feature 'invariants'), which lakerun cannot enforce");
  }
  if (feature_on("checkConstraints", 3)) {
    for (const auto& [k, v] : s.metadata.configuration) {
      LAKERUN_CHECK_AS(NotImplemented, k.rfind("delta.constraints.", 0) != 0, context, ": CHECK constraint '", k,
                       "' (writer feature 'checkConstraints') cannot be enforced by lakerun");
    }
  }
  if (feature_on("generatedColumns", 4)) {
    LAKERUN_CHECK_AS(NotImplemented, !AnyFieldHas(schema, "delta.generationExpression"), context,
                     ": the schema has generated columns (writer feature 'generatedColumns'), which lakerun cannot "
                     "compute");
  }
  if (feature_on("identityColumns", 6)) {
    LAKERUN_CHECK_AS(NotImplemented, !AnyFieldHasPrefix(schema, "delta.identity."), context,
                     ": the schema has identity columns (writer feature 'identityColumns'), which lakerun cannot "
                     "assign");
  }
  if (feature_on("changeDataFeed", 4)) {
    // Appends need no change-data files (PROTOCOL.md, "Change Data Files"); Commit refuses removes below.
  }
}

DeltaTable CreateTable(const std::string& path, const DataTypePtr& schema, const CreateTableOptions& options,
                       FileSystem& fs) {
  LAKERUN_CHECK(schema && schema->kind == TypeKind::kStruct && !schema->fields.empty(), "table ", path,
                ": a table schema must be a non-empty struct");
  for (const auto& col : options.partition_columns) {
    const StructField* f = schema->FindField(col);
    LAKERUN_CHECK(f != nullptr, "table ", path, ": partition column '", col, "' is not in the schema");
    LAKERUN_CHECK(f->type->IsPrimitive(), "table ", path, ": partition column '", col, "' must be primitive, got ",
                  TypeName(*f->type));
  }
  DeltaTable table(path, fs);
  fs.CreateDirs(table.log_path());
  ActionSet actions;
  actions.protocol = options.protocol;
  Metadata m;
  m.id = RandomUuid();
  m.name = options.name;
  m.description = options.description;
  m.schema_string = SchemaToJson(*schema);
  m.schema = schema;
  m.partition_columns = options.partition_columns;
  m.created_time = NowMs();
  m.configuration = options.configuration;
  actions.metadata = m;
  CommitInfo info;
  info.timestamp = NowMs();
  info.operation = "CREATE TABLE";
  json params{{"partitionBy", json(options.partition_columns).dump()}};
  info.json = json{{"operationParameters", params}, {"engineInfo", "lakerun/0.1.0"}}.dump();
  if (options.protocol.HasWriterFeature("inCommitTimestamp") &&
      options.configuration.count("delta.enableInCommitTimestamps") &&
      options.configuration.at("delta.enableInCommitTimestamps") == "true") {
    info.in_commit_timestamp = info.timestamp;
  }
  actions.commit_info = info;
  const bool created = fs.CreateExclusive(LogPath(table, 0), internal::SerializeCommit(actions));
  LAKERUN_CHECK(created, "table ", path, ": cannot create the table: ", LogPath(table, 0), " already exists");
  return table;
}

CommitResult Commit(const DeltaTable& table, ActionSet actions, const CommitOptions& options,
                    std::optional<int64_t> read_version) {
  LAKERUN_CHECK(options.max_attempts > 0, "CommitOptions::max_attempts must be positive, got ",
                options.max_attempts);
  Snapshot snapshot = read_version ? table.AtVersion(*read_version) : table.Latest();
  CheckWritable(snapshot);
  // Commit files, checkpoints and _last_checkpoint that writers killed mid-write left half-written beside their
  // targets (readers ignore them; nothing else would remove them).
  RemoveStaleTemporaries(table.fs(), table.log_path(), [](const std::string&) { return true; },
                         "a Delta log write");
  if (!actions.removes.empty()) {
    LAKERUN_CHECK_AS(NotImplemented, !ConfigTrue(snapshot.metadata, "delta.appendOnly"), snapshot.Describe(),
                     ": the table is append-only (delta.appendOnly=true); this commit removes files");
    LAKERUN_CHECK_AS(NotImplemented, !ConfigTrue(snapshot.metadata, "delta.enableChangeDataFeed"),
                     snapshot.Describe(), ": change data feed is enabled; lakerun does not write change data files");
  }
  const bool blind_append = actions.removes.empty() && !actions.metadata && !actions.protocol;
  std::set<std::string> removed_paths;
  for (const auto& r : actions.removes) {
    removed_paths.insert(internal::PercentDecode(r.path, snapshot.Describe()));
  }
  if (options.txn) actions.txns.push_back(*options.txn);

  std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(::getpid()));
  CommitResult result;
  for (int attempt = 1; attempt <= options.max_attempts; ++attempt) {
    result.attempts = attempt;
    if (options.txn) {
      auto done = snapshot.TxnVersion(options.txn->app_id);
      if (done && *done >= options.txn->version) {
        result.version = snapshot.version;
        result.skipped = true;
        return result;
      }
    }
    const int64_t version = snapshot.version + 1;
    CommitInfo info;
    info.timestamp = NowMs();
    info.operation = options.operation;
    json params = json::object();
    for (const auto& [k, v] : options.operation_parameters) params[k] = v;
    json extra{{"operationParameters", params},
               {"readVersion", snapshot.version},
               {"isBlindAppend", blind_append},
               {"engineInfo", "lakerun/0.1.0"}};
    if (options.txn) extra["txnId"] = StrCat(options.txn->app_id, ":", options.txn->version);
    info.json = extra.dump();
    if (snapshot.protocol.HasWriterFeature("inCommitTimestamp") &&
        ConfigTrue(snapshot.metadata, "delta.enableInCommitTimestamps")) {
      const int64_t previous = snapshot.commit_info && snapshot.commit_info->in_commit_timestamp
                                   ? *snapshot.commit_info->in_commit_timestamp
                                   : snapshot.timestamp_ms;
      info.in_commit_timestamp = std::max(*info.timestamp, previous + 1);
    }
    actions.commit_info = info;
    if (table.fs().CreateExclusive(LogPath(table, version), internal::SerializeCommit(actions))) {
      result.version = version;
      const int interval = CheckpointInterval(snapshot, options.checkpoint_interval);
      if (interval > 0 && version % interval == 0) {
        try {
          WriteCheckpoint(table, table.Update(snapshot, version));
          result.checkpointed = true;
        } catch (const Error& e) {
          // The commit stands; a missing checkpoint only costs readers a longer replay.
          LAKERUN_LOG(Warning) << "table " << table.path() << ": checkpoint of version " << version
                               << " failed: " << e.what();
        }
      }
      return result;
    }
    // Lost the race for `version`: look at what was committed meanwhile.
    Snapshot newer = table.Update(snapshot);
    for (int64_t v = snapshot.version + 1; v <= newer.version; ++v) {
      ActionSet theirs = ReadCommitActions(table, v);
      const std::string what = StrCat("table ", table.path(), ": commit ", v, " (", LogPath(table, v), ")");
      LAKERUN_CHECK_AS(delta::ConcurrentModificationError, !theirs.protocol, what,
                       " changed the protocol concurrently; re-read the table and retry");
      LAKERUN_CHECK_AS(delta::ConcurrentModificationError, !theirs.metadata, what,
                       " changed the table metadata concurrently; re-read the table and retry");
      if (!removed_paths.empty()) {
        for (const auto& r : theirs.removes) {
          const std::string p = internal::PercentDecode(r.path, what);
          LAKERUN_CHECK_AS(delta::ConcurrentModificationError, removed_paths.count(p) == 0, what,
                           " concurrently removed file ", p, " that this commit also removes");
        }
      }
    }
    snapshot = std::move(newer);
    CheckWritable(snapshot);
    // Back off a little (bounded, randomized) so racing writers spread out.
    const int cap_ms = std::min(50, 1 << std::min(attempt, 6));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % (static_cast<uint64_t>(cap_ms) * 1000 + 1)));
  }
  LAKERUN_THROW(delta::ConcurrentModificationError, "table ", table.path(), ": gave up committing after ",
                options.max_attempts, " attempts; every attempt lost the race for the next version (last tried ",
                snapshot.version + 1, ")");
}

}  // namespace lakerun::delta
