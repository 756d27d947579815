// Building a column chunk's page index (ColumnIndex + OffsetIndex) while the column writer emits its data pages.
#pragma once

#include <cstdint>
#include <optional>

#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/page_index.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::parquet {

/// The page index of one written column chunk.
struct ChunkPageIndex {
  /// std::nullopt when some page that holds values has no min/max (statistics off, INT96, decimals, all-NaN floats,
  /// byte values longer than 1 KiB): a column index must bound every page, so none is written, as Arrow does.
  std::optional<ColumnIndex> column_index;
  OffsetIndex offset_index;
};

class PageIndexBuilder {
 public:
  /// `statistics`: whether to build the column index (min/max per page as ComputeStatistics computes them).
  PageIndexBuilder(const ColumnDescriptor& column, bool statistics);

  /// One data page, written at file offset `offset` in `size` bytes (header included), starting at row `first_row`
  /// of the row group, holding values [value_begin, value_end) of `data` and `null_count` null slots.
  void AddPage(int64_t offset, int64_t size, int64_t first_row, const ColumnData& data, int64_t value_begin,
               int64_t value_end, int64_t null_count);
  ChunkPageIndex Finish();

 private:
  const ColumnDescriptor& column_;
  bool statistics_;
  bool bounded_ = true;  // every non-null page so far has min and max
  ChunkPageIndex index_;
};

}  // namespace lakerun::parquet
