// Conversion between ColumnIndex / OffsetIndex (page_index.h) and their Thrift-compact encodings (parquet.thrift).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lakerun/format/parquet/page_index.h"

namespace lakerun::parquet {

/// Parses a ColumnIndex. `context` names the file, row group and column in errors; `base_offset` is the index's file
/// offset. Throws CorruptDataError for malformed Thrift, a missing required field, lists of different lengths, an
/// unknown boundary order or a negative null count.
ColumnIndex ParseColumnIndex(std::string_view bytes, const std::string& context, uint64_t base_offset, int max_depth);
/// Parses an OffsetIndex. Throws CorruptDataError for malformed Thrift or a page location without its three fields.
/// Whether the locations fit the file and the row group is the caller's to check.
OffsetIndex ParseOffsetIndex(std::string_view bytes, const std::string& context, uint64_t base_offset, int max_depth);

std::string SerializeColumnIndex(const ColumnIndex& index);
std::string SerializeOffsetIndex(const OffsetIndex& index);

}  // namespace lakerun::parquet
