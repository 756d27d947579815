// PagesMayMatch: per segment between page boundaries of the filter's columns, format::MayMatch on the statistics of
// the pages covering it.
#include "lakerun/format/parquet/page_pruning.h"

#include <algorithm>
#include <map>

#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

using format::ColumnStatistics;
using format::StatisticsView;

// One filter leaf with a usable page index: its pages' row starts and statistics.
struct IndexedColumn {
  const ColumnDescriptor* descriptor = nullptr;
  OffsetIndex pages;
  ColumnIndex stats;
  size_t current = 0;  // the page covering the segment being evaluated

  // Moves `current` to the page holding row `row` (rows only move forward).
  void Seek(int64_t row) {
    while (current + 1 < pages.page_locations.size() && pages.page_locations[current + 1].first_row_index <= row) {
      ++current;
    }
  }

  std::optional<ColumnStatistics> CurrentStatistics() const {
    if (stats.null_pages[current]) {
      ColumnStatistics all_null;
      all_null.all_null = true;
      if (stats.null_counts) all_null.null_count = (*stats.null_counts)[current];
      return all_null;
    }
    Statistics s;
    s.min = stats.min_values[current];
    s.max = stats.max_values[current];
    if (stats.null_counts) s.null_count = (*stats.null_counts)[current];
    return LeafStatistics(*descriptor, s);
  }
};

// The filter's columns with a usable page index, by leaf (a leaf named twice is loaded once).
std::map<int, IndexedColumn> LoadIndexes(const ParquetFile& file, int row_group, const std::vector<int>& leaves) {
  std::map<int, IndexedColumn> out;
  for (int leaf : leaves) {
    if (out.count(leaf)) continue;
    const ColumnDescriptor& d = file.schema().column(leaf);
    if (d.max_rep_level > 0) continue;  // statistics of elements, not rows
    std::optional<ColumnIndex> stats = file.ReadColumnIndex(row_group, leaf);
    if (!stats) continue;
    std::optional<OffsetIndex> pages = file.ReadOffsetIndex(row_group, leaf);
    if (!pages || pages->page_locations.empty()) continue;
    out[leaf] = IndexedColumn{&d, std::move(*pages), std::move(*stats), 0};
  }
  return out;
}

// Every page start of the indexed columns, and the row group's end.
std::vector<int64_t> Boundaries(const std::map<int, IndexedColumn>& columns, int64_t num_rows) {
  std::vector<int64_t> rows{num_rows};
  for (const auto& [leaf, c] : columns) {
    for (const PageLocation& p : c.pages.page_locations) rows.push_back(p.first_row_index);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

void Append(std::vector<RowRange>* ranges, int64_t begin, int64_t end) {
  if (!ranges->empty() && ranges->back().end == begin) {
    ranges->back().end = end;
  } else {
    ranges->push_back({begin, end});
  }
}

}  // namespace

std::vector<RowRange> PagesMayMatch(const ParquetFile& file, int row_group, const format::Filter& filter,
                                    const FilterColumnResolver& resolve_or_default) {
  LAKERUN_CHECK(row_group >= 0 && row_group < file.num_row_groups(), file.path(), ": row group ", row_group,
                " out of range [0, ", file.num_row_groups(), ")");
  const int64_t num_rows = file.metadata().row_groups[static_cast<size_t>(row_group)].num_rows;
  if (num_rows == 0) return {};
  const FilterColumnResolver resolve = resolve_or_default ? resolve_or_default : FileLeafColumns(file.schema());
  std::map<std::string, FilterColumnSource> sources;
  std::vector<int> leaves;
  for (const std::string& column : filter.Columns()) {
    const FilterColumnSource s = resolve(column);
    sources[column] = s;
    if (s.leaf) leaves.push_back(*s.leaf);
  }
  std::map<int, IndexedColumn> indexed = LoadIndexes(file, row_group, leaves);
  if (indexed.empty()) return {{0, num_rows}};
  StatisticsView view;  // num_rows unknown: a page's null count is not the segment's
  view.column = [&](const std::string& column) -> std::optional<ColumnStatistics> {
    const FilterColumnSource& s = sources.at(column);
    if (!s.leaf) return s.fixed;
    const auto it = indexed.find(*s.leaf);
    return it == indexed.end() ? std::nullopt : it->second.CurrentStatistics();
  };
  const std::vector<int64_t> bounds = Boundaries(indexed, num_rows);
  std::vector<RowRange> kept;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    for (auto& [leaf, c] : indexed) c.Seek(bounds[i]);
    if (format::MayMatch(filter, view)) Append(&kept, bounds[i], bounds[i + 1]);
  }
  return kept;
}

int64_t RowCount(const std::vector<RowRange>& ranges) {
  int64_t n = 0;
  for (const RowRange& r : ranges) n += r.size();
  return n;
}

bool Overlaps(const std::vector<RowRange>& ranges, int64_t begin, int64_t end) {
  auto it = std::lower_bound(ranges.begin(), ranges.end(), begin,
                             [](const RowRange& r, int64_t row) { return r.end <= row; });
  return it != ranges.end() && it->begin < end;
}

}  // namespace lakerun::parquet
