// ParquetFile::ReadColumnIndex / ReadOffsetIndex: reading a chunk's page index and checking it against the file,
// the chunk and the row group, so that callers (page pruning) can trust offsets, row numbers and page counts.
#include "format/parquet/page_index_thrift.h"
#include "lakerun/base/error.h"
#include "lakerun/format/parquet/file_reader.h"

namespace lakerun::parquet {
namespace {

std::string Where(const ParquetFile& f, int row_group, int column) {
  return StrCat(f.path(), ": row group ", row_group, ", column '", f.schema().column(column).dotted_path, "'");
}

// Page locations must cover the row group from row 0 in increasing row order, each page inside the chunk.
void CheckOffsetIndex(const OffsetIndex& index, int64_t num_rows, uint64_t chunk_start, uint64_t chunk_length,
                      const std::string& where) {
  const auto& pages = index.page_locations;
  auto fail = [&](size_t i, const std::string& what) {
    LAKERUN_THROW(CorruptDataError, where, ": offset index page ", i, " of ", pages.size(), ": ", what);
  };
  if (pages.empty() && num_rows > 0) {
    LAKERUN_THROW(CorruptDataError, where, ": offset index lists no page for ", num_rows, " rows");
  }
  for (size_t i = 0; i < pages.size(); ++i) {
    const PageLocation& p = pages[i];
    if (i == 0 && p.first_row_index != 0) fail(i, StrCat("first_row_index ", p.first_row_index, " is not 0"));
    if (i > 0 && p.first_row_index <= pages[i - 1].first_row_index) {
      fail(i, StrCat("first_row_index ", p.first_row_index, " does not follow ", pages[i - 1].first_row_index));
    }
    if (p.first_row_index >= num_rows && num_rows > 0) {
      fail(i, StrCat("first_row_index ", p.first_row_index, " is past the row group's ", num_rows, " rows"));
    }
    const bool inside = p.offset >= 0 && static_cast<uint64_t>(p.offset) >= chunk_start &&
                        p.compressed_page_size > 0 &&
                        static_cast<uint64_t>(p.offset) + static_cast<uint64_t>(p.compressed_page_size) <=
                            chunk_start + chunk_length;
    if (!inside) {
      fail(i, StrCat(p.compressed_page_size, " bytes at offset ", p.offset, " lie outside the chunk [", chunk_start,
                     ", ", chunk_start + chunk_length, ")"));
    }
  }
}

}  // namespace

const char* ToString(BoundaryOrder order) {
  switch (order) {
    case BoundaryOrder::kUnordered: return "UNORDERED";
    case BoundaryOrder::kAscending: return "ASCENDING";
    case BoundaryOrder::kDescending: return "DESCENDING";
  }
  return "?";
}

std::string ParquetFile::ReadIndexBytes(int row_group, int column, const IndexLocation& where,
                                        const char* what) const {
  const uint64_t data_end = file_size_ - 8 - metadata_.footer_length;
  if (where.offset < 4 || where.length <= 0 || static_cast<uint64_t>(where.offset) > data_end ||
      static_cast<uint64_t>(where.length) > data_end - static_cast<uint64_t>(where.offset) ||
      static_cast<uint64_t>(where.length) > options_.max_footer_bytes) {
    LAKERUN_THROW(CorruptDataError, Where(*this, row_group, column), ": ", what, " of ", where.length,
                  " bytes at offset ", where.offset, " lies outside the data section [4, ", data_end, ")");
  }
  std::string bytes(static_cast<size_t>(where.length), '\0');
  ReadChunkBytes(row_group, column, static_cast<uint64_t>(where.offset), bytes.size(), bytes.data());
  return bytes;
}

std::optional<OffsetIndex> ParquetFile::ReadOffsetIndex(int row_group, int column) const {
  const auto [start, length] = ChunkRange(row_group, column);  // checks row_group and column
  const RowGroupMeta& g = metadata_.row_groups[static_cast<size_t>(row_group)];
  const ColumnChunkMeta& c = g.columns[static_cast<size_t>(column)];
  if (!c.offset_index) return std::nullopt;
  const std::string where = Where(*this, row_group, column);
  const std::string bytes = ReadIndexBytes(row_group, column, *c.offset_index, "offset index");
  OffsetIndex index =
      ParseOffsetIndex(bytes, where + ": offset index", static_cast<uint64_t>(c.offset_index->offset),
                       options_.max_thrift_depth);
  CheckOffsetIndex(index, g.num_rows, start, length, where);
  return index;
}

std::optional<ColumnIndex> ParquetFile::ReadColumnIndex(int row_group, int column) const {
  ChunkRange(row_group, column);  // checks row_group and column
  const ColumnChunkMeta& c =
      metadata_.row_groups[static_cast<size_t>(row_group)].columns[static_cast<size_t>(column)];
  if (!c.column_index) return std::nullopt;
  const std::string where = Where(*this, row_group, column);
  const std::string bytes = ReadIndexBytes(row_group, column, *c.column_index, "column index");
  ColumnIndex index =
      ParseColumnIndex(bytes, where + ": column index", static_cast<uint64_t>(c.column_index->offset),
                       options_.max_thrift_depth);
  if (const auto pages = ReadOffsetIndex(row_group, column)) {
    if (pages->page_locations.size() != index.num_pages()) {
      LAKERUN_THROW(CorruptDataError, where, ": column index lists ", index.num_pages(),
                    " pages, the offset index ", pages->page_locations.size());
    }
  }
  return index;
}

}  // namespace lakerun::parquet
