// A generic, self-describing value: what record assembly produces (one Value per row, a struct of its fields) and
// what the writer's row API shreds. Meant for metadata-sized data (Delta checkpoints, `table head`, tests); bulk
// data goes through ColumnData.
//
// Leaves map from physical types: BOOLEAN -> kBool, INT32/INT64 -> kInt (unsigned INT(64) keeps its bit pattern),
// FLOAT -> kFloat, DOUBLE -> kDouble, BYTE_ARRAY annotated STRING/ENUM/JSON -> kString, other BYTE_ARRAY, INT96
// and FIXED_LEN_BYTE_ARRAY -> kBytes. LIST -> kList, MAP -> kMap, other groups -> kStruct.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lakerun::parquet {

class Value {
 public:
  enum class Kind : int8_t { kNull, kBool, kInt, kFloat, kDouble, kString, kBytes, kList, kStruct, kMap };

  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool v);
  static Value Int(int64_t v);
  static Value Float(float v);
  static Value Double(double v);
  static Value String(std::string v);
  static Value Bytes(std::string v);
  static Value List(std::vector<Value> items);
  /// Fields in schema order.
  static Value Struct(std::vector<std::pair<std::string, Value>> fields);
  static Value Map(std::vector<std::pair<Value, Value>> entries);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  /// kFloat and kDouble (and kInt, converted).
  double as_double() const;
  /// kString and kBytes.
  const std::string& as_string() const { return bytes_; }
  /// kList: the items. kStruct: the field values. kMap: keys and values interleaved (k0, v0, k1, v1, ...).
  const std::vector<Value>& children() const { return children_; }
  std::vector<Value>& mutable_children() { return children_; }
  /// kStruct: field names, parallel to children().
  const std::vector<std::string>& field_names() const { return names_; }
  size_t map_size() const { return children_.size() / 2; }
  const Value& map_key(size_t i) const { return children_.at(2 * i); }
  const Value& map_value(size_t i) const { return children_.at(2 * i + 1); }
  /// kStruct: the field with this name, or nullptr.
  const Value* Field(const std::string& name) const;

  /// JSON-like text: null, true, 42, 1.5, "text" (escaped), b"\x00\x01" for bytes, [1, 2], {"a": 1},
  /// {"k" => 1} for maps (keys need not be strings).
  std::string ToString() const;

  bool operator==(const Value& o) const;
  bool operator!=(const Value& o) const { return !(*this == o); }

 private:
  Kind kind_ = Kind::kNull;
  int64_t int_ = 0;
  double double_ = 0;
  std::string bytes_;
  std::vector<Value> children_;
  std::vector<std::string> names_;
};

/// Total order used by statistics and predicates for two non-null leaves of the same kind: numbers numerically,
/// strings and bytes as unsigned bytes. Returns <0, 0, >0. Throws InvalidArgument for incomparable kinds.
int CompareValues(const Value& a, const Value& b);

}  // namespace lakerun::parquet
