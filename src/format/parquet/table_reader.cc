#include "lakerun/format/parquet/table_reader.h"

#include <algorithm>
#include <functional>
#include <future>
#include <set>

#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

using format::ColumnStatistics;
using format::MayMatch;

// The single leaf a filter's column names (a dotted leaf path, or a top-level field that is one leaf).
int FilterColumn(const Schema& schema, const std::string& column) { return *FileLeafColumns(schema)(column).leaf; }

}  // namespace

StatisticsView RowGroupStatistics(const FileMetaData& md, int row_group) {
  return RowGroupStatistics(md, row_group, FileLeafColumns(md.schema));
}

StatisticsView RowGroupStatistics(const FileMetaData& md, int row_group, FilterColumnResolver resolve) {
  const RowGroupMeta& g = md.row_groups.at(static_cast<size_t>(row_group));
  StatisticsView view;
  view.num_rows = g.num_rows;
  view.column = [&md, &g, resolve = std::move(resolve)](const std::string& column) -> std::optional<ColumnStatistics> {
    const FilterColumnSource source = resolve(column);
    if (!source.leaf) return source.fixed;
    const ColumnChunkMeta& chunk = g.columns.at(static_cast<size_t>(*source.leaf));
    if (!chunk.statistics) return std::nullopt;
    return LeafStatistics(md.schema.column(*source.leaf), *chunk.statistics);
  };
  return view;
}

bool RowGroupMayMatch(const FileMetaData& metadata, int row_group, const Filter& filter) {
  return MayMatch(filter, RowGroupStatistics(metadata, row_group));
}

namespace {

// Every column of `filter` is a leaf of `schema`, compared with constants of its kind (InvalidArgument otherwise).
void CheckFilterColumns(const Schema& schema, const Filter& filter, const std::string& file) {
  for (const std::string& column : filter.Columns()) {
    try {
      FilterColumn(schema, column);
    } catch (const InvalidArgument& e) {
      LAKERUN_THROW(InvalidArgument, file, ": ", e.what());
    }
  }
  std::function<void(const Filter&)> check = [&](const Filter& f) {
    for (const Filter& c : f.children()) check(c);
    if (!f.is_leaf()) return;
    const ColumnDescriptor& d = schema.column(FilterColumn(schema, f.column()));
    const bool bytes = d.physical_type == PhysicalType::kByteArray ||
                       d.physical_type == PhysicalType::kFixedLenByteArray || d.physical_type == PhysicalType::kInt96;
    for (const Value& v : f.values()) {
      const bool text = v.kind() == Value::Kind::kString || v.kind() == Value::Kind::kBytes;
      LAKERUN_CHECK(text == bytes, file, ": filter on column '", f.column(), "' (", ToString(d.physical_type),
                    ") compares with ", v.ToString(), "; the constant must be a ", bytes ? "string" : "number");
    }
  };
  check(filter);
}

}  // namespace

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
  CheckFilterColumns(schema, options_.filter, file.path());
  std::vector<int> candidates = options_.row_groups;
  if (candidates.empty()) {
    for (int i = 0; i < file.num_row_groups(); ++i) candidates.push_back(i);
  }
  for (int rg : candidates) {
    LAKERUN_CHECK(rg >= 0 && rg < file.num_row_groups(), file.path(), ": row group ", rg, " out of range [0, ",
                  file.num_row_groups(), ")");
    if (RowGroupMayMatch(file.metadata(), rg, options_.filter)) row_groups_.push_back(rg);
  }
}

RowGroupData TableReader::ReadRowGroup(int row_group) const {
  RowGroupData out;
  out.row_group = row_group;
  out.num_rows = file_.metadata().row_groups.at(static_cast<size_t>(row_group)).num_rows;
  out.columns = columns_;
  out.data.resize(columns_.size());
  file_.WillReadRowGroup(row_group, columns_);
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
  while (static_cast<int64_t>(rows.size()) < limit) {
    if (pending_next_ == pending_.size()) {  // the rows of the last row group are used up: assemble the next
      if (next_ >= row_groups_.size()) break;
      const int rg = row_groups_[next_++];
      pending_next_ = 0;
      if (columns_.empty()) {
        // No leaf to read (a schema of empty groups): rows are empty structs.
        const int64_t n = file_.metadata().row_groups[static_cast<size_t>(rg)].num_rows;
        pending_.assign(static_cast<size_t>(std::max<int64_t>(n, 0)), Value::Struct({}));
        continue;
      }
      RowGroupData data = ReadRowGroup(rg);
      try {
        pending_ = AssembleRecords(file_.schema(), fields_, data.columns, data.data, data.num_rows);
      } catch (const CorruptDataError& e) {
        LAKERUN_THROW(CorruptDataError, file_.path(), ": row group ", rg, ": ", e.what());
      }
      continue;
    }
    // Rows assembled but not returned yet stay for the next call.
    while (pending_next_ < pending_.size() && static_cast<int64_t>(rows.size()) < limit) {
      rows.push_back(std::move(pending_[pending_next_++]));
    }
  }
  return rows;
}

}  // namespace lakerun::parquet
