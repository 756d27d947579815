// Delta actions to and from JSON.
#include "format/delta/json_codec.h"

#include "lakerun/base/error.h"

namespace lakerun::delta::internal {
namespace {

using nlohmann::json;

const json* Field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string RequireString(const json& obj, const char* key, const char* action, const std::string& context) {
  const json* v = Field(obj, key);
  LAKERUN_CHECK_AS(CorruptDataError, v && v->is_string(), context, ": ", action, " action lacks string field '", key,
                   "': ", obj.dump().substr(0, 300));
  return v->get<std::string>();
}

std::optional<std::string> OptString(const json& obj, const char* key) {
  const json* v = Field(obj, key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<int64_t> OptInt(const json& obj, const char* key, const char* action, const std::string& context) {
  const json* v = Field(obj, key);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float()) return static_cast<int64_t>(v->get<double>());
  if (v->is_string()) {  // some writers quote longs
    try {
      size_t used = 0;
      const int64_t x = std::stoll(v->get<std::string>(), &used);
      if (used == v->get<std::string>().size()) return x;
    } catch (const std::exception&) {
    }
  }
  LAKERUN_THROW(CorruptDataError, context, ": ", action, " field '", key, "' must be an integer, got ", v->dump());
}

int64_t RequireInt(const json& obj, const char* key, const char* action, const std::string& context) {
  auto v = OptInt(obj, key, action, context);
  LAKERUN_CHECK_AS(CorruptDataError, v.has_value(), context, ": ", action, " action lacks integer field '", key,
                   "': ", obj.dump().substr(0, 300));
  return *v;
}

bool OptBool(const json& obj, const char* key, bool fallback) {
  const json* v = Field(obj, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

std::map<std::string, std::string> StringMap(const json& obj, const char* key) {
  std::map<std::string, std::string> out;
  const json* v = Field(obj, key);
  if (!v || !v->is_object()) return out;
  for (const auto& [k, val] : v->items()) {
    if (val.is_string()) {
      out[k] = val.get<std::string>();
    } else if (!val.is_null()) {
      out[k] = val.dump();
    }
  }
  return out;
}

PartitionValues ParsePartitionValues(const json& obj, const char* action, const std::string& context) {
  PartitionValues out;
  const json* v = Field(obj, "partitionValues");
  if (!v) return out;
  LAKERUN_CHECK_AS(CorruptDataError, v->is_object(), context, ": ", action, ".partitionValues must be an object, got ",
                   v->dump());
  for (const auto& [k, val] : v->items()) {
    if (val.is_null()) {
      out[k] = std::nullopt;
    } else if (val.is_string()) {
      out[k] = val.get<std::string>();
    } else {
      out[k] = val.dump();
    }
  }
  return out;
}

std::optional<std::vector<std::string>> OptStringList(const json& obj, const char* key, const std::string& context) {
  const json* v = Field(obj, key);
  if (!v) return std::nullopt;
  LAKERUN_CHECK_AS(CorruptDataError, v->is_array(), context, ": '", key, "' must be an array, got ", v->dump());
  std::vector<std::string> out;
  for (const auto& e : *v) {
    LAKERUN_CHECK_AS(CorruptDataError, e.is_string(), context, ": '", key, "' must hold strings, got ", e.dump());
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::optional<DeletionVectorDescriptor> ParseDv(const json& obj, const char* action, const std::string& context) {
  const json* v = Field(obj, "deletionVector");
  if (!v) return std::nullopt;
  LAKERUN_CHECK_AS(CorruptDataError, v->is_object(), context, ": ", action, ".deletionVector must be an object");
  DeletionVectorDescriptor dv;
  const std::string type = RequireString(*v, "storageType", "deletionVector", context);
  LAKERUN_CHECK_AS(CorruptDataError, type == "u" || type == "i" || type == "p", context,
                   ": deletionVector.storageType must be 'u', 'i' or 'p', got '", type, "'");
  dv.storage_type = type[0];
  dv.path_or_inline_dv = RequireString(*v, "pathOrInlineDv", "deletionVector", context);
  if (auto off = OptInt(*v, "offset", "deletionVector", context)) dv.offset = static_cast<int32_t>(*off);
  dv.size_in_bytes = static_cast<int32_t>(RequireInt(*v, "sizeInBytes", "deletionVector", context));
  dv.cardinality = RequireInt(*v, "cardinality", "deletionVector", context);
  return dv;
}

Protocol ParseProtocol(const json& p, const std::string& context) {
  Protocol out;
  // PROTOCOL.md's own examples also spell the versions readerVersion / writerVersion.
  auto reader = OptInt(p, "minReaderVersion", "protocol", context);
  if (!reader) reader = OptInt(p, "readerVersion", "protocol", context);
  auto writer = OptInt(p, "minWriterVersion", "protocol", context);
  if (!writer) writer = OptInt(p, "writerVersion", "protocol", context);
  LAKERUN_CHECK_AS(CorruptDataError, reader && writer, context,
                   ": protocol action needs minReaderVersion and minWriterVersion: ", p.dump());
  out.min_reader_version = static_cast<int>(*reader);
  out.min_writer_version = static_cast<int>(*writer);
  out.reader_features = OptStringList(p, "readerFeatures", context);
  out.writer_features = OptStringList(p, "writerFeatures", context);
  return out;
}

Metadata ParseMetadata(const json& m, const std::string& context) {
  Metadata out;
  out.id = RequireString(m, "id", "metaData", context);
  out.name = OptString(m, "name");
  out.description = OptString(m, "description");
  if (const json* f = Field(m, "format"); f && f->is_object()) {
    out.format.provider = OptString(*f, "provider").value_or("parquet");
    out.format.options = StringMap(*f, "options");
  }
  out.schema_string = RequireString(m, "schemaString", "metaData", context);
  out.schema = ParseSchema(out.schema_string, context);
  out.partition_columns = OptStringList(m, "partitionColumns", context).value_or(std::vector<std::string>{});
  out.created_time = OptInt(m, "createdTime", "metaData", context);
  out.configuration = StringMap(m, "configuration");
  for (const auto& col : out.partition_columns) {
    LAKERUN_CHECK_AS(CorruptDataError, out.schema->FindField(col) != nullptr, context, ": partition column '", col,
                     "' is not in the schema");
  }
  return out;
}

}  // namespace

void ParseActionInto(const json& line, ActionSet* out, const std::string& context) {
  LAKERUN_CHECK_AS(CorruptDataError, line.is_object(), context, ": an action must be a JSON object, got ",
                   line.dump().substr(0, 200));
  for (const auto& [kind, body] : line.items()) {
    if (body.is_null()) continue;  // checkpoint rows carry every action column, most of them null
    if (kind == "commitInfo") {
      LAKERUN_CHECK_AS(CorruptDataError, body.is_object(), context, ": commitInfo must be an object");
      CommitInfo info;
      info.timestamp = OptInt(body, "timestamp", "commitInfo", context);
      info.in_commit_timestamp = OptInt(body, "inCommitTimestamp", "commitInfo", context);
      info.operation = OptString(body, "operation");
      info.json = body.dump();
      out->commit_info = std::move(info);
      continue;
    }
    LAKERUN_CHECK_AS(CorruptDataError, body.is_object(), context, ": '", kind, "' action must be an object, got ",
                     body.dump().substr(0, 200));
    if (kind == "protocol") {
      LAKERUN_CHECK_AS(CorruptDataError, !out->protocol, context, ": more than one protocol action");
      out->protocol = ParseProtocol(body, context);
    } else if (kind == "metaData") {
      LAKERUN_CHECK_AS(CorruptDataError, !out->metadata, context, ": more than one metaData action");
      out->metadata = ParseMetadata(body, context);
    } else if (kind == "add") {
      AddFile a;
      a.path = RequireString(body, "path", "add", context);
      a.partition_values = ParsePartitionValues(body, "add", context);
      a.size = OptInt(body, "size", "add", context).value_or(0);
      a.modification_time = OptInt(body, "modificationTime", "add", context).value_or(0);
      a.data_change = OptBool(body, "dataChange", true);
      a.stats = OptString(body, "stats");
      a.tags = StringMap(body, "tags");
      a.deletion_vector = ParseDv(body, "add", context);
      a.base_row_id = OptInt(body, "baseRowId", "add", context);
      a.default_row_commit_version = OptInt(body, "defaultRowCommitVersion", "add", context);
      out->adds.push_back(std::move(a));
    } else if (kind == "remove") {
      RemoveFile r;
      r.path = RequireString(body, "path", "remove", context);
      r.deletion_timestamp = OptInt(body, "deletionTimestamp", "remove", context);
      r.data_change = OptBool(body, "dataChange", true);
      if (const json* e = Field(body, "extendedFileMetadata"); e && e->is_boolean()) r.extended_file_metadata = *e;
      if (Field(body, "partitionValues")) r.partition_values = ParsePartitionValues(body, "remove", context);
      r.size = OptInt(body, "size", "remove", context);
      r.deletion_vector = ParseDv(body, "remove", context);
      out->removes.push_back(std::move(r));
    } else if (kind == "txn") {
      Txn t;
      t.app_id = RequireString(body, "appId", "txn", context);
      t.version = RequireInt(body, "version", "txn", context);
      t.last_updated = OptInt(body, "lastUpdated", "txn", context);
      out->txns.push_back(std::move(t));
    } else if (kind == "domainMetadata") {
      DomainMetadata d;
      d.domain = RequireString(body, "domain", "domainMetadata", context);
      d.configuration = OptString(body, "configuration").value_or("");
      d.removed = OptBool(body, "removed", false);
      out->domains.push_back(std::move(d));
    } else if (kind == "checkpointMetadata") {
      out->checkpoint_metadata_version = RequireInt(body, "version", "checkpointMetadata", context);
    } else if (kind == "sidecar") {
      Sidecar s;
      s.path = RequireString(body, "path", "sidecar", context);
      s.size_in_bytes = OptInt(body, "sizeInBytes", "sidecar", context).value_or(0);
      s.modification_time = OptInt(body, "modificationTime", "sidecar", context).value_or(0);
      out->sidecars.push_back(std::move(s));
    }
    // cdc and any unknown action: ignored (PROTOCOL.md, "Protocol Evolution").
  }
}

ActionSet ParseActionLines(std::string_view text, const std::string& context) {
  ActionSet out;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    LAKERUN_CHECK_AS(CorruptDataError, !j.is_discarded(), context, " line ", line_no, ": not valid JSON: ",
                     std::string(line.substr(0, 120)));
    ParseActionInto(j, &out, StrCat(context, " line ", line_no));
  }
  return out;
}

json ToJson(const Protocol& p) {
  json j{{"minReaderVersion", p.min_reader_version}, {"minWriterVersion", p.min_writer_version}};
  if (p.reader_features) j["readerFeatures"] = *p.reader_features;
  if (p.writer_features) j["writerFeatures"] = *p.writer_features;
  return j;
}

json ToJson(const Metadata& m) {
  json j{{"id", m.id},
         {"format", {{"provider", m.format.provider}, {"options", m.format.options}}},
         {"schemaString", m.schema_string},
         {"partitionColumns", m.partition_columns},
         {"configuration", m.configuration}};
  if (m.name) j["name"] = *m.name;
  if (m.description) j["description"] = *m.description;
  if (m.created_time) j["createdTime"] = *m.created_time;
  return j;
}

json ToJson(const DeletionVectorDescriptor& dv) {
  json j{{"storageType", std::string(1, dv.storage_type)},
         {"pathOrInlineDv", dv.path_or_inline_dv},
         {"sizeInBytes", dv.size_in_bytes},
         {"cardinality", dv.cardinality}};
  if (dv.offset) j["offset"] = *dv.offset;
  return j;
}

namespace {
json PartitionJson(const PartitionValues& values) {
  json j = json::object();
  for (const auto& [k, v] : values) j[k] = v ? json(*v) : json(nullptr);
  return j;
}
}  // namespace

json ToJson(const AddFile& a) {
  json j{{"path", a.path},
         {"partitionValues", PartitionJson(a.partition_values)},
         {"size", a.size},
         {"modificationTime", a.modification_time},
         {"dataChange", a.data_change}};
  if (a.stats) j["stats"] = *a.stats;
  if (!a.tags.empty()) j["tags"] = a.tags;
  if (a.deletion_vector) j["deletionVector"] = ToJson(*a.deletion_vector);
  if (a.base_row_id) j["baseRowId"] = *a.base_row_id;
  if (a.default_row_commit_version) j["defaultRowCommitVersion"] = *a.default_row_commit_version;
  return j;
}

json ToJson(const RemoveFile& r) {
  json j{{"path", r.path}, {"dataChange", r.data_change}};
  if (r.deletion_timestamp) j["deletionTimestamp"] = *r.deletion_timestamp;
  if (r.extended_file_metadata) j["extendedFileMetadata"] = *r.extended_file_metadata;
  if (r.partition_values) j["partitionValues"] = PartitionJson(*r.partition_values);
  if (r.size) j["size"] = *r.size;
  if (r.deletion_vector) j["deletionVector"] = ToJson(*r.deletion_vector);
  return j;
}

json ToJson(const Txn& t) {
  json j{{"appId", t.app_id}, {"version", t.version}};
  if (t.last_updated) j["lastUpdated"] = *t.last_updated;
  return j;
}

json ToJson(const DomainMetadata& d) {
  return json{{"domain", d.domain}, {"configuration", d.configuration}, {"removed", d.removed}};
}

std::string SerializeCommit(const ActionSet& actions) {
  std::string out;
  auto line = [&](const char* kind, json body) {
    out += json{{kind, std::move(body)}}.dump();
    out += '\n';
  };
  if (actions.commit_info) {
    json info = json::parse(actions.commit_info->json, nullptr, false);
    if (info.is_discarded() || !info.is_object()) info = json::object();
    if (actions.commit_info->timestamp) info["timestamp"] = *actions.commit_info->timestamp;
    if (actions.commit_info->in_commit_timestamp) info["inCommitTimestamp"] = *actions.commit_info->in_commit_timestamp;
    if (actions.commit_info->operation) info["operation"] = *actions.commit_info->operation;
    line("commitInfo", std::move(info));
  }
  if (actions.protocol) line("protocol", ToJson(*actions.protocol));
  if (actions.metadata) line("metaData", ToJson(*actions.metadata));
  for (const auto& t : actions.txns) line("txn", ToJson(t));
  for (const auto& d : actions.domains) line("domainMetadata", ToJson(d));
  for (const auto& r : actions.removes) line("remove", ToJson(r));
  for (const auto& a : actions.adds) line("add", ToJson(a));
  return out;
}

}  // namespace lakerun::delta::internal
