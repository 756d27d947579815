// Decoding a whole column chunk (its pages, in file order) into a ColumnData.
#pragma once

#include <cstdint>
#include <string_view>

#include "format/parquet/decode_context.h"
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
  bool verify_crc = false;
};

/// Decodes every page of `chunk` (which starts at file offset `chunk_offset`). `ctx` names the file, row group
/// and column; its page_offset is updated per page. Throws CorruptDataError / NotImplemented.
ColumnData DecodeColumnChunkBytes(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec,
                                  DecodeContext ctx);
/// Same, into `out` (cleared first, its buffers' capacity reused), decompressing pages into `page_scratch`.
void DecodeColumnChunkInto(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec, DecodeContext ctx,
                           ColumnData* out, Buffer* page_scratch);

}  // namespace lakerun::parquet
