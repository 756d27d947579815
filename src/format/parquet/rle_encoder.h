// Encoder of the RLE/bit-packed hybrid: runs of 8 or more equal values become RLE runs, the rest bit-packed groups
// of 8 (the final group zero-padded; readers decode only the count they know).
#pragma once

#include <cstdint>
#include <string>

namespace lakerun::parquet {

/// Appends the hybrid encoding of values[0..n) with `bit_width` bits (no length prefix) to `out`.
template <typename T>
void EncodeRleHybrid(const T* values, int64_t n, int bit_width, std::string* out);

/// Appends a 4-byte little-endian length followed by the hybrid encoding (v1 levels, RLE booleans).
template <typename T>
void EncodeRleHybridWithLength(const T* values, int64_t n, int bit_width, std::string* out);

}  // namespace lakerun::parquet
