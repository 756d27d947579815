// A Parquet schema: a tree of SchemaNodes and its flattened leaf columns with Dremel levels.
//
//   using namespace lakerun::parquet;
//   Schema schema = Schema::FromFields({
//       Leaf("id", PhysicalType::kInt64),
//       Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()),
//       ListOf("pixels", Leaf("element", PhysicalType::kFloat)),          // 3-level LIST<float>
//       MapOf("tags", Leaf("key", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String()),
//             Leaf("value", PhysicalType::kInt32, Repetition::kOptional)),
//   });
//   schema.column(2).dotted_path == "pixels.list.element"; schema.column(2).max_rep_level == 1
//
// Readers never rely on the names "list", "element", "key_value", "item", "entries": LIST and MAP shapes are
// recognised structurally, following the LIST backward-compatibility rules of LogicalTypes.md (see IsListNode).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakerun/format/parquet/types.h"

namespace lakerun::parquet {

struct SchemaNode {
  std::string name;
  Repetition repetition = Repetition::kRequired;
  bool is_group = false;
  PhysicalType physical_type = PhysicalType::kInt32;  ///< leaves only
  int32_t type_length = 0;                            ///< FIXED_LEN_BYTE_ARRAY width; 0 otherwise
  LogicalType logical_type;       ///< resolved: the LogicalType, or one derived from converted_type
  ConvertedType converted_type = ConvertedType::kNone;  ///< as stored (or as the writer will store it)
  std::optional<int32_t> field_id;
  std::vector<SchemaNode> children;  ///< groups only

  // Filled in by Schema (zero until then).
  int16_t max_def_level = 0;  ///< definition level of this node when it is present
  int16_t max_rep_level = 0;  ///< repetition level of this node
  int column_index = -1;      ///< leaves: index into Schema::columns()

  bool is_leaf() const { return !is_group; }
};

/// One leaf column of the flattened schema.
struct ColumnDescriptor {
  int index = 0;
  std::vector<std::string> path;  ///< names from the root's child down to the leaf
  std::string dotted_path;        ///< path joined with '.'
  PhysicalType physical_type = PhysicalType::kInt32;
  int32_t type_length = 0;
  LogicalType logical_type;
  ConvertedType converted_type = ConvertedType::kNone;
  Repetition repetition = Repetition::kRequired;  ///< of the leaf node itself
  int16_t max_def_level = 0;
  int16_t max_rep_level = 0;
  std::optional<int32_t> field_id;
};

class Schema {
 public:
  Schema();
  /// Validates `root` (a group; leaves have a physical type, FLBA a positive type_length, no group without
  /// children is a leaf...), computes levels and the flattened columns. Throws InvalidArgument (CorruptDataError
  /// when called by the reader, which names the file).
  static Schema FromRoot(SchemaNode root);
  /// FromRoot of a required group named "schema" holding `fields`.
  static Schema FromFields(std::vector<SchemaNode> fields);

  const SchemaNode& root() const { return *root_; }
  int num_columns() const { return static_cast<int>(columns_.size()); }
  const ColumnDescriptor& column(int i) const { return columns_.at(static_cast<size_t>(i)); }
  const std::vector<ColumnDescriptor>& columns() const { return columns_; }
  /// The leaf with this dotted path, or std::nullopt.
  std::optional<int> FindColumn(std::string_view dotted_path) const;
  /// Leaves under the top-level field (or any node) with this dotted path, in column order; empty if none.
  std::vector<int> ColumnsUnder(std::string_view dotted_path) const;
  /// The node at a dotted path ("" is the root), or nullptr.
  const SchemaNode* FindNode(std::string_view dotted_path) const;
  /// The leaf node of column `i`.
  const SchemaNode& leaf(int i) const { return *leaves_.at(static_cast<size_t>(i)); }

  /// Multi-line indented rendering: "  optional group tags (MAP)" / "    required binary key (STRING)".
  std::string ToString() const;

 private:
  std::shared_ptr<SchemaNode> root_;  // shared so copies of a Schema stay cheap and leaf pointers stay valid
  std::vector<ColumnDescriptor> columns_;
  std::vector<const SchemaNode*> leaves_;
};

// Builders for writer schemas. Converted types are filled in from the logical type when one corresponds.
SchemaNode Leaf(std::string name, PhysicalType type, Repetition repetition = Repetition::kRequired,
                LogicalType logical = {}, int32_t type_length = 0);
SchemaNode Group(std::string name, std::vector<SchemaNode> children, Repetition repetition = Repetition::kRequired,
                 LogicalType logical = {});
/// Standard 3-level LIST: `<repetition> group name (LIST) { repeated group list { element } }`. The element node is
/// renamed "element".
SchemaNode ListOf(std::string name, SchemaNode element, Repetition repetition = Repetition::kOptional);
/// Standard MAP: `<repetition> group name (MAP) { repeated group key_value { required key; value } }`.
SchemaNode MapOf(std::string name, SchemaNode key, SchemaNode value, Repetition repetition = Repetition::kOptional);

/// Whether a group is a LIST by the spec's rules (annotated LIST, or legacy LIST-annotated 2-level forms). When it
/// is, `*element` receives the node that holds one element: the repeated child itself (2-level forms: a repeated
/// primitive, a repeated group with several fields, or one named "array"/"<name>_tuple") or that child's only field.
bool IsListNode(const SchemaNode& node, const SchemaNode** element, bool* element_is_repeated_node);
/// Whether a group is a MAP (annotated MAP or MAP_KEY_VALUE, or its repeated child is annotated MAP_KEY_VALUE) with
/// a repeated key/value group of one or two fields; `*key_value` receives that repeated group.
bool IsMapNode(const SchemaNode& node, const SchemaNode** key_value);

}  // namespace lakerun::parquet
