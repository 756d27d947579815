// Page pruning: the rows of a row group that a filter cannot be ruled out on by the page index (page_index.h).
//
//   for (int rg = 0; rg < file->num_row_groups(); ++rg) {
//     if (!RowGroupMayMatch(file->metadata(), rg, filter)) continue;
//     for (RowRange r : PagesMayMatch(*file, rg, filter)) { /* decode rows [r.begin, r.end) only */ }
//   }
//
// The filter is evaluated by format::MayMatch, the one evaluator of statistics, once per segment of the row group
// between consecutive page boundaries of the filter's columns, with a StatisticsView of the pages covering that
// segment. AND, OR and NOT (pushed to the leaves) therefore intersect and unite the pages of different columns.
#pragma once

#include <cstdint>
#include <vector>

#include "lakerun/format/filter.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/filter_columns.h"

namespace lakerun::parquet {

/// Rows [begin, end) of a row group (0 is its first row).
struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end - begin; }
  bool operator==(const RowRange& o) const { return begin == o.begin && end == o.end; }
};

/// The rows of `row_group` the page index cannot rule out for `filter`: sorted, disjoint and non-adjacent ranges;
/// empty when no row can match. A row group without a usable page index for any filter column (no index, columns
/// with repetition) comes back whole. `resolve` maps the filter's columns onto the file (default: FileLeafColumns).
/// Throws InvalidArgument for unknown columns or constants of the wrong kind, CorruptDataError (naming the file, row
/// group and column) for a corrupt index.
std::vector<RowRange> PagesMayMatch(const ParquetFile& file, int row_group, const format::Filter& filter,
                                    const FilterColumnResolver& resolve = {});

/// Rows in `ranges`.
int64_t RowCount(const std::vector<RowRange>& ranges);
/// Whether rows [begin, end) meet one of `ranges` (sorted and disjoint, as PagesMayMatch returns them).
bool Overlaps(const std::vector<RowRange>& ranges, int64_t begin, int64_t end);

}  // namespace lakerun::parquet
