// Dremel record shredding: struct Values (one per row) -> one ColumnData per leaf with definition and repetition
// levels. The inverse of record_assembler.cc.
#include <cstring>
#include <limits>
#include <unordered_map>

#include "format/parquet/value_decoders.h"
#include "lakerun/base/error.h"
#include "lakerun/format/parquet/writer.h"

namespace lakerun::parquet {
namespace {

class Shredder {
 public:
  explicit Shredder(const Schema& schema) : schema_(schema) {
    for (const auto& c : schema.columns()) {
      ColumnData d(c.physical_type, c.type_length);
      if (c.max_def_level > 0) d.set_def_levels({}, c.max_def_level);
      if (c.max_rep_level > 0) d.set_rep_levels({}, c.max_rep_level);
      columns_.push_back(std::move(d));
    }
    Index(schema.root());
  }

  void AddRow(const Value& row, int64_t row_index) {
    row_ = row_index;
    if (row.kind() != Value::Kind::kStruct) Fail("", StrCat("is a ", row.ToString(), ", expected a struct"));
    WriteFields(schema_.root(), row, 0);
  }

  std::vector<ColumnData> Take() { return std::move(columns_); }

 private:
  [[noreturn]] void Fail(const std::string& field, const std::string& what) const {
    LAKERUN_THROW(InvalidArgument, "row ", row_, ": field '", field, "' ", what);
  }

  void Index(const SchemaNode& node) {
    auto& leaves = leaves_[&node];
    if (node.is_leaf()) {
      leaves.push_back(node.column_index);
      return;
    }
    for (const auto& c : node.children) {
      Index(c);
      leaves.insert(leaves.end(), leaves_[&c].begin(), leaves_[&c].end());
    }
  }

  void PushLevels(int c, int16_t def, int16_t rep) {
    ColumnData& d = columns_[static_cast<size_t>(c)];
    if (d.max_def_level() > 0) d.mutable_def_levels().push_back(def);
    if (d.max_rep_level() > 0) d.mutable_rep_levels().push_back(rep);
  }

  void WriteNull(const SchemaNode& node, int16_t rep) {
    const int16_t def = node.repetition == Repetition::kRequired ? node.max_def_level : node.max_def_level - 1;
    for (int c : leaves_[&node]) PushLevels(c, def, rep);
  }

  void WriteNode(const SchemaNode& node, const Value* v, int16_t rep) {
    if (v == nullptr || v->is_null()) {
      if (node.repetition == Repetition::kRequired) Fail(node.name, "is required but null or missing");
      WriteNull(node, rep);
      return;
    }
    WriteContent(node, *v, rep);
  }

  template <typename Fn>
  void WriteRepeated(const SchemaNode& r, const std::vector<Value>& items, size_t stride, int16_t rep, Fn&& element) {
    if (items.empty()) {
      WriteNull(r, rep);
      return;
    }
    for (size_t i = 0; i < items.size(); i += stride) element(i, i == 0 ? rep : r.max_rep_level);
  }

  void WriteFields(const SchemaNode& node, const Value& v, int16_t rep) {
    for (const auto& child : node.children) {
      const Value* fv = v.Field(child.name);
      if (child.repetition == Repetition::kRepeated) {
        static const std::vector<Value> kEmpty;
        if (fv != nullptr && !fv->is_null() && fv->kind() != Value::Kind::kList) {
          Fail(child.name, StrCat("is repeated, expected a list, got ", fv->ToString()));
        }
        const auto& items = fv == nullptr || fv->is_null() ? kEmpty : fv->children();
        WriteRepeated(child, items, 1, rep, [&](size_t i, int16_t r) { WriteContent(child, items[i], r); });
      } else {
        WriteNode(child, fv, rep);
      }
    }
  }

