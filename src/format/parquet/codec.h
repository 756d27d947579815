// Page compression codecs: UNCOMPRESSED, SNAPPY, GZIP, BROTLI, LZ4 (Hadoop framing), ZSTD, LZ4_RAW.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lakerun/format/parquet/types.h"

namespace lakerun::parquet {

/// Decompresses `input` into exactly `output_size` bytes at `output`. Throws CorruptDataError "<context>: ..." when
/// the data is corrupt or does not decompress to exactly output_size bytes; NotImplemented for LZO and unknown
/// codecs. GZIP accepts multi-member streams (and zlib streams); LZ4 accepts the Hadoop block framing, falling back
/// to an LZ4 frame, then to a raw LZ4 block.
void Decompress(Codec codec, std::string_view input, uint8_t* output, size_t output_size, const std::string& context);

/// Compresses `input`, appending to `out`. `level` 0 picks the codec's default.
void Compress(Codec codec, int level, std::string_view input, std::string* out);

/// Whether Compress supports `codec`.
bool CanCompress(Codec codec);

}  // namespace lakerun::parquet
