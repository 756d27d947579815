#include "format/parquet/page_index_builder.h"

#include <functional>

#include "format/parquet/metadata_thrift.h"
#include "format/parquet/statistics_builder.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

// Whether consecutive non-null pages' bounds never decrease (ascending) / never increase (descending), compared as
// the column's values. Columns whose values do not order as Values (unsigned 64-bit) are left unordered.
BoundaryOrder Order(const ColumnDescriptor& column, const ColumnIndex& index) {
  if (column.logical_type.kind == LogicalType::Kind::kInteger && !column.logical_type.is_signed &&
      column.logical_type.bit_width == 64) {
    return BoundaryOrder::kUnordered;
  }
  bool ascending = true, descending = true;
  std::optional<Value> last_min, last_max;
  try {
    for (size_t i = 0; i < index.num_pages(); ++i) {
      if (index.null_pages[i]) continue;
      const std::optional<Value> lo = DecodeStatValue(column, index.min_values[i]);
      const std::optional<Value> hi = DecodeStatValue(column, index.max_values[i]);
      if (!lo || !hi) return BoundaryOrder::kUnordered;
      if (last_min) {
        const int dmin = CompareValues(*lo, *last_min), dmax = CompareValues(*hi, *last_max);
        ascending = ascending && dmin >= 0 && dmax >= 0;
        descending = descending && dmin <= 0 && dmax <= 0;
      }
      last_min = lo;
      last_max = hi;
    }
  } catch (const InvalidArgument&) {
    return BoundaryOrder::kUnordered;  // values without an order between them
  }
  return ascending ? BoundaryOrder::kAscending : descending ? BoundaryOrder::kDescending : BoundaryOrder::kUnordered;
}

}  // namespace

PageIndexBuilder::PageIndexBuilder(const ColumnDescriptor& column, bool statistics)
    : column_(column), statistics_(statistics) {
  if (statistics_) index_.column_index.emplace().null_counts.emplace();
}

void PageIndexBuilder::AddPage(int64_t offset, int64_t size, int64_t first_row, const ColumnData& data,
                               int64_t value_begin, int64_t value_end, int64_t null_count) {
  LAKERUN_CHECK(size > 0 && size <= INT32_MAX, "column '", column_.dotted_path, "': page of ", size, " bytes");
  index_.offset_index.page_locations.push_back({offset, static_cast<int32_t>(size), first_row});
  if (!statistics_ || !bounded_) return;
  ColumnIndex& ci = *index_.column_index;
  const bool null_page = value_end == value_begin;
  ci.null_pages.push_back(null_page);
  ci.null_counts->push_back(null_count);
  if (null_page) {
    ci.min_values.emplace_back();
    ci.max_values.emplace_back();
    return;
  }
  Statistics s = ComputeStatistics(column_, data, value_begin, value_end, null_count);
  if (!s.min || !s.max) {
    bounded_ = false;
    return;
  }
  ci.min_values.push_back(std::move(*s.min));
  ci.max_values.push_back(std::move(*s.max));
}

ChunkPageIndex PageIndexBuilder::Finish() {
  if (!bounded_) index_.column_index.reset();
  if (index_.column_index) index_.column_index->boundary_order = Order(column_, *index_.column_index);
  return std::move(index_);
}

}  // namespace lakerun::parquet
