// Decoding a whole column chunk (its pages, in file order) into a ColumnData.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "format/parquet/decode_context.h"
#include "format/parquet/page_memory.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/types.h"

namespace lakerun::parquet {

struct ChunkSpec {
  PhysicalType type = PhysicalType::kInt32;
  int32_t type_length = 0;
  int16_t max_def_level = 0;
  int16_t max_rep_level = 0;
  Codec codec = Codec::kUncompressed;
  /// Level slots the chunk holds (ColumnMetaData.num_values); decoding stops there. -1: until the bytes end.
  int64_t num_values = -1;
  uint64_t max_page_bytes = 1ull << 30;
  int max_thrift_depth = 64;
  bool verify_crc = false;  ///< check the pages that store a CRC-32 (ReaderOptions::verify_crc sets it)
  /// BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY / INT96 values as views into page memory (ColumnData's views form).
  bool byte_views = false;
  /// Byte values of a chunk whose data pages are all dictionary-encoded: indices + dictionary (dictionary form).
  bool keep_dictionary = false;
  /// Size of the blocks of page memory for views (the chunk's uncompressed size makes one block hold every page).
  uint64_t view_block_bytes = 0;
  /// Columns without repetition only: decode just the data pages holding some of rows [row_begin, row_end) of the
  /// chunk; the pages wholly outside are skipped from their headers, without decompressing (the dictionary page is
  /// always read). The output then starts at the first row of the first page read (ColumnData::first_row()) and
  /// ends with the last page read. row_end < 0: every page.
  int64_t row_begin = 0;
  int64_t row_end = -1;
};

/// Memory a chunk decode uses beyond its output.
struct ChunkMemory {
  Buffer* page_scratch = nullptr;         ///< decompressed pages of the copied form (required)
  BufferPool* view_pool = nullptr;        ///< page memory for views, recycled (nullptr: fresh blocks)
  std::shared_ptr<const void> chunk;      ///< owns the chunk's bytes: views may then point into uncompressed pages
};

/// Decodes every page of `chunk` (which starts at file offset `chunk_offset`). `ctx` names the file, row group
/// and column; its page_offset is updated per page. Throws CorruptDataError / NotImplemented.
ColumnData DecodeColumnChunkBytes(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec,
                                  DecodeContext ctx);
/// Same, into `out` (cleared first, its buffers' capacity reused), decompressing pages into `page_scratch`.
void DecodeColumnChunkInto(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec, DecodeContext ctx,
                           ColumnData* out, Buffer* page_scratch);
/// Same, with the memory of the views form. `chunk` must be the bytes that memory.chunk owns, when it is given.
void DecodeColumnChunkInto(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec, DecodeContext ctx,
                           ColumnData* out, const ChunkMemory& memory);

}  // namespace lakerun::parquet
