// The Parquet page index (parquet.thrift ColumnIndex / OffsetIndex): per data page of a column chunk, where the page
// lies and which rows it holds (OffsetIndex), and its min/max/null statistics (ColumnIndex). Writers store both after
// the row groups, before the footer; ColumnChunkMeta::column_index / offset_index point at them.
//
//   auto file = ParquetFile::Open(fs, "part-0.parquet");
//   std::optional<OffsetIndex> pages = file->ReadOffsetIndex(/*row_group=*/0, /*column=*/2);
//   std::optional<ColumnIndex> stats = file->ReadColumnIndex(0, 2);
//
// Plain structs; no Thrift types. Page pruning with a filter is PagesMayMatch (page_pruning.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lakerun::parquet {

/// Whether the pages' bounds are sorted (parquet.thrift BoundaryOrder): kAscending when the min and max values of
/// consecutive non-null pages never decrease, kDescending when they never increase.
enum class BoundaryOrder : int8_t { kUnordered = 0, kAscending = 1, kDescending = 2 };

const char* ToString(BoundaryOrder order);

/// One data page of a column chunk (dictionary pages are not listed).
struct PageLocation {
  int64_t offset = 0;                ///< file offset of the page header
  int32_t compressed_page_size = 0;  ///< header and compressed body
  int64_t first_row_index = 0;       ///< the page's first row, counted from the row group's first row

  bool operator==(const PageLocation& o) const {
    return offset == o.offset && compressed_page_size == o.compressed_page_size &&
           first_row_index == o.first_row_index;
  }
};

struct OffsetIndex {
  std::vector<PageLocation> page_locations;  ///< in file order; first_row_index strictly increasing from 0
};

/// Per data page, in the order of the OffsetIndex: min/max are encoded as Statistics::min/max are (PLAIN, one value;
/// BYTE_ARRAY without a length prefix) and may be truncated bounds; they are empty for null pages.
struct ColumnIndex {
  std::vector<bool> null_pages;  ///< the page holds no non-null value
  std::vector<std::string> min_values;
  std::vector<std::string> max_values;
  BoundaryOrder boundary_order = BoundaryOrder::kUnordered;
  std::optional<std::vector<int64_t>> null_counts;

  size_t num_pages() const { return null_pages.size(); }
};

/// Where a serialized index lies in the file.
struct IndexLocation {
  int64_t offset = 0;
  int32_t length = 0;
};

}  // namespace lakerun::parquet
