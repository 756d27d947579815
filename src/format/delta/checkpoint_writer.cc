// Writing checkpoints (classic, multi-part, v2 with a sidecar) and _last_checkpoint.
#include <nlohmann/json.hpp>

#include "format/delta/json_codec.h"
#include "format/delta/log_files.h"
#include "lakerun/base/error.h"
#include "lakerun/format/delta/checkpoint.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"

namespace lakerun::delta {
namespace {

using nlohmann::json;
namespace pq = lakerun::parquet;

pq::SchemaNode Str(const std::string& name) {
  return pq::Leaf(name, pq::PhysicalType::kByteArray, pq::Repetition::kOptional, pq::LogicalType::String());
}
pq::SchemaNode I64(const std::string& name) { return pq::Leaf(name, pq::PhysicalType::kInt64, pq::Repetition::kOptional); }
pq::SchemaNode I32(const std::string& name) { return pq::Leaf(name, pq::PhysicalType::kInt32, pq::Repetition::kOptional); }
pq::SchemaNode Bool(const std::string& name) {
  return pq::Leaf(name, pq::PhysicalType::kBoolean, pq::Repetition::kOptional);
}
pq::SchemaNode StringMap(const std::string& name) {
  return pq::MapOf(name,
                   pq::Leaf("key", pq::PhysicalType::kByteArray, pq::Repetition::kRequired, pq::LogicalType::String()),
                   Str("value"));
}
pq::SchemaNode StringList(const std::string& name) { return pq::ListOf(name, Str("element")); }
pq::SchemaNode Struct(const std::string& name, std::vector<pq::SchemaNode> fields) {
  return pq::Group(name, std::move(fields), pq::Repetition::kOptional);
}
pq::SchemaNode Dv() {
  return Struct("deletionVector",
                {Str("storageType"), Str("pathOrInlineDv"), I32("offset"), I32("sizeInBytes"), I64("cardinality")});
}
pq::SchemaNode AddNode() {
  return Struct("add", {Str("path"), StringMap("partitionValues"), I64("size"), I64("modificationTime"),
                        Bool("dataChange"), Str("stats"), StringMap("tags"), Dv(), I64("baseRowId"),
                        I64("defaultRowCommitVersion")});
}
pq::SchemaNode RemoveNode() {
  return Struct("remove", {Str("path"), I64("deletionTimestamp"), Bool("dataChange"), Bool("extendedFileMetadata"),
                           StringMap("partitionValues"), I64("size"), Dv()});
}

// The checkpoint schema of PROTOCOL.md ("Checkpoint Schema").
pq::Schema CheckpointSchema() {
  return pq::Schema::FromFields({
      Struct("protocol",
             {I32("minReaderVersion"), I32("minWriterVersion"), StringList("readerFeatures"),
              StringList("writerFeatures")}),
      Struct("metaData", {Str("id"), Str("name"), Str("description"),
                          Struct("format", {Str("provider"), StringMap("options")}), Str("schemaString"),
                          StringList("partitionColumns"), I64("createdTime"), StringMap("configuration")}),
      Struct("txn", {Str("appId"), I64("version"), I64("lastUpdated")}),
      AddNode(),
      RemoveNode(),
      Struct("domainMetadata", {Str("domain"), Str("configuration"), Bool("removed")}),
  });
}

pq::Schema SidecarSchema() { return pq::Schema::FromFields({AddNode(), RemoveNode()}); }

// Converts a JSON action body to a Value shaped by `node`.
pq::Value ToValue(const json& j, const pq::SchemaNode& node) {
  if (j.is_null()) return pq::Value::Null();
  if (node.is_leaf()) {
    if (j.is_boolean()) return pq::Value::Bool(j.get<bool>());
    if (j.is_number_integer()) return pq::Value::Int(j.get<int64_t>());
    if (j.is_number_float()) return pq::Value::Double(j.get<double>());
    if (j.is_string()) return pq::Value::String(j.get<std::string>());
    return pq::Value::String(j.dump());
  }
  const pq::SchemaNode* inner = nullptr;
  bool element_is_repeated = false;
  if (pq::IsMapNode(node, &inner)) {
    std::vector<std::pair<pq::Value, pq::Value>> entries;
    for (const auto& [k, v] : j.items()) {
      entries.emplace_back(pq::Value::String(k), ToValue(v, inner->children.at(1)));
    }
    return pq::Value::Map(std::move(entries));
  }
  if (pq::IsListNode(node, &inner, &element_is_repeated)) {
    std::vector<pq::Value> items;
    for (const auto& e : j) items.push_back(ToValue(e, *inner));
    return pq::Value::List(std::move(items));
  }
  std::vector<std::pair<std::string, pq::Value>> fields;
  for (const auto& child : node.children) {
    auto it = j.find(child.name);
    fields.emplace_back(child.name, it == j.end() ? pq::Value::Null() : ToValue(*it, child));
  }
  return pq::Value::Struct(std::move(fields));
}

pq::Value Row(const pq::Schema& schema, const std::string& action, const json& body) {
  const pq::SchemaNode* node = schema.FindNode(action);
  LAKERUN_INTERNAL_ASSERT(node != nullptr, action);
  return pq::Value::Struct({{action, ToValue(body, *node)}});
}

pq::WriterOptions ParquetOptions(const Snapshot& s) {
  pq::WriterOptions o;
  auto it = s.metadata.configuration.find("delta.parquet.compression.codec");
  o.codec = it == s.metadata.configuration.end() ? pq::Codec::kZstd : pq::ParseCodec(it->second);
  o.row_group_rows = 100000;
  return o;
}

// Writes rows to a temporary file in `dir`, then renames it to `path`. Returns the final size.
int64_t WriteParquetAtomically(FileSystem& fs, const std::string& path, const pq::Schema& schema,
                               const std::vector<pq::Value>& rows, const pq::WriterOptions& options) {
  const std::string tmp = JoinPath(DirName(path), "." + BaseName(path) + "." + RandomUuid() + ".tmp");
  try {
    pq::ParquetWriter writer(fs, tmp, schema, options);
    writer.WriteRows(rows);
    writer.Close();
    fs.Rename(tmp, path);
  } catch (...) {
    try {
      fs.Remove(tmp);
    } catch (...) {
    }
    throw;
  }
  auto info = fs.Stat(path);
  return info ? static_cast<int64_t>(info->size) : 0;
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

LastCheckpoint WriteCheckpoint(const DeltaTable& table, const Snapshot& snapshot, const CheckpointOptions& options) {
  FileSystem& fs = table.fs();
  const std::string context = snapshot.Describe();
  LAKERUN_CHECK(options.parts >= 1, context, ": checkpoint parts must be >= 1, got ", options.parts);
  const bool v2_table = snapshot.protocol.HasReaderFeature("v2Checkpoint");
  LAKERUN_CHECK(!(v2_table && options.parts > 1), context,
                ": multi-part checkpoints are forbidden on tables with the v2Checkpoint feature");
  LAKERUN_CHECK(!options.v2_with_sidecar || v2_table, context,
                ": v2 checkpoints need the table feature v2Checkpoint");
  LAKERUN_CHECK(!(options.v2_with_sidecar && options.parts > 1), context,
                ": a v2 checkpoint cannot also be multi-part");
  const pq::Schema schema = CheckpointSchema();
  const pq::WriterOptions pq_options = ParquetOptions(snapshot);
  const std::string log_dir = table.log_path();
  const std::string prefix = internal::VersionPrefix(snapshot.version);

  // Non-file actions, then file actions (tombstones kept until they expire; lakerun keeps all of them).
  std::vector<pq::Value> head;
  head.push_back(Row(schema, "protocol", internal::ToJson(snapshot.protocol)));
  head.push_back(Row(schema, "metaData", internal::ToJson(snapshot.metadata)));
  for (const auto& [app, version] : snapshot.app_versions) {
    head.push_back(Row(schema, "txn", internal::ToJson(Txn{app, version, std::nullopt})));
  }
  for (const auto& [name, d] : snapshot.domains) head.push_back(Row(schema, "domainMetadata", internal::ToJson(d)));
  std::vector<std::pair<std::string, pq::Value>> files;  // (path, row)
  for (const auto& a : snapshot.files) files.emplace_back(a.path, Row(schema, "add", internal::ToJson(a)));
  for (const auto& r : snapshot.tombstones) {
    json body = internal::ToJson(r);
    body.erase("stats");
    body.erase("tags");
    files.emplace_back(r.path, Row(schema, "remove", body));
  }

  LastCheckpoint last;
  last.version = snapshot.version;
  last.size = static_cast<int64_t>(head.size() + files.size());
  last.num_of_add_files = static_cast<int64_t>(snapshot.files.size());
  int64_t bytes = 0;
  if (options.v2_with_sidecar) {
    const pq::Schema sidecar_schema = SidecarSchema();
    std::vector<pq::Value> rows;
    for (auto& [path, row] : files) rows.push_back(std::move(row));
    const std::string sidecar_name = RandomUuid() + ".parquet";
    fs.CreateDirs(JoinPath(log_dir, "_sidecars"));
    const int64_t sidecar_size = WriteParquetAtomically(fs, JoinPath(JoinPath(log_dir, "_sidecars"), sidecar_name),
                                                        sidecar_schema, rows, pq_options);
    std::string text = json{{"checkpointMetadata", {{"version", snapshot.version}, {"tags", json::object()}}}}.dump();
    text += "\n" + json{{"protocol", internal::ToJson(snapshot.protocol)}}.dump();
    text += "\n" + json{{"metaData", internal::ToJson(snapshot.metadata)}}.dump();
    for (const auto& [app, version] : snapshot.app_versions) {
      text += "\n" + json{{"txn", internal::ToJson(Txn{app, version, std::nullopt})}}.dump();
    }
    for (const auto& [name, d] : snapshot.domains) text += "\n" + json{{"domainMetadata", internal::ToJson(d)}}.dump();
    text += "\n" + json{{"sidecar",
                         {{"path", sidecar_name},
                          {"sizeInBytes", sidecar_size},
                          {"modificationTime", fs.Stat(JoinPath(JoinPath(log_dir, "_sidecars"), sidecar_name))
                                                   ->mtime_ms},
                          {"tags", json::object()}}}}
                           .dump() +
            "\n";
    const std::string path = JoinPath(log_dir, prefix + ".checkpoint." + RandomUuid() + ".json");
    fs.WriteAtomically(path, text);
    bytes = sidecar_size + static_cast<int64_t>(text.size());
  } else if (options.parts == 1) {
    std::vector<pq::Value> rows = std::move(head);
    for (auto& [path, row] : files) rows.push_back(std::move(row));
    bytes = WriteParquetAtomically(fs, JoinPath(log_dir, prefix + ".checkpoint.parquet"), schema, rows, pq_options);
  } else {
    // Multi-part: file actions clustered by a hash of their path; non-file actions in part 1.
    std::vector<std::vector<pq::Value>> parts(static_cast<size_t>(options.parts));
    parts[0] = std::move(head);
    for (auto& [path, row] : files) parts[Fnv1a(path) % parts.size()].push_back(std::move(row));
    for (size_t i = 0; i < parts.size(); ++i) {
      char name[96];
      std::snprintf(name, sizeof name, "%s.checkpoint.%010zu.%010zu.parquet", prefix.c_str(), i + 1, parts.size());
      bytes += WriteParquetAtomically(fs, JoinPath(log_dir, name), schema, parts[i], pq_options);
    }
    last.parts = options.parts;
  }
  last.size_in_bytes = bytes;

  auto existing = ReadLastCheckpoint(table);
  if (!existing || existing->version <= snapshot.version) {
    json j{{"version", last.version}, {"size", last.size}, {"sizeInBytes", bytes},
           {"numOfAddFiles", *last.num_of_add_files}};
    if (last.parts) j["parts"] = *last.parts;
    fs.WriteAtomically(JoinPath(log_dir, "_last_checkpoint"), j.dump());
  }
  return last;
}

std::optional<LastCheckpoint> ReadLastCheckpoint(const DeltaTable& table) {
  const std::string path = JoinPath(table.log_path(), "_last_checkpoint");
  if (!table.fs().Exists(path)) return std::nullopt;
  std::string text;
  try {
    text = table.fs().ReadFile(path);
  } catch (const IoError&) {
    return std::nullopt;  // replaced between Exists and the read: it is only a hint
  }
  json j = json::parse(text, nullptr, false);
  LAKERUN_CHECK_AS(CorruptDataError, !j.is_discarded() && j.is_object() && j.contains("version") &&
                                         j["version"].is_number_integer(),
                   "table ", table.path(), ": ", path, " is not valid JSON with a version: ", text.substr(0, 200));
  LastCheckpoint out;
  out.version = j["version"].get<int64_t>();
  if (j.contains("size") && j["size"].is_number_integer()) out.size = j["size"].get<int64_t>();
  if (j.contains("parts") && j["parts"].is_number_integer()) out.parts = j["parts"].get<int64_t>();
  if (j.contains("sizeInBytes") && j["sizeInBytes"].is_number_integer()) {
    out.size_in_bytes = j["sizeInBytes"].get<int64_t>();
  }
  if (j.contains("numOfAddFiles") && j["numOfAddFiles"].is_number_integer()) {
    out.num_of_add_files = j["numOfAddFiles"].get<int64_t>();
  }
  return out;
}

}  // namespace lakerun::delta
