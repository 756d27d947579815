#include "table_leaves.h"

#include "lakerun/base/error.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

std::string Join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void AddDeltaLeaves(const delta::DataType& type, delta::ColumnMappingMode mode, TableLeaf leaf,
                    std::vector<TableLeaf>* out) {
  using K = delta::TypeKind;
  switch (type.kind) {
    case K::kStruct:
      for (const delta::StructField& field : type.fields) {
        TableLeaf child = leaf;
        LeafStep step{LeafStep::Kind::kField, field.name, field.name, std::nullopt};
        if (mode != delta::ColumnMappingMode::kNone) step.physical_name = field.PhysicalName();
        if (mode == delta::ColumnMappingMode::kId) step.field_id = field.field_id;
        child.steps.push_back(std::move(step));
        child.name = Join(leaf.name, field.name);
        if (child.top.empty()) child.top = field.name;
        AddDeltaLeaves(*field.type, mode, std::move(child), out);
      }
      return;
    case K::kArray:
      leaf.steps.push_back({LeafStep::Kind::kElement, "", "", std::nullopt});
      AddDeltaLeaves(*type.element, mode, std::move(leaf), out);
      return;
    case K::kMap: {
      TableLeaf key = leaf;
      key.steps.push_back({LeafStep::Kind::kKey, "", "", std::nullopt});
      key.name = Join(leaf.name, "key");
      AddDeltaLeaves(*type.key, mode, std::move(key), out);
      leaf.steps.push_back({LeafStep::Kind::kValue, "", "", std::nullopt});
      leaf.name = Join(leaf.name, "value");
      AddDeltaLeaves(*type.value, mode, std::move(leaf), out);
      return;
    }
    default:
      leaf.table_type = &type;
      out->push_back(std::move(leaf));
  }
}

void AddParquetLeaves(const pq::SchemaNode& node, TableLeaf leaf, std::vector<TableLeaf>* out) {
  if (node.is_leaf()) {
    out->push_back(std::move(leaf));
    return;
  }
  const pq::SchemaNode* element = nullptr;
  const pq::SchemaNode* key_value = nullptr;
  bool element_is_repeated = false;
  if (pq::IsListNode(node, &element, &element_is_repeated)) {
    leaf.steps.push_back({LeafStep::Kind::kElement, "", "", std::nullopt});
    AddParquetLeaves(*element, std::move(leaf), out);
    return;
  }
  if (pq::IsMapNode(node, &key_value)) {
    TableLeaf key = leaf;
    key.steps.push_back({LeafStep::Kind::kKey, "", "", std::nullopt});
    key.name = Join(leaf.name, "key");
    AddParquetLeaves(key_value->children[0], std::move(key), out);
    if (key_value->children.size() == 2) {
      leaf.steps.push_back({LeafStep::Kind::kValue, "", "", std::nullopt});
      leaf.name = Join(leaf.name, "value");
      AddParquetLeaves(key_value->children[1], std::move(leaf), out);
    }
    return;
  }
  for (const pq::SchemaNode& child : node.children) {  // a struct
    TableLeaf next = leaf;
    next.steps.push_back({LeafStep::Kind::kField, child.name, child.name, std::nullopt});
    next.name = Join(leaf.name, child.name);
    if (next.top.empty()) next.top = child.name;
    AddParquetLeaves(child, std::move(next), out);
  }
}

}  // namespace

std::vector<TableLeaf> DeltaLeaves(const delta::DataType& schema, delta::ColumnMappingMode mode) {
  std::vector<TableLeaf> out;
  AddDeltaLeaves(schema, mode, TableLeaf{}, &out);
  return out;
}

std::vector<TableLeaf> ParquetLeaves(const pq::Schema& schema) {
  std::vector<TableLeaf> out;
  AddParquetLeaves(schema.root(), TableLeaf{}, &out);
  return out;
}

std::optional<FileLeaf> ResolveLeaf(const pq::Schema& schema, const TableLeaf& leaf, delta::ColumnMappingMode mode,
                                    std::string* mismatch) {
  const pq::SchemaNode* node = &schema.root();
  std::string path;  // the file's path so far, for messages
  FileLeaf out;
  auto passes = [&out](const pq::SchemaNode& n) {  // records every repeated node on the way down
    if (n.repetition == pq::Repetition::kRepeated) out.list_def_levels.push_back(static_cast<int16_t>(n.max_def_level - 1));
  };
  for (const LeafStep& step : leaf.steps) {
    const pq::SchemaNode* element = nullptr;
    const pq::SchemaNode* key_value = nullptr;
    bool element_is_repeated = false;
    switch (step.kind) {
      case LeafStep::Kind::kField: {
        const pq::SchemaNode* found = nullptr;
        if (node->is_group) {
          for (const pq::SchemaNode& child : node->children) {
            const bool match = mode == delta::ColumnMappingMode::kId && step.field_id
                                   ? child.field_id == step.field_id
                                   : child.name == step.physical_name;
            if (match) {
              found = &child;
              break;
            }
          }
        }
        if (found == nullptr) return std::nullopt;  // the file lacks the field
        node = found;
        path = Join(path, node->name);
        passes(*node);
        break;
      }
      case LeafStep::Kind::kElement:
        if (!pq::IsListNode(*node, &element, &element_is_repeated)) {
          *mismatch = "'" + path + "' is not a list in the file";
          return std::nullopt;
        }
        passes(node->children[0]);
        node = element;
        break;
      case LeafStep::Kind::kKey:
      case LeafStep::Kind::kValue: {
        const size_t index = step.kind == LeafStep::Kind::kKey ? 0 : 1;
        if (!pq::IsMapNode(*node, &key_value) || key_value->children.size() <= index) {
          *mismatch = "'" + path + "' is not a map in the file";
          return std::nullopt;
        }
        passes(*key_value);
        node = &key_value->children[index];
        break;
      }
    }
  }
  if (!node->is_leaf()) {
    *mismatch = "'" + path + "' is a group in the file, not a primitive column";
    return std::nullopt;
  }
  out.column = node->column_index;
  out.repetition = schema.column(node->column_index).max_rep_level;
  LAKERUN_CHECK_AS(CorruptDataError, out.list_def_levels.size() == static_cast<size_t>(out.repetition), path, ": ",
                   out.list_def_levels.size(), " repeated nodes on the path but a repetition level of ",
                   out.repetition);
  return out;
}

}  // namespace lakerun::data
