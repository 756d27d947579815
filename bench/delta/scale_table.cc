// Writing the log of a simulated large Delta table (see scale_table.h).
#include "scale_table.h"

#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "format/delta/json_codec.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/checkpoint.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/values.h"

namespace lakerun::bench {
namespace {

using delta::AddFile;
using parquet::Value;

constexpr int64_t kBaseMicros = 1704067200LL * 1000000;  // 2024-01-01T00:00:00Z
constexpr int64_t kBaseMs = kBaseMicros / 1000;
constexpr int64_t kMicrosPerFile = 60LL * 1000000;       // each file covers one minute of `ts`

delta::DataTypePtr ScaleSchema() {
  using delta::PrimitiveType;
  return delta::MakeStruct({{"id", PrimitiveType("long")},
                            {"ts", PrimitiveType("timestamp")},
                            {"score", PrimitiveType("double")},
                            {"name", PrimitiveType("string")},
                            {"part", PrimitiveType("integer")}});
}

std::string Uuid(std::mt19937_64& rng) {
  const uint64_t high = rng();
  return delta::UuidFromRandomBits(high, rng());
}

std::string UserName(int64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "user-%09lld", static_cast<long long>(id));
  return buf;
}

// `"key":value` entries of one stats section, in schema order, values formatted as Delta writers do.
std::string Section(const delta::DataType& schema, const std::vector<Value>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    const delta::StructField& field = schema.fields[i];
    const std::optional<std::string> text = delta::FormatStatsValue(values[i], *field.type);
    if (!text) continue;
    if (out.size() > 1) out += ',';
    out += StrCat("\"", field.name, "\":", *text);
  }
  return out + "}";
}

// The stats JSON of data file `k`: every data column (not the partition column) has min, max and nullCount.
std::string StatsOf(const delta::DataType& schema, int64_t k, const ScaleTableOptions& options,
                    std::mt19937_64& rng) {
  const int64_t first_id = k * options.rows_per_file;
  const int64_t last_id = first_id + options.rows_per_file - 1;
  const int64_t first_ts = kBaseMicros + k * kMicrosPerFile;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double low = unit(rng) * 0.5;
  const double high = 0.5 + unit(rng) * 0.5;
  const std::vector<Value> min = {Value::Int(first_id), Value::Int(first_ts), Value::Double(low),
                                  Value::String(UserName(first_id))};
  const std::vector<Value> max = {Value::Int(last_id), Value::Int(first_ts + kMicrosPerFile - 1),
                                  Value::Double(high), Value::String(UserName(last_id))};
  return StrCat("{\"numRecords\":", options.rows_per_file, ",\"minValues\":", Section(schema, min),
                ",\"maxValues\":", Section(schema, max), ",\"nullCount\":{\"id\":0,\"ts\":0,\"score\":", k % 7,
                ",\"name\":", k % 3, "}}");
}

AddFile MakeAdd(const delta::DataType& schema, int64_t k, const ScaleTableOptions& options, std::mt19937_64& rng) {
  const int part = static_cast<int>(k % options.partitions);
  char task[16];
  std::snprintf(task, sizeof task, "%05lld", static_cast<long long>((k / options.partitions) % 100000));
  AddFile add;
  add.path = StrCat("part=", part, "/part-", task, "-", Uuid(rng), ".c000.snappy.parquet");
  add.partition_values["part"] = std::to_string(part);
  add.size = 4 * 1024 * 1024 + static_cast<int64_t>(rng() % (4 * 1024 * 1024));
  add.modification_time = kBaseMs + k * 1000;
  add.data_change = true;
  add.stats = StatsOf(schema, k, options, rng);
  return add;
}

