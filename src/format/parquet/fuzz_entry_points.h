// Entry points for fuzz targets (fuzz/) and corpus replays: every parser of untrusted bytes, callable on a raw byte
// span. Each either returns normally or throws a lakerun::Error subclass; anything else (a crash, a hang, another
// exception type) is a bug. Private header: include it as "format/parquet/fuzz_entry_points.h".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lakerun/format/parquet/types.h"

namespace lakerun::parquet::fuzz {

/// A whole file in memory: opens it, reads every chunk's page index and prunes pages with a filter on each column,
/// then decodes every column chunk of every row group and assembles the rows;
/// byte-valued chunks are read again in the views + dictionary form, which must hold the same values (else
/// std::logic_error).
void ParseFile(std::string_view file_bytes);
/// The Thrift-compact FileMetaData struct (the footer without the trailing length and magic), schema included.
void ParseFooter(std::string_view thrift_bytes);
/// A serialized page index structure: an OffsetIndex when `offset_index`, else a ColumnIndex.
void ParsePageIndex(std::string_view bytes, bool offset_index);
/// One Thrift-compact PageHeader at the start of `bytes`.
void ParsePageHeader(std::string_view bytes);
/// A sequence of pages (a column chunk's bytes) of a column of type `type`, levels `max_def`/`max_rep`, compressed
/// with `codec`; decodes everything. Byte-valued columns are decoded again in the views form and the views +
/// dictionary form (ColumnReadOptions), with the chunk's bytes shared as a file read does for uncompressed chunks:
/// both must fail alike or hold the same values and levels, else std::logic_error (not a lakerun::Error: a bug).
void DecodeColumnChunk(std::string_view chunk_bytes, PhysicalType type, int32_t type_length, int16_t max_def,
                       int16_t max_rep, Codec codec);
/// RLE/bit-packed hybrid run data (no length prefix) of `count` values of `bit_width` bits.
void DecodeRleHybrid(std::string_view bytes, int bit_width, int64_t count);
/// Each value decoder: decodes `count` values of `type` from `bytes`.
void DecodePlain(std::string_view bytes, PhysicalType type, int32_t type_length, int64_t count);
void DecodeDeltaBinaryPacked(std::string_view bytes, PhysicalType type, int64_t count);
void DecodeDeltaLengthByteArray(std::string_view bytes, int64_t count);
void DecodeDeltaByteArray(std::string_view bytes, int64_t count);
void DecodeByteStreamSplit(std::string_view bytes, PhysicalType type, int32_t type_length, int64_t count);
/// Dictionary indices (1-byte bit width + RLE hybrid) against a dictionary of `dictionary_size` entries.
void DecodeDictionaryIndices(std::string_view bytes, int64_t count, int64_t dictionary_size);
/// Decompresses `bytes` with `codec`, expecting `uncompressed_size` bytes.
void Decompress(std::string_view bytes, Codec codec, size_t uncompressed_size);

}  // namespace lakerun::parquet::fuzz
