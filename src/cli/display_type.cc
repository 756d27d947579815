#include "cli/display_type.h"

namespace lakerun::cli {
namespace {

using Kind = DisplayType::Kind;

DisplayType Of(Kind kind) {
  DisplayType t;
  t.kind = kind;
  return t;
}

int64_t UnitsPerSecond(parquet::TimeUnit unit) {
  switch (unit) {
    case parquet::TimeUnit::kMillis: return 1000;
    case parquet::TimeUnit::kMicros: return 1000000;
    case parquet::TimeUnit::kNanos: return 1000000000;
  }
  return 1000000;
}

DisplayType OfLeaf(const parquet::SchemaNode& leaf) {
  using L = parquet::LogicalType::Kind;
  const parquet::LogicalType& l = leaf.logical_type;
  if (leaf.physical_type == parquet::PhysicalType::kInt96) return Of(Kind::kInt96);
  DisplayType t;
  switch (l.kind) {
    case L::kDate: return Of(Kind::kDate);
    case L::kTime:
    case L::kTimestamp:
      t.kind = l.kind == L::kTime ? Kind::kTime : Kind::kTimestamp;
      t.units_per_second = UnitsPerSecond(l.unit);
      t.utc = l.adjusted_to_utc;
      return t;
    case L::kDecimal:
      t.kind = Kind::kDecimal;
      t.scale = l.scale;
      return t;
    case L::kUuid: return Of(Kind::kUuid);
    case L::kFloat16: return Of(Kind::kFloat16);
    case L::kInteger:
      return Of(!l.is_signed && l.bit_width == 64 ? Kind::kUnsigned64 : Kind::kPlain);
    default: return Of(Kind::kPlain);
  }
}

DisplayType ListOf(DisplayType element) {
  DisplayType t = Of(Kind::kList);
  t.children.push_back(std::move(element));
  return t;
}

DisplayType OfContent(const parquet::SchemaNode& node);

// A node as a field of its parent: repeated nodes are lists of their contents.
DisplayType OfField(const parquet::SchemaNode& node) {
  if (node.repetition == parquet::Repetition::kRepeated) return ListOf(OfContent(node));
  return OfContent(node);
}

// One occurrence of a node (what record assembly reads for a present node).
DisplayType OfContent(const parquet::SchemaNode& node) {
  if (node.is_leaf()) return OfLeaf(node);
  const parquet::SchemaNode* element = nullptr;
  bool element_is_repeated = false;
  if (parquet::IsListNode(node, &element, &element_is_repeated)) {
    return ListOf(element_is_repeated ? OfContent(node.children[0]) : OfField(*element));
  }
  const parquet::SchemaNode* key_value = nullptr;
  if (parquet::IsMapNode(node, &key_value)) {
    DisplayType t = Of(Kind::kMap);
    t.children.push_back(OfField(key_value->children[0]));
    t.children.push_back(key_value->children.size() > 1 ? OfField(key_value->children[1]) : Of(Kind::kPlain));
    return t;
  }
  DisplayType t = Of(Kind::kStruct);
  for (const auto& child : node.children) t.fields.emplace_back(child.name, OfField(child));
  return t;
}

}  // namespace

const DisplayType& DisplayType::Field(const std::string& name) const {
  static const DisplayType kPlain;
  for (const auto& [field, type] : fields) {
    if (field == name) return type;
  }
  return kPlain;
}

DisplayType DisplayTypeOf(const parquet::SchemaNode& node) { return OfField(node); }

DisplayType DisplayTypeOf(const delta::DataType& type) {
  using delta::TypeKind;
  DisplayType t;
  switch (type.kind) {
    case TypeKind::kDate: return Of(Kind::kDate);
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampNtz:
      t.kind = Kind::kTimestamp;
      t.units_per_second = 1000000;  // a scan returns microseconds whatever the file stores
      t.utc = type.kind == TypeKind::kTimestamp;
      return t;
    case TypeKind::kDecimal:
      t.kind = Kind::kDecimal;
      t.scale = type.scale;
      return t;
    case TypeKind::kStruct:
      t.kind = Kind::kStruct;
      for (const auto& f : type.fields) t.fields.emplace_back(f.name, DisplayTypeOf(*f.type));
      return t;
    case TypeKind::kArray: return ListOf(DisplayTypeOf(*type.element));
    case TypeKind::kMap:
      t.kind = Kind::kMap;
      t.children.push_back(DisplayTypeOf(*type.key));
      t.children.push_back(DisplayTypeOf(*type.value));
      return t;
    default: return t;
  }
}

}  // namespace lakerun::cli
