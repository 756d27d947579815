// A Delta table's schema: the typed tree parsed from metaData.schemaString (Spark's JSON schema representation).
//
//   auto schema = lakerun::delta::ParseSchema(metadata.schema_string, "table /data/t version 3");
//   for (const auto& field : schema->fields) std::cout << field.name << ": " << TypeName(*field.type) << "\n";
//
// Column mapping: each field carries its `delta.columnMapping.physicalName` and `delta.columnMapping.id` when the
// schema has them; PhysicalName() falls back to the display name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::delta {

enum class TypeKind {
  kString,
  kLong,
  kInteger,
  kShort,
  kByte,
  kFloat,
  kDouble,
  kDecimal,
  kBoolean,
  kBinary,
  kDate,
  kTimestamp,
  kTimestampNtz,
  kVoid,
  kVariant,
  kStruct,
  kArray,
  kMap,
};

struct DataType;
using DataTypePtr = std::shared_ptr<const DataType>;

struct StructField {
  std::string name;
  DataTypePtr type;
  bool nullable = true;
  /// Column metadata: key -> the value's JSON text (e.g. "\"col-5f42\"" or "4").
  std::map<std::string, std::string> metadata{};
  /// delta.columnMapping.physicalName, when present.
  std::optional<std::string> physical_name{};
  /// delta.columnMapping.id, when present (the Parquet field_id in id mode).
  std::optional<int32_t> field_id{};

  const std::string& PhysicalName() const { return physical_name ? *physical_name : name; }
};

struct DataType {
  TypeKind kind = TypeKind::kString;
  int precision = 0;  ///< decimal only
  int scale = 0;      ///< decimal only
  std::vector<StructField> fields;  ///< struct only
  DataTypePtr element;              ///< array only
  bool contains_null = true;        ///< array only
  DataTypePtr key;                  ///< map only
  DataTypePtr value;                ///< map only
  bool value_contains_null = true;  ///< map only

  bool IsPrimitive() const { return kind != TypeKind::kStruct && kind != TypeKind::kArray && kind != TypeKind::kMap; }
  /// The field named `name` (exact match), or nullptr.
  const StructField* FindField(std::string_view name) const;
};

/// Makes a primitive type ("long", "string", "decimal(10,2)", ...). Throws InvalidArgument for unknown names.
DataTypePtr PrimitiveType(std::string_view name);
DataTypePtr MakeStruct(std::vector<StructField> fields);
DataTypePtr MakeArray(DataTypePtr element, bool contains_null = true);
DataTypePtr MakeMap(DataTypePtr key, DataTypePtr value, bool value_contains_null = true);

/// The Delta name of a type: "long", "decimal(10,2)", "struct", "array", "map".
std::string TypeName(const DataType& type);

/// Parses a schemaString. `context` (e.g. "table /t version 4") prefixes error messages. Throws CorruptDataError.
DataTypePtr ParseSchema(std::string_view json, const std::string& context);
/// Serializes a schema back to its JSON form (what a writer puts in schemaString).
std::string SchemaToJson(const DataType& schema);

}  // namespace lakerun::delta
