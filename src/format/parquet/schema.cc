#include "lakerun/format/parquet/schema.h"

#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

constexpr int kMaxSchemaDepth = 100;

bool IsListAnnotated(const SchemaNode& n) {
  return n.logical_type.kind == LogicalType::Kind::kList || n.converted_type == ConvertedType::kList;
}

bool IsMapAnnotated(const SchemaNode& n) {
  return n.logical_type.kind == LogicalType::Kind::kMap || n.converted_type == ConvertedType::kMap ||
         n.converted_type == ConvertedType::kMapKeyValue;
}

// Fills levels, column indexes and descriptors; validates the shape.
void Walk(SchemaNode& node, int16_t def, int16_t rep, std::vector<std::string>& path, int depth,
          std::vector<ColumnDescriptor>& columns, std::vector<SchemaNode*>& leaves) {
  if (depth > kMaxSchemaDepth) LAKERUN_THROW(InvalidArgument, "schema nesting deeper than ", kMaxSchemaDepth);
  if (depth > 0) {
    if (node.repetition != Repetition::kRequired) ++def;
    if (node.repetition == Repetition::kRepeated) ++rep;
  }
  if (def > 1000 || rep > 1000) LAKERUN_THROW(InvalidArgument, "schema levels too deep at '", node.name, "'");
  node.max_def_level = def;
  node.max_rep_level = rep;
  if (node.is_group) {
    for (auto& child : node.children) {
      path.push_back(child.name);
      Walk(child, def, rep, path, depth + 1, columns, leaves);
      path.pop_back();
    }
    return;
  }
  if (node.physical_type == PhysicalType::kFixedLenByteArray && node.type_length <= 0) {
    LAKERUN_THROW(InvalidArgument, "FIXED_LEN_BYTE_ARRAY column '", node.name, "' needs a positive type_length, got ",
                  node.type_length);
  }
  if (static_cast<int>(node.physical_type) < 0 || static_cast<int>(node.physical_type) > 7) {
    LAKERUN_THROW(InvalidArgument, "column '", node.name, "' has unknown physical type ",
                  static_cast<int>(node.physical_type));
  }
  ColumnDescriptor c;
  c.index = static_cast<int>(columns.size());
  c.path = path;
  for (size_t i = 0; i < path.size(); ++i) c.dotted_path += (i ? "." : "") + path[i];
  c.physical_type = node.physical_type;
  c.type_length = node.physical_type == PhysicalType::kFixedLenByteArray ? node.type_length : 0;
  c.logical_type = node.logical_type;
  c.converted_type = node.converted_type;
  c.repetition = node.repetition;
  c.max_def_level = def;
  c.max_rep_level = rep;
  c.field_id = node.field_id;
  node.column_index = c.index;
  columns.push_back(std::move(c));
  leaves.push_back(&node);
}

ConvertedType ConvertedFor(const LogicalType& t, PhysicalType physical) {
  using K = LogicalType::Kind;
  switch (t.kind) {
    case K::kString: return ConvertedType::kUtf8;
    case K::kMap: return ConvertedType::kMap;
    case K::kList: return ConvertedType::kList;
    case K::kEnum: return ConvertedType::kEnum;
    case K::kDecimal: return ConvertedType::kDecimal;
    case K::kDate: return ConvertedType::kDate;
    case K::kJson: return ConvertedType::kJson;
    case K::kBson: return ConvertedType::kBson;
    case K::kTime:
      if (t.unit == TimeUnit::kMillis) return ConvertedType::kTimeMillis;
      if (t.unit == TimeUnit::kMicros) return ConvertedType::kTimeMicros;
      return ConvertedType::kNone;
    case K::kTimestamp:
      // TIMESTAMP_* converted types imply UTC adjustment.
      if (!t.adjusted_to_utc) return ConvertedType::kNone;
      if (t.unit == TimeUnit::kMillis) return ConvertedType::kTimestampMillis;
      if (t.unit == TimeUnit::kMicros) return ConvertedType::kTimestampMicros;
      return ConvertedType::kNone;
    case K::kInteger: {
      int base = t.is_signed ? static_cast<int>(ConvertedType::kInt8) : static_cast<int>(ConvertedType::kUint8);
      int step = t.bit_width == 8 ? 0 : t.bit_width == 16 ? 1 : t.bit_width == 32 ? 2 : 3;
      return static_cast<ConvertedType>(base + step);
    }
    default: return ConvertedType::kNone;
  }
  (void)physical;
}

void Render(const SchemaNode& n, int indent, std::string* out) {
  out->append(static_cast<size_t>(indent) * 2, ' ');
  *out += ToString(n.repetition);
  if (n.is_group) {
    *out += " group ";
  } else {
    *out += " " + ToString(n.physical_type);
    if (n.physical_type == PhysicalType::kFixedLenByteArray) *out += "(" + std::to_string(n.type_length) + ")";
    *out += " ";
  }
  *out += n.name;
  std::string annotation = n.logical_type.ToString();
  if (annotation.empty() && n.converted_type != ConvertedType::kNone) annotation = ToString(n.converted_type);
  if (!annotation.empty()) *out += " (" + annotation + ")";
  if (n.field_id) *out += " = " + std::to_string(*n.field_id);
  *out += "\n";
  for (const auto& c : n.children) Render(c, indent + 1, out);
}

}  // namespace

