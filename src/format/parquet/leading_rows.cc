#include "lakerun/format/parquet/leading_rows.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "format/parquet/leading_records.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

// The top-level field named exactly `name`, or -1.
int TopLevelField(const Schema& schema, const std::string& name) {
  const auto& top = schema.root().children;
  for (size_t f = 0; f < top.size(); ++f) {
    if (top[f].name == name) return static_cast<int>(f);
  }
  return -1;
}

// The leaves under top-level field `f`, by their path (a dotted prefix would also match a field "a" holding "b"
// when the top-level field is named "a.b").
std::vector<int> LeavesOfField(const Schema& schema, int f) {
  const std::string& name = schema.root().children[static_cast<size_t>(f)].name;
  std::vector<int> out;
  for (const auto& c : schema.columns()) {
    if (!c.path.empty() && c.path.front() == name) out.push_back(c.index);
  }
  return out;
}

// Reads the first `rows` rows of row group `rg` of the selected columns and assembles them.
std::vector<Value> ReadRowGroupHead(const ParquetFile& file, const ColumnSelection& selection, int rg, int64_t rows) {
  std::vector<ColumnData> data(selection.columns.size());
  for (size_t i = 0; i < selection.columns.size(); ++i) {
    const int c = selection.columns[i];
    ColumnReadOptions options;
    if (file.schema().column(c).max_rep_level == 0) {
      options.row_begin = 0;
      options.row_end = rows;
      options.fetch_range_only = true;
    }
    data[i] = file.ReadColumnChunk(rg, c, options);
  }
  return AssembleLeadingRecords(file.schema(), selection.fields, selection.columns, data, rows);
}

}  // namespace

ColumnSelection SelectColumns(const Schema& schema, const std::vector<std::string>& names,
                              const std::string& context) {
  ColumnSelection out;
  std::set<int> leaves;
  auto add = [&](int f, const std::vector<int>& under) {
    if (std::find(out.fields.begin(), out.fields.end(), f) == out.fields.end()) out.fields.push_back(f);
    leaves.insert(under.begin(), under.end());
  };
  if (names.empty()) {
    for (size_t f = 0; f < schema.root().children.size(); ++f) {
      add(static_cast<int>(f), LeavesOfField(schema, static_cast<int>(f)));
    }
  }
  for (const auto& name : names) {
    if (const int f = TopLevelField(schema, name); f >= 0) {
      add(f, LeavesOfField(schema, f));
      continue;
    }
    const std::vector<int> under = schema.ColumnsUnder(name);
    LAKERUN_CHECK(!under.empty(), context, ": no column '", name, "'");
    const int f = TopLevelField(schema, schema.column(under.front()).path.front());
    LAKERUN_INTERNAL_ASSERT(f >= 0, "column '", name, "' has no top-level field");
    add(f, under);
  }
  out.columns.assign(leaves.begin(), leaves.end());
  return out;
}

std::vector<Value> ReadLeadingRows(const ParquetFile& file, const ColumnSelection& selection, int64_t limit) {
  std::vector<Value> rows;
  for (int rg = 0; rg < file.num_row_groups() && static_cast<int64_t>(rows.size()) < limit; ++rg) {
    const int64_t in_group = file.metadata().row_groups[static_cast<size_t>(rg)].num_rows;
    const int64_t want = std::min(limit - static_cast<int64_t>(rows.size()), in_group);
    if (want <= 0) continue;
    if (selection.columns.empty()) {
      // No leaf to read (fields that are empty groups): the rows are empty structs.
      rows.insert(rows.end(), static_cast<size_t>(want), Value::Struct({}));
      continue;
    }
    std::vector<Value> part = ReadRowGroupHead(file, selection, rg, want);
    std::move(part.begin(), part.end(), std::back_inserter(rows));
  }
  return rows;
}

}  // namespace lakerun::parquet
