// Value decoders: each appends `n` decoded values of the column's physical type to a ColumnData (see
// column_data.h for the layout) and returns the number of input bytes it consumed. They never read outside
// [data, data + size) and report malformed input through the DecodeContext (CorruptDataError).
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/parquet/decode_context.h"
#include "lakerun/format/parquet/column_data.h"

namespace lakerun::parquet {

/// PLAIN: fixed-width values back to back (BOOLEAN bit-packed LSB first), BYTE_ARRAY as 4-byte LE length + bytes.
size_t DecodePlain(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx);

/// RLE-encoded BOOLEAN values (data pages: 4-byte length prefix, then RLE/bit-packed hybrid of width 1).
size_t DecodeRleBooleans(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx);

/// DELTA_BINARY_PACKED for INT32 / INT64 columns.
size_t DecodeDeltaBinaryPacked(const uint8_t* data, size_t size, int64_t n, ColumnData* out,
                               const DecodeContext& ctx);

/// DELTA_LENGTH_BYTE_ARRAY: DELTA_BINARY_PACKED lengths, then the concatenated bytes (BYTE_ARRAY).
size_t DecodeDeltaLengthByteArray(const uint8_t* data, size_t size, int64_t n, ColumnData* out,
                                  const DecodeContext& ctx);

/// DELTA_BYTE_ARRAY: prefix lengths (DELTA_BINARY_PACKED), then suffixes (DELTA_LENGTH_BYTE_ARRAY); BYTE_ARRAY and
/// FIXED_LEN_BYTE_ARRAY.
size_t DecodeDeltaByteArray(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx);

/// BYTE_STREAM_SPLIT for every fixed-width type: byte k of value i at data[k * n + i].
size_t DecodeByteStreamSplit(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx);

/// Dictionary indices (1-byte bit width, then RLE/bit-packed hybrid) gathered from `dictionary` (a ColumnData
/// of the same type, decoded from the dictionary page). An index >= dictionary.num_values() throws.
size_t DecodeDictionaryIndices(const uint8_t* data, size_t size, int64_t n, const ColumnData& dictionary,
                               ColumnData* out, const DecodeContext& ctx);

/// Appends the byte-array value [p, p + len) to a BYTE_ARRAY ColumnData.
inline void AppendByteArray(ColumnData* out, const void* p, size_t len) {
  auto& offsets = out->mutable_offsets();
  if (offsets.empty()) offsets.push_back(0);
  out->mutable_value_buffer().Append(p, len);
  offsets.push_back(static_cast<int64_t>(out->value_buffer().size()));
  out->set_num_values(out->num_values() + 1);
}

}  // namespace lakerun::parquet
