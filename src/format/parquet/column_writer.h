// Encoding one column chunk: pages cut on row boundaries, optional dictionary with fallback, levels, compression.
#pragma once

#include <optional>

#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/metadata.h"
#include "format/parquet/page_index_builder.h"

namespace lakerun::parquet {

struct ColumnWriteOptions {
  Codec codec = Codec::kSnappy;
  int compression_level = 0;
  int page_version = 1;
  int64_t page_bytes = 1 << 20;
  bool dictionary = true;
  int64_t dictionary_page_bytes = 1 << 20;
  std::optional<Encoding> encoding;  ///< value encoding (after the dictionary, or instead of it when set)
  bool statistics = true;
  bool page_checksums = true;  ///< the CRC-32 of every page as stored, in its header
};

/// Checks that `data` fits `column` (type, levels, counts) and returns the number of rows it holds. Throws
/// InvalidArgument naming the column.
int64_t ValidateColumnData(const ColumnDescriptor& column, const ColumnData& data);

/// Encodes `data` as one column chunk appended to `file` and returns its metadata. With `page_index`, also builds
/// the chunk's page index there (the caller stores it after the row groups).
ColumnChunkMeta WriteColumnChunk(WritableFile& file, const ColumnDescriptor& column, const ColumnData& data,
                                 const ColumnWriteOptions& options, ChunkPageIndex* page_index = nullptr);

}  // namespace lakerun::parquet