// The state at the checkpoint version: protocol, metadata and `options.files` live files.
delta::Snapshot CheckpointState(const std::string& path, const ScaleTableOptions& options, std::mt19937_64& rng) {
  const delta::DataTypePtr schema = ScaleSchema();
  delta::Snapshot snap;
  snap.table_path = path;
  snap.version = options.checkpoint_version;
  snap.protocol.min_reader_version = 1;
  snap.protocol.min_writer_version = 2;
  snap.metadata.id = Uuid(rng);
  snap.metadata.name = "scale";
  snap.metadata.schema = schema;
  snap.metadata.schema_string = delta::SchemaToJson(*schema);
  snap.metadata.partition_columns = {"part"};
  snap.metadata.created_time = kBaseMs;
  snap.files.reserve(static_cast<size_t>(options.files));
  for (int64_t k = 0; k < options.files; ++k) snap.files.push_back(MakeAdd(*schema, k, options, rng));
  return snap;
}

// Commits versions checkpoint_version + 1 ... with the same serializer delta::Commit uses. Commit itself would
// replay the whole log before every commit (for its conflict checks), which this single writer does not need.
void WriteCommits(const delta::DeltaTable& table, std::vector<AddFile> live, const ScaleTableOptions& options,
                  std::mt19937_64& rng) {
  const delta::DataTypePtr schema = ScaleSchema();
  int64_t next_file = options.files;
  for (int c = 0; c < options.commits; ++c) {
    const int64_t version = options.checkpoint_version + 1 + c;
    const int64_t now_ms = kBaseMs + options.files * 1000 + version * 60000;
    delta::ActionSet actions;
    for (int i = 0; i < options.removes_per_commit && !live.empty(); ++i) {
      const size_t victim = static_cast<size_t>(rng() % live.size());
      actions.removes.push_back(delta::RemoveOf(live[victim], now_ms));
      live[victim] = std::move(live.back());
      live.pop_back();
    }
    for (int i = 0; i < options.adds_per_commit; ++i) {
      actions.adds.push_back(MakeAdd(*schema, next_file++, options, rng));
      live.push_back(actions.adds.back());
    }
    delta::CommitInfo info;
    info.timestamp = now_ms;
    info.operation = "WRITE";
    info.json = R"({"operationParameters":{"mode":"Append"},"engineInfo":"lakerun/scale-bench"})";
    actions.commit_info = info;
    const std::string file = JoinPath(table.log_path(), delta::CommitFileName(version));
    const bool created = table.fs().CreateExclusive(file, delta::internal::SerializeCommit(actions));
    LAKERUN_CHECK(created, "table ", table.path(), " version ", version, ": commit file ", file, " already exists");
  }
}

}  // namespace

ScaleTableSummary WriteScaleTable(const std::string& path, const ScaleTableOptions& options) {
  LAKERUN_CHECK(options.files > 0 && options.partitions > 0 && options.checkpoint_parts > 0 &&
                    options.rows_per_file > 0 && options.commits >= 0,
                "scale table ", path, ": files, partitions, checkpoint parts and rows per file must be positive");
  FileSystem& fs = LocalFileSystem();
  const delta::DeltaTable table(path, fs);
  LAKERUN_CHECK(!fs.Exists(table.log_path()), "scale table ", path, ": ", table.log_path(), " already exists");
  fs.CreateDirs(table.log_path());
  std::mt19937_64 rng(options.seed);
  ScaleTableSummary summary;
  {
    delta::Snapshot state = CheckpointState(path, options, rng);
    delta::CheckpointOptions checkpoint;
    checkpoint.parts = options.checkpoint_parts;
    delta::WriteCheckpoint(table, state, checkpoint);
    WriteCommits(table, std::move(state.files), options, rng);
  }
  summary.latest_version = options.checkpoint_version + options.commits;
  summary.live_files = options.files +
                       static_cast<int64_t>(options.commits) * (options.adds_per_commit - options.removes_per_commit);
  for (const FileInfo& info : fs.List(table.log_path())) summary.log_bytes += static_cast<int64_t>(info.size);
  return summary;
}

}  // namespace lakerun::bench
