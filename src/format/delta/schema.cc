// Parsing and serializing Delta schemas (PROTOCOL.md, "Schema Serialization Format").
#include "lakerun/format/delta/schema.h"

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"

namespace lakerun::delta {
namespace {

using nlohmann::json;

struct NamedPrimitive {
  const char* name;
  TypeKind kind;
};

constexpr NamedPrimitive kPrimitives[] = {
    {"string", TypeKind::kString},       {"long", TypeKind::kLong},
    {"integer", TypeKind::kInteger},     {"short", TypeKind::kShort},
    {"byte", TypeKind::kByte},           {"float", TypeKind::kFloat},
    {"double", TypeKind::kDouble},       {"boolean", TypeKind::kBoolean},
    {"binary", TypeKind::kBinary},       {"date", TypeKind::kDate},
    {"timestamp", TypeKind::kTimestamp}, {"timestamp_ntz", TypeKind::kTimestampNtz},
    {"void", TypeKind::kVoid},           {"variant", TypeKind::kVariant},
};

DataTypePtr ParseType(const json& j, const std::string& context, const std::string& where);

StructField ParseField(const json& j, const std::string& context, const std::string& where) {
  LAKERUN_CHECK_AS(CorruptDataError, j.is_object() && j.contains("name") && j["name"].is_string() && j.contains("type"),
                   context, ": schema field at ", where, " needs \"name\" and \"type\", got ", j.dump());
  StructField field;
  field.name = j["name"].get<std::string>();
  const std::string here = where.empty() ? field.name : where + "." + field.name;
  field.type = ParseType(j["type"], context, here);
  if (j.contains("nullable") && j["nullable"].is_boolean()) field.nullable = j["nullable"].get<bool>();
  if (j.contains("metadata") && j["metadata"].is_object()) {
    for (const auto& [key, value] : j["metadata"].items()) {
      field.metadata[key] = value.dump();
      if (key == "delta.columnMapping.physicalName" && value.is_string()) field.physical_name = value.get<std::string>();
      if (key == "delta.columnMapping.id" && value.is_number_integer()) field.field_id = value.get<int32_t>();
    }
  }
  return field;
}

DataTypePtr ParseType(const json& j, const std::string& context, const std::string& where) {
  if (j.is_string()) {
    try {
      return PrimitiveType(j.get<std::string>());
    } catch (const InvalidArgument&) {
      LAKERUN_THROW(CorruptDataError, context, ": column '", where, "' has unknown type ", j.dump());
    }
  }
  LAKERUN_CHECK_AS(CorruptDataError, j.is_object() && j.contains("type") && j["type"].is_string(), context,
                   ": column '", where, "' has a malformed type ", j.dump());
  const std::string type = j["type"].get<std::string>();
  auto out = std::make_shared<DataType>();
  if (type == "struct") {
    out->kind = TypeKind::kStruct;
    LAKERUN_CHECK_AS(CorruptDataError, j.contains("fields") && j["fields"].is_array(), context, ": struct at '",
                     where, "' has no \"fields\" array");
    for (const auto& f : j["fields"]) out->fields.push_back(ParseField(f, context, where));
  } else if (type == "array") {
    out->kind = TypeKind::kArray;
    LAKERUN_CHECK_AS(CorruptDataError, j.contains("elementType"), context, ": array '", where,
                     "' has no elementType");
    out->element = ParseType(j["elementType"], context, where + ".element");
    if (j.contains("containsNull") && j["containsNull"].is_boolean()) out->contains_null = j["containsNull"];
  } else if (type == "map") {
    out->kind = TypeKind::kMap;
    LAKERUN_CHECK_AS(CorruptDataError, j.contains("keyType") && j.contains("valueType"), context, ": map '", where,
                     "' needs keyType and valueType");
    out->key = ParseType(j["keyType"], context, where + ".key");
    out->value = ParseType(j["valueType"], context, where + ".value");
    if (j.contains("valueContainsNull") && j["valueContainsNull"].is_boolean()) {
      out->value_contains_null = j["valueContainsNull"];
    }
  } else {
    return ParseType(json(type), context, where);
  }
  return out;
}

json TypeToJson(const DataType& type);

json FieldToJson(const StructField& field) {
  json metadata = json::object();
  for (const auto& [key, value] : field.metadata) {
    metadata[key] = json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (metadata[key].is_discarded()) metadata[key] = value;
  }
  if (field.physical_name) metadata["delta.columnMapping.physicalName"] = *field.physical_name;
  if (field.field_id) metadata["delta.columnMapping.id"] = *field.field_id;
  return json{{"name", field.name}, {"type", TypeToJson(*field.type)}, {"nullable", field.nullable},
              {"metadata", metadata}};
}

json TypeToJson(const DataType& type) {
  switch (type.kind) {
    case TypeKind::kStruct: {
      json fields = json::array();
      for (const auto& f : type.fields) fields.push_back(FieldToJson(f));
      return json{{"type", "struct"}, {"fields", fields}};
    }
    case TypeKind::kArray:
      return json{{"type", "array"}, {"elementType", TypeToJson(*type.element)}, {"containsNull", type.contains_null}};
    case TypeKind::kMap:
      return json{{"type", "map"},
                  {"keyType", TypeToJson(*type.key)},
                  {"valueType", TypeToJson(*type.value)},
                  {"valueContainsNull", type.value_contains_null}};
    default:
      return TypeName(type);
  }
}

}  // namespace

const StructField* DataType::FindField(std::string_view name) const {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

DataTypePtr PrimitiveType(std::string_view name) {
  for (const auto& p : kPrimitives) {
    if (name == p.name) {
      auto t = std::make_shared<DataType>();
      t->kind = p.kind;
      return t;
    }
  }
  if (name.rfind("decimal", 0) == 0) {
    auto t = std::make_shared<DataType>();
    t->kind = TypeKind::kDecimal;
    t->precision = 10;
    t->scale = 0;
    if (name != "decimal") {
      int p = 0, s = 0;
      char close = 0;
      const std::string text(name);
      LAKERUN_CHECK(std::sscanf(text.c_str(), "decimal(%d,%d%c", &p, &s, &close) == 3 && close == ')' && p > 0 &&
                        p <= 38 && s >= 0 && s <= p,
                    "malformed decimal type '", text, "', expected decimal(precision,scale)");
      t->precision = p;
      t->scale = s;
    }
    return t;
  }
  LAKERUN_THROW(InvalidArgument, "unknown Delta type '", name, "'");
}

DataTypePtr MakeStruct(std::vector<StructField> fields) {
  auto t = std::make_shared<DataType>();
  t->kind = TypeKind::kStruct;
  t->fields = std::move(fields);
  return t;
}

DataTypePtr MakeArray(DataTypePtr element, bool contains_null) {
  auto t = std::make_shared<DataType>();
  t->kind = TypeKind::kArray;
  t->element = std::move(element);
  t->contains_null = contains_null;
  return t;
}

DataTypePtr MakeMap(DataTypePtr key, DataTypePtr value, bool value_contains_null) {
  auto t = std::make_shared<DataType>();
  t->kind = TypeKind::kMap;
  t->key = std::move(key);
  t->value = std::move(value);
  t->value_contains_null = value_contains_null;
  return t;
}

std::string TypeName(const DataType& type) {
  switch (type.kind) {
    case TypeKind::kStruct:
      return "struct";
    case TypeKind::kArray:
      return "array";
    case TypeKind::kMap:
      return "map";
    case TypeKind::kDecimal:
      return StrCat("decimal(", type.precision, ",", type.scale, ")");
    default:
      for (const auto& p : kPrimitives) {
        if (p.kind == type.kind) return p.name;
      }
  }
  return "unknown";
}

DataTypePtr ParseSchema(std::string_view text, const std::string& context) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  LAKERUN_CHECK_AS(CorruptDataError, !j.is_discarded(), context, ": schemaString is not valid JSON: ",
                   std::string(text.substr(0, 200)));
  auto schema = ParseType(j, context, "");
  LAKERUN_CHECK_AS(CorruptDataError, schema->kind == TypeKind::kStruct, context,
                   ": schemaString must describe a struct, got ", TypeName(*schema));
  return schema;
}

std::string SchemaToJson(const DataType& schema) { return TypeToJson(schema).dump(); }

}  // namespace lakerun::delta