  void WriteContent(const SchemaNode& node, const Value& v, int16_t rep) {
    if (node.is_leaf()) {
      AppendLeaf(node, v);
      PushLevels(node.column_index, node.max_def_level, rep);
      return;
    }
    const SchemaNode* element = nullptr;
    bool element_is_repeated = false;
    if (IsListNode(node, &element, &element_is_repeated)) {
      if (v.kind() != Value::Kind::kList) Fail(node.name, StrCat("is a LIST, got ", v.ToString()));
      const SchemaNode& r = node.children[0];
      WriteRepeated(r, v.children(), 1, rep, [&](size_t i, int16_t rr) {
        if (element_is_repeated) {
          if (v.children()[i].is_null()) Fail(node.name, "has a null element but its elements are required");
          WriteContent(r, v.children()[i], rr);
        } else {
          WriteNode(*element, &v.children()[i], rr);
        }
      });
      return;
    }
    const SchemaNode* kv = nullptr;
    if (IsMapNode(node, &kv)) {
      if (v.kind() != Value::Kind::kMap) Fail(node.name, StrCat("is a MAP, got ", v.ToString()));
      WriteRepeated(*kv, v.children(), 2, rep, [&](size_t i, int16_t rr) {
        WriteNode(kv->children[0], &v.children()[i], rr);
        if (kv->children.size() > 1) WriteNode(kv->children[1], &v.children()[i + 1], rr);
      });
      return;
    }
    if (v.kind() != Value::Kind::kStruct) Fail(node.name, StrCat("is a group, expected a struct, got ", v.ToString()));
    WriteFields(node, v, rep);
  }

  void AppendLeaf(const SchemaNode& node, const Value& v) {
    ColumnData& d = columns_[static_cast<size_t>(node.column_index)];
    Buffer& buf = d.mutable_value_buffer();
    using K = Value::Kind;
    auto want = [&](bool ok, const char* what) {
      if (!ok) Fail(node.name, StrCat("is ", ToString(node.physical_type), ", expected ", what, ", got ", v.ToString()));
    };
    switch (node.physical_type) {
      case PhysicalType::kBoolean: {
        want(v.kind() == K::kBool, "a bool");
        uint8_t b = v.as_bool();
        buf.Append(&b, 1);
        break;
      }
      case PhysicalType::kInt32: {
        want(v.kind() == K::kInt, "an integer");
        const int64_t i = v.as_int();
        const bool is_unsigned = node.logical_type.kind == LogicalType::Kind::kInteger && !node.logical_type.is_signed;
        if (is_unsigned ? (i < 0 || i > std::numeric_limits<uint32_t>::max())
                        : (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max())) {
          Fail(node.name, StrCat("value ", i, " does not fit INT32"));
        }
        const int32_t x = static_cast<int32_t>(static_cast<uint32_t>(i));
        buf.Append(&x, 4);
        break;
      }
      case PhysicalType::kInt64: {
        want(v.kind() == K::kInt, "an integer");
        const int64_t x = v.as_int();
        buf.Append(&x, 8);
        break;
      }
      case PhysicalType::kFloat: {
        want(v.kind() == K::kFloat || v.kind() == K::kDouble || v.kind() == K::kInt, "a number");
        const float x = static_cast<float>(v.as_double());
        buf.Append(&x, 4);
        break;
      }
      case PhysicalType::kDouble: {
        want(v.kind() == K::kFloat || v.kind() == K::kDouble || v.kind() == K::kInt, "a number");
        const double x = v.as_double();
        buf.Append(&x, 8);
        break;
      }
      case PhysicalType::kByteArray:
        want(v.kind() == K::kString || v.kind() == K::kBytes, "a string or bytes");
        AppendByteArray(&d, v.as_string().data(), v.as_string().size());
        return;  // AppendByteArray counts the value
      case PhysicalType::kInt96:
      case PhysicalType::kFixedLenByteArray: {
        want(v.kind() == K::kString || v.kind() == K::kBytes, "bytes");
        const size_t w = static_cast<size_t>(d.value_width());
        if (v.as_string().size() != w) Fail(node.name, StrCat("needs ", w, " bytes, got ", v.as_string().size()));
        buf.Append(v.as_string().data(), w);
        break;
      }
    }
    d.set_num_values(d.num_values() + 1);
  }

  const Schema& schema_;
  std::vector<ColumnData> columns_;
  std::unordered_map<const SchemaNode*, std::vector<int>> leaves_;
  int64_t row_ = 0;
};

}  // namespace

std::vector<ColumnData> ShredRecords(const Schema& schema, const std::vector<Value>& rows) {
  Shredder s(schema);
  for (size_t i = 0; i < rows.size(); ++i) s.AddRow(rows[i], static_cast<int64_t>(i));
  return s.Take();
}

}  // namespace lakerun::parquet