Schema::Schema() : root_(std::make_shared<SchemaNode>()) {
  root_->name = "schema";
  root_->is_group = true;
}

Schema Schema::FromRoot(SchemaNode root) {
  LAKERUN_CHECK(root.is_group, "the schema root '", root.name, "' must be a group");
  Schema s;
  s.root_ = std::make_shared<SchemaNode>(std::move(root));
  std::vector<std::string> path;
  std::vector<SchemaNode*> leaves;
  Walk(*s.root_, 0, 0, path, 0, s.columns_, leaves);
  s.leaves_.assign(leaves.begin(), leaves.end());
  return s;
}

Schema Schema::FromFields(std::vector<SchemaNode> fields) { return FromRoot(Group("schema", std::move(fields))); }

std::optional<int> Schema::FindColumn(std::string_view dotted_path) const {
  for (const auto& c : columns_) {
    if (c.dotted_path == dotted_path) return c.index;
  }
  return std::nullopt;
}

std::vector<int> Schema::ColumnsUnder(std::string_view dotted_path) const {
  std::vector<int> out;
  for (const auto& c : columns_) {
    if (dotted_path.empty() || c.dotted_path == dotted_path ||
        (c.dotted_path.size() > dotted_path.size() && c.dotted_path.compare(0, dotted_path.size(), dotted_path) == 0 &&
         c.dotted_path[dotted_path.size()] == '.')) {
      out.push_back(c.index);
    }
  }
  return out;
}

const SchemaNode* Schema::FindNode(std::string_view dotted_path) const {
  const SchemaNode* node = root_.get();
  if (dotted_path.empty()) return node;
  size_t start = 0;
  while (start <= dotted_path.size()) {
    size_t dot = dotted_path.find('.', start);
    std::string_view part = dotted_path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    const SchemaNode* next = nullptr;
    for (const auto& c : node->children) {
      if (c.name == part) {
        next = &c;
        break;
      }
    }
    if (next == nullptr) return nullptr;
    node = next;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return node;
}

std::string Schema::ToString() const {
  std::string out;
  Render(*root_, 0, &out);
  return out;
}

SchemaNode Leaf(std::string name, PhysicalType type, Repetition repetition, LogicalType logical, int32_t type_length) {
  SchemaNode n;
  n.name = std::move(name);
  n.repetition = repetition;
  n.is_group = false;
  n.physical_type = type;
  n.logical_type = logical;
  if (type == PhysicalType::kFixedLenByteArray && type_length == 0) {
    if (logical.kind == LogicalType::Kind::kUuid) type_length = 16;
    if (logical.kind == LogicalType::Kind::kFloat16) type_length = 2;
  }
  n.type_length = type_length;
  n.converted_type = ConvertedFor(logical, type);
  return n;
}

SchemaNode Group(std::string name, std::vector<SchemaNode> children, Repetition repetition, LogicalType logical) {
  SchemaNode n;
  n.name = std::move(name);
  n.repetition = repetition;
  n.is_group = true;
  n.logical_type = logical;
  n.converted_type = ConvertedFor(logical, PhysicalType::kInt32);
  n.children = std::move(children);
  return n;
}

SchemaNode ListOf(std::string name, SchemaNode element, Repetition repetition) {
  element.name = "element";
  SchemaNode list = Group("list", {std::move(element)}, Repetition::kRepeated);
  return Group(std::move(name), {std::move(list)}, repetition, LogicalType::List());
}

SchemaNode MapOf(std::string name, SchemaNode key, SchemaNode value, Repetition repetition) {
  key.name = "key";
  key.repetition = Repetition::kRequired;
  value.name = "value";
  SchemaNode kv = Group("key_value", {std::move(key), std::move(value)}, Repetition::kRepeated);
  return Group(std::move(name), {std::move(kv)}, repetition, LogicalType::Map());
}

bool IsListNode(const SchemaNode& node, const SchemaNode** element, bool* element_is_repeated_node) {
  if (!node.is_group || !IsListAnnotated(node) || node.children.size() != 1) return false;
  const SchemaNode& r = node.children[0];
  if (r.repetition != Repetition::kRepeated) return false;
  bool two_level = !r.is_group || r.children.size() != 1 || r.name == "array" || r.name == node.name + "_tuple" ||
                   r.children[0].repetition == Repetition::kRepeated;
  if (two_level) {
    *element = &r;
    *element_is_repeated_node = true;
  } else {
    *element = &r.children[0];
    *element_is_repeated_node = false;
  }
  return true;
}

bool IsMapNode(const SchemaNode& node, const SchemaNode** key_value) {
  if (!node.is_group || node.children.size() != 1) return false;
  const SchemaNode& kv = node.children[0];
  bool annotated = IsMapAnnotated(node) || kv.converted_type == ConvertedType::kMapKeyValue;
  if (!annotated || kv.repetition != Repetition::kRepeated || !kv.is_group) return false;
  if (kv.children.empty() || kv.children.size() > 2) return false;
  *key_value = &kv;
  return true;
}

}  // namespace lakerun::parquet
