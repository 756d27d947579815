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

/// Appends `k` values picked by `idx` (each < dictionary.num_values(), unchecked) from `dictionary` to `out`: views
/// when out->has_views() (the dictionary then has views too), copies otherwise.
void GatherFromDictionary(const uint32_t* idx, int64_t k, const ColumnData& dictionary, ColumnData* out);

/// Dictionary indices kept as such: appends `n` indices (checked against `dictionary_size`) to
/// out->mutable_index_buffer() and adds n to out->num_values().
size_t DecodeDictionaryIndexValues(const uint8_t* data, size_t size, int64_t n, int64_t dictionary_size,
                                   ColumnData* out, const DecodeContext& ctx);

// View decoders (view_decoders.cc): byte values (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96) appended to
// out->mutable_view_buffer() as std::string_views into [data, data + size), which the caller keeps alive (it
// registers the memory with ColumnData::AddOwner). Same validation and errors as the copying decoders.

/// PLAIN byte values as views: one pass over the lengths for BYTE_ARRAY, none for fixed widths.
size_t DecodePlainViews(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx);
/// DELTA_LENGTH_BYTE_ARRAY as views into the page's concatenated bytes.
size_t DecodeDeltaLengthByteArrayViews(const uint8_t* data, size_t size, int64_t n, ColumnData* out,
                                       const DecodeContext& ctx);
/// Appends a view of every value of `copied` (copied layout, same type as out) whose value bytes have been copied
/// to `bytes` (copied.value_buffer().size() bytes that the caller keeps alive).
void AppendViewsOfCopy(const ColumnData& copied, const uint8_t* bytes, ColumnData* out);

/// Appends the byte-array value [p, p + len) to a BYTE_ARRAY ColumnData.
inline void AppendByteArray(ColumnData* out, const void* p, size_t len) {
  auto& offsets = out->mutable_offsets();
  if (offsets.empty()) offsets.push_back(0);
  out->mutable_value_buffer().Append(p, len);
  offsets.push_back(static_cast<int64_t>(out->value_buffer().size()));
  out->set_num_values(out->num_values() + 1);
}

}  // namespace lakerun::parquet
