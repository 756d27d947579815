// ParquetFile's walks over page headers alone: ReadPageHeaders (`lakerun table inspect`'s page checksum count) and
// the prefix of a chunk that a leading row range needs (ColumnReadOptions::fetch_range_only).
#include <algorithm>

#include "format/parquet/metadata_thrift.h"
#include "lakerun/base/error.h"
#include "lakerun/format/parquet/file_reader.h"

namespace lakerun::parquet {

void ParquetFile::WalkPageHeaders(int row_group, int column,
                                  const std::function<bool(const PageSummary& page, size_t end)>& visit) const {
  // Page headers are tens of bytes; statistics can make them larger, so a window that does not hold the whole
  // header is widened until it does (or covers the rest of the chunk).
  constexpr size_t kFirstWindow = 4096;
  const auto [start, length] = ChunkRange(row_group, column);
  const std::string context = StrCat(path_, ": row group ", row_group, ", column '",
                                     schema().column(column).dotted_path, "': page header");
  std::string window;
  size_t pos = 0;
  while (pos < length) {
    size_t want = std::min(kFirstWindow, length - pos);
    PageHeader h;
    size_t header_size = 0;
    while (true) {
      window.resize(want);
      ReadChunkBytes(row_group, column, start + pos, want, window.data());
      try {
        h = ParsePageHeader(window, context, start + pos, options_.max_thrift_depth, &header_size);
        break;
      } catch (const CorruptDataError&) {
        if (want == length - pos) throw;
        want = std::min(want * 8, length - pos);
      }
    }
    if (h.compressed_page_size < 0 || static_cast<uint64_t>(h.compressed_page_size) > length - pos - header_size) {
      LAKERUN_THROW(CorruptDataError, context, " at offset ", start + pos, ": a page of ", h.compressed_page_size,
                    " bytes overruns the column chunk (", length - pos - header_size, " bytes left)");
    }
    PageSummary page;
    page.type = static_cast<PageType>(h.type);
    page.offset = start + pos;
    page.header_size = static_cast<uint32_t>(header_size);
    page.compressed_size = h.compressed_page_size;
    page.uncompressed_size = h.uncompressed_page_size;
    page.num_values = h.num_values;
    if (h.crc) page.crc = static_cast<uint32_t>(*h.crc);
    pos += header_size + static_cast<size_t>(h.compressed_page_size);
    if (!visit(page, pos)) return;
  }
}

std::vector<PageSummary> ParquetFile::ReadPageHeaders(int row_group, int column) const {
  LAKERUN_CHECK(row_group >= 0 && row_group < num_row_groups(), path_, ": row group ", row_group,
                " out of range [0, ", num_row_groups(), ")");
  LAKERUN_CHECK(column >= 0 && column < schema().num_columns(), path_, ": column ", column, " out of range [0, ",
                schema().num_columns(), ")");
  std::vector<PageSummary> pages;
  WalkPageHeaders(row_group, column, [&](const PageSummary& page, size_t) {
    pages.push_back(page);
    return true;
  });
  return pages;
}

size_t ParquetFile::RangePrefixLength(int row_group, int column, int64_t row_end) const {
  const size_t length = ChunkRange(row_group, column).second;
  size_t prefix = length;
  int64_t rows = 0;
  try {
    WalkPageHeaders(row_group, column, [&](const PageSummary& page, size_t end) {
      if (page.type != PageType::kDataPage && page.type != PageType::kDataPageV2) return true;
      rows += page.num_values;  // one slot per row: the range needs no repetition
      if (rows < row_end) return true;
      prefix = end;
      return false;
    });
  } catch (const CorruptDataError&) {
    return length;  // the decoder reports the damage, with its context
  }
  return prefix;
}

}  // namespace lakerun::parquet
