// Dremel record assembly: leaf columns (values + definition/repetition levels) -> one struct Value per row.
//
// A node's presence is read from the levels of its first selected leaf: every leaf below a node that is null (or an
// empty list) has exactly one level entry for it, with a definition level below the node's. LIST and MAP shapes are
// recognised structurally (IsListNode / IsMapNode), never by field names.
#include <unordered_map>

#include "format/parquet/leaf_value.h"
#include "format/parquet/leading_records.h"
#include "lakerun/base/error.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::parquet {
namespace {

class Assembler {
 public:
  Assembler(const Schema& schema, const std::vector<int>& column_indexes, const std::vector<ColumnData>& columns)
      : schema_(schema), cursors_(static_cast<size_t>(schema.num_columns())) {
    LAKERUN_CHECK(column_indexes.size() == columns.size(), "AssembleRecords: ", column_indexes.size(),
                  " column indexes for ", columns.size(), " columns");
    for (size_t i = 0; i < columns.size(); ++i) {
      const int c = column_indexes[i];
      LAKERUN_CHECK(c >= 0 && c < schema.num_columns(), "AssembleRecords: column index ", c, " out of range");
      Cursor& cur = cursors_[static_cast<size_t>(c)];
      cur.data = &columns[i];
      cur.desc = &schema.column(c);
      cur.slots = columns[i].num_slots();
      if (cur.desc->max_def_level > 0 && columns[i].def_levels().size() != static_cast<size_t>(cur.slots)) {
        Fail(*cur.desc, "definition levels missing");
      }
      if (cur.desc->max_rep_level > 0 && columns[i].rep_levels().size() != static_cast<size_t>(cur.slots)) {
        Fail(*cur.desc, StrCat("has ", columns[i].rep_levels().size(), " repetition levels for ", cur.slots,
                               " slots"));
      }
    }
    Index(schema.root());
  }

  Value ReadRow(const std::vector<int>& fields) {
    std::vector<std::pair<std::string, Value>> out;
    const SchemaNode& root = schema_.root();
    for (int f : fields) {
      const SchemaNode& node = root.children.at(static_cast<size_t>(f));
      const int c = First(node);
      if (c < 0) continue;
      if (PeekRep(c) != 0) Fail(schema_.column(c), "a row does not start at repetition level 0");
      if (node.repetition == Repetition::kRepeated) {
        out.emplace_back(node.name, Value::List(ReadRepeated(node, [&] { return ReadContent(node); })));
      } else {
        out.emplace_back(node.name, ReadNode(node));
      }
    }
    return Value::Struct(std::move(out));
  }

  void CheckConsumed() const {
    for (const Cursor& c : cursors_) {
      if (c.data == nullptr) continue;
      if (c.slot != c.slots || c.value != c.data->num_values()) {
        Fail(*c.desc, StrCat("has ", c.slots - c.slot, " level entries and ", c.data->num_values() - c.value,
                             " values left after the last row"));
      }
    }
  }

 private:
  struct Cursor {
    const ColumnData* data = nullptr;
    const ColumnDescriptor* desc = nullptr;
    int64_t slots = 0;
    int64_t slot = 0;
    int64_t value = 0;
  };

  [[noreturn]] static void Fail(const ColumnDescriptor& d, const std::string& what) {
    LAKERUN_THROW(CorruptDataError, "record assembly: column '", d.dotted_path, "' ", what);
  }

  // Records, for every node, its first selected leaf and all its selected leaves.
  void Index(const SchemaNode& node) {
    std::vector<int>& leaves = leaves_[&node];
    if (node.is_leaf()) {
      if (cursors_[static_cast<size_t>(node.column_index)].data != nullptr) leaves.push_back(node.column_index);
      return;
    }
    for (const auto& child : node.children) {
      Index(child);
      const auto& sub = leaves_[&child];
      leaves.insert(leaves.end(), sub.begin(), sub.end());
    }
  }

  int First(const SchemaNode& node) const {
    const auto& leaves = leaves_.at(&node);
    return leaves.empty() ? -1 : leaves.front();
  }

  Cursor& At(int c) {
    Cursor& cur = cursors_[static_cast<size_t>(c)];
    if (cur.slot >= cur.slots) Fail(*cur.desc, StrCat("ends after ", cur.slots, " level entries, more rows need it"));
    return cur;
  }

  int16_t PeekDef(int c) {
    Cursor& cur = At(c);
    return cur.desc->max_def_level > 0 ? cur.data->def_levels()[static_cast<size_t>(cur.slot)] : 0;
  }

  int16_t PeekRep(int c) {
    Cursor& cur = At(c);
    return cur.desc->max_rep_level > 0 ? cur.data->rep_levels()[static_cast<size_t>(cur.slot)] : 0;
  }

  // Consumes the one level entry every selected leaf below `node` has for a null (or empty) `node`.
  void SkipNull(const SchemaNode& node) {
    for (int c : leaves_.at(&node)) {
      Cursor& cur = At(c);
      if (cur.desc->max_def_level > 0 && cur.data->def_levels()[static_cast<size_t>(cur.slot)] >= node.max_def_level) {
        Fail(*cur.desc, StrCat("level entry ", cur.slot, " disagrees with column '",
                               schema_.column(First(node)).dotted_path, "' about a null"));
      }
      ++cur.slot;
    }
  }

