// Value encoders: each appends the encoding of values [begin, end) of a ColumnData (dense values, as in
// column_data.h) to `out`.
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/format/parquet/column_data.h"

namespace lakerun::parquet {

void EncodePlain(const ColumnData& values, int64_t begin, int64_t end, std::string* out);
/// BOOLEAN as RLE (4-byte length prefix + hybrid of width 1).
void EncodeRleBooleans(const ColumnData& values, int64_t begin, int64_t end, std::string* out);
/// INT32 / INT64: blocks of 128 values in 4 miniblocks.
void EncodeDeltaBinaryPacked(const ColumnData& values, int64_t begin, int64_t end, std::string* out);
/// Same, from raw integers (lengths, prefixes); `is32` selects 32-bit wrapping arithmetic.
void EncodeDeltaBinaryPackedInts(const int64_t* values, int64_t n, bool is32, std::string* out);
void EncodeDeltaLengthByteArray(const ColumnData& values, int64_t begin, int64_t end, std::string* out);
/// BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY.
void EncodeDeltaByteArray(const ColumnData& values, int64_t begin, int64_t end, std::string* out);
void EncodeByteStreamSplit(const ColumnData& values, int64_t begin, int64_t end, std::string* out);

}  // namespace lakerun::parquet
