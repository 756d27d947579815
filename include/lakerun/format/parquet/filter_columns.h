// How the columns a filter names reach one Parquet file's leaves, and what the file's statistics (footer or page
// index) say of them: the shared ground of row-group pruning (RowGroupStatistics) and page pruning (PagesMayMatch).
//
//   FilterColumnResolver leaves = FileLeafColumns(file.schema());   // filter columns are the file's leaf paths
//   FilterColumnResolver mine = [&](const std::string& c) -> FilterColumnSource {
//     if (c == "day") return {std::nullopt, ColumnStatistics::Constant(day_of_this_file)};  // a partition value
//     return leaves(physical_name(c));
//   };
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lakerun/format/filter.h"
#include "lakerun/format/parquet/metadata.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::parquet {

/// Where one filter column's values come from in a file.
struct FilterColumnSource {
  /// The file's leaf column (index into Schema::columns()) holding the values.
  std::optional<int> leaf;
  /// Otherwise, what holds on every row of the file: a partition value (ColumnStatistics::Constant), or all null for
  /// a column the file lacks. Neither set: nothing is known (no pruning on it).
  std::optional<format::ColumnStatistics> fixed;
};

/// Maps a filter column name to its source in one file. May throw InvalidArgument naming an unknown column.
using FilterColumnResolver = std::function<FilterColumnSource(const std::string& column)>;

/// The resolver of filters written against the file itself: a column is a dotted leaf path, or a top-level field
/// that is one leaf. Unknown or non-leaf columns are an InvalidArgument naming the column. `schema` must outlive it.
FilterColumnResolver FileLeafColumns(const Schema& schema);

/// What `statistics` (of a column chunk, or of one page) say of leaf `column` as a filter sees it: bounds decoded as
/// Values and the null count. std::nullopt for columns with repetition (their counts are of elements, not rows);
/// no bounds for unsigned 64-bit columns (they do not order as the signed integers Value holds).
std::optional<format::ColumnStatistics> LeafStatistics(const ColumnDescriptor& column, const Statistics& statistics);

}  // namespace lakerun::parquet