  // One occurrence of a non-repeated node.
  Value ReadNode(const SchemaNode& node) {
    const int c = First(node);
    const int16_t d = PeekDef(c);
    if (d < node.max_def_level) {
      if (node.repetition == Repetition::kRequired) {
        Fail(schema_.column(c), StrCat("has definition level ", d, " below required field '", node.name, "'"));
      }
      SkipNull(node);
      return Value::Null();
    }
    return ReadContent(node);
  }

  // A node known to be present (for repeated nodes: one element).
  Value ReadContent(const SchemaNode& node) {
    if (node.is_leaf()) {
      Cursor& cur = At(node.column_index);
      const int16_t d = PeekDef(node.column_index);
      if (d != cur.desc->max_def_level) Fail(*cur.desc, StrCat("has definition level ", d, " for a present value"));
      if (cur.value >= cur.data->num_values()) {
        Fail(*cur.desc, StrCat("has only ", cur.data->num_values(), " values for its definition levels"));
      }
      std::string_view bytes = cur.data->bytes_at(cur.value);
      ++cur.value;
      ++cur.slot;
      return LeafToValue(cur.desc->physical_type, cur.desc->logical_type, cur.desc->converted_type, bytes);
    }
    const SchemaNode* element = nullptr;
    bool element_is_repeated = false;
    if (IsListNode(node, &element, &element_is_repeated)) {
      const SchemaNode& r = node.children[0];
      return Value::List(ReadRepeated(r, [&] { return element_is_repeated ? ReadContent(r) : ReadNode(*element); }));
    }
    const SchemaNode* kv = nullptr;
    if (IsMapNode(node, &kv)) {
      std::vector<Value> flat = ReadRepeated(*kv, [&] {
        const SchemaNode& key = kv->children[0];
        Value k = First(key) >= 0 ? ReadNode(key) : Value::Null();
        Value v;
        if (kv->children.size() > 1 && First(kv->children[1]) >= 0) v = ReadNode(kv->children[1]);
        return Value::List({std::move(k), std::move(v)});
      });
      std::vector<std::pair<Value, Value>> entries;
      entries.reserve(flat.size());
      for (auto& e : flat) entries.emplace_back(std::move(e.mutable_children()[0]), std::move(e.mutable_children()[1]));
      return Value::Map(std::move(entries));
    }
    std::vector<std::pair<std::string, Value>> fields;
    for (const auto& child : node.children) {
      if (First(child) < 0) continue;
      if (child.repetition == Repetition::kRepeated) {
        fields.emplace_back(child.name, Value::List(ReadRepeated(child, [&] { return ReadContent(child); })));
      } else {
        fields.emplace_back(child.name, ReadNode(child));
      }
    }
    return Value::Struct(std::move(fields));
  }

  // All elements of repeated node `r` in the current parent occurrence.
  template <typename Fn>
  std::vector<Value> ReadRepeated(const SchemaNode& r, Fn&& element) {
    std::vector<Value> items;
    const int c = First(r);
    if (c < 0) return items;
    if (PeekDef(c) < r.max_def_level) {
      SkipNull(r);
      return items;
    }
    while (true) {
      items.push_back(element());
      const Cursor& cur = cursors_[static_cast<size_t>(c)];
      if (cur.slot >= cur.slots) break;
      const int16_t rep = PeekRep(c);
      if (rep < r.max_rep_level) break;
      if (rep > r.max_rep_level) Fail(schema_.column(c), StrCat("has repetition level ", rep, " after a complete element"));
      if (PeekDef(c) < r.max_def_level) {
        Fail(schema_.column(c), StrCat("continues a list with definition level ", PeekDef(c)));
      }
    }
    return items;
  }

  const Schema& schema_;
  std::vector<Cursor> cursors_;
  std::unordered_map<const SchemaNode*, std::vector<int>> leaves_;
};

}  // namespace

namespace {

std::vector<Value> Assemble(const Schema& schema, const std::vector<int>& fields,
                            const std::vector<int>& column_indexes, const std::vector<ColumnData>& columns,
                            int64_t num_rows, bool whole) {
  Assembler a(schema, column_indexes, columns);
  std::vector<Value> rows;
  rows.reserve(static_cast<size_t>(std::min<int64_t>(num_rows, 1 << 20)));
  for (int64_t i = 0; i < num_rows; ++i) rows.push_back(a.ReadRow(fields));
  if (whole) a.CheckConsumed();
  return rows;
}

}  // namespace

std::vector<Value> AssembleRecords(const Schema& schema, const std::vector<int>& fields,
                                   const std::vector<int>& column_indexes, const std::vector<ColumnData>& columns,
                                   int64_t num_rows) {
  return Assemble(schema, fields, column_indexes, columns, num_rows, /*whole=*/true);
}

std::vector<Value> AssembleLeadingRecords(const Schema& schema, const std::vector<int>& fields,
                                          const std::vector<int>& column_indexes,
                                          const std::vector<ColumnData>& columns, int64_t num_rows) {
  return Assemble(schema, fields, column_indexes, columns, num_rows, /*whole=*/false);
}

}  // namespace lakerun::parquet
