#include "lakerun/format/parquet/table_reader.h"

#include <algorithm>
#include <future>
#include <set>

#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

// The single leaf a predicate's column names (a dotted leaf path, or a top-level field that is one leaf).
int PredicateColumn(const Schema& schema, const std::string& column) {
  if (auto c = schema.FindColumn(column)) return *c;
  std::vector<int> under = schema.ColumnsUnder(column);
  LAKERUN_CHECK(under.size() == 1, "predicate column '", column, "' ",
                under.empty() ? "does not exist" : "is not a single leaf column");
  return under[0];
}

}  // namespace

bool RowGroupCannotMatch(const FileMetaData& md, int row_group, const Predicate& p) {
  const Schema& schema = md.schema;
  const int c = PredicateColumn(schema, p.column);
  const RowGroupMeta& g = md.row_groups.at(static_cast<size_t>(row_group));
  const ColumnChunkMeta& chunk = g.columns.at(static_cast<size_t>(c));
  if (!chunk.statistics) return false;
  const Statistics& s = *chunk.statistics;
  const ColumnDescriptor& d = schema.column(c);
  if (d.max_rep_level > 0) return false;  // list elements: nulls and counts do not map to rows
  if (p.op == Predicate::Op::kIsNull) return s.null_count && *s.null_count == 0;
  if (p.op == Predicate::Op::kIsNotNull) return s.null_count && *s.null_count == g.num_rows;
  // Unsigned 64-bit values do not order as the signed integers Value holds.
  if (d.logical_type.kind == LogicalType::Kind::kInteger && !d.logical_type.is_signed && d.logical_type.bit_width == 64) {
    return false;
  }
  if (s.null_count && *s.null_count == g.num_rows && g.num_rows > 0) return true;  // all null: no comparison holds
  std::optional<Value> lo = s.MinValue(d), hi = s.MaxValue(d);
  if (!lo || !hi || p.value.is_null()) return false;
  try {
    switch (p.op) {
      case Predicate::Op::kEq: return CompareValues(p.value, *lo) < 0 || CompareValues(p.value, *hi) > 0;
      case Predicate::Op::kLt: return CompareValues(*lo, p.value) >= 0;
      case Predicate::Op::kLe: return CompareValues(*lo, p.value) > 0;
      case Predicate::Op::kGt: return CompareValues(*hi, p.value) <= 0;
      case Predicate::Op::kGe: return CompareValues(*hi, p.value) < 0;
      default: return false;
    }
  } catch (const InvalidArgument&) {
    LAKERUN_THROW(InvalidArgument, "predicate on column '", p.column, "' compares ", p.value.ToString(),
                  " with values like ", lo->ToString());
  }
}

TableReader::TableReader(const ParquetFile& file, TableReadOptions options, ThreadPool* pool)
    : file_(file), options_(std::move(options)), pool_(pool) {
  const Schema& schema = file.schema();
  std::set<int> selected;
  if (options_.columns.empty()) {
    for (int i = 0; i < schema.num_columns(); ++i) selected.insert(i);
  } else {
    for (const auto& name : options_.columns) {
      std::vector<int> under = schema.ColumnsUnder(name);
      LAKERUN_CHECK(!under.empty(), file.path(), ": no column '", name, "'");
      selected.insert(under.begin(), under.end());
    }
  }
  columns_.assign(selected.begin(), selected.end());
  const auto& top = schema.root().children;
  for (size_t f = 0; f < top.size(); ++f) {
    std::vector<int> under = schema.ColumnsUnder(top[f].name);
    for (int c : under) {
      if (selected.count(c)) {
        fields_.push_back(static_cast<int>(f));
        break;
      }
    }
  }
  std::vector<int> candidates = options_.row_groups;
  if (candidates.empty()) {
    for (int i = 0; i < file.num_row_groups(); ++i) candidates.push_back(i);
  }
  for (int rg : candidates) {
    LAKERUN_CHECK(rg >= 0 && rg < file.num_row_groups(), file.path(), ": row group ", rg, " out of range [0, ",
                  file.num_row_groups(), ")");
    bool skip = false;
    for (const auto& p : options_.predicates) {
      if (RowGroupCannotMatch(file.metadata(), rg, p)) {
        skip = true;
        break;
      }
    }
    if (!skip) row_groups_.push_back(rg);
  }
}

RowGroupData TableReader::ReadRowGroup(int row_group) const {
  RowGroupData out;
  out.row_group = row_group;
  out.num_rows = file_.metadata().row_groups.at(static_cast<size_t>(row_group)).num_rows;
  out.columns = columns_;
  out.data.resize(columns_.size());
  if (pool_ == nullptr || pool_->size() == 0 || columns_.size() < 2) {
    for (size_t i = 0; i < columns_.size(); ++i) out.data[i] = file_.ReadColumnChunk(row_group, columns_[i]);
    return out;
  }
  // One task per column chunk; every future is waited for before an error is rethrown, so no task outlives `out`.
  std::vector<std::future<void>> tasks;
  tasks.reserve(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    tasks.push_back(pool_->Submit([this, &out, row_group, i] {
      out.data[i] = file_.ReadColumnChunk(row_group, columns_[i]);
    }));
  }
  std::exception_ptr first;
  for (auto& t : tasks) {
    try {
      t.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  return out;
}

std::optional<RowGroupData> TableReader::Next() {
  if (next_ >= row_groups_.size()) return std::nullopt;
  return ReadRowGroup(row_groups_[next_++]);
}

std::vector<Value> TableReader::ReadRows(int64_t limit) {
  std::vector<Value> rows;
  while (static_cast<int64_t>(rows.size()) < limit && next_ < row_groups_.size()) {
    const int rg = row_groups_[next_++];
    if (columns_.empty()) {
      // No leaf to read (a schema of empty groups): rows are empty structs.
      const int64_t n = std::min<int64_t>(limit - static_cast<int64_t>(rows.size()),
                                          file_.metadata().row_groups[static_cast<size_t>(rg)].num_rows);
      rows.insert(rows.end(), static_cast<size_t>(std::max<int64_t>(n, 0)), Value::Struct({}));
      continue;
    }
    RowGroupData data = ReadRowGroup(rg);
    std::vector<Value> part;
    try {
      part = AssembleRecords(file_.schema(), fields_, data.columns, data.data, data.num_rows);
    } catch (const CorruptDataError& e) {
      LAKERUN_THROW(CorruptDataError, file_.path(), ": row group ", rg, ": ", e.what());
    }
    for (auto& r : part) {
      if (static_cast<int64_t>(rows.size()) >= limit) break;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace lakerun::parquet
