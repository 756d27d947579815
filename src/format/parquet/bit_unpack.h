// Word-at-a-time unpacking of LSB-first bit-packed integers (the RLE/bit-packed hybrid's and DELTA_BINARY_PACKED's
// layout), specialised per bit width so shifts and masks are constants.
#pragma once

#include <cstdint>
#include <cstring>

namespace lakerun::parquet::bits {

inline uint64_t LoadLE64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only (x86-64, aarch64)
}

/// Unpacks 8 values of BW bits (BW <= 32) from `in` (BW bytes; up to 8 bytes past them may be read: callers pass
/// padded input) into out[0..8).
template <int BW, typename T>
inline void Unpack8(const uint8_t* in, T* out) {
  if constexpr (BW == 0) {
    for (int i = 0; i < 8; ++i) out[i] = 0;
  } else {
    constexpr uint64_t kMask = BW == 64 ? ~uint64_t{0} : ((uint64_t{1} << BW) - 1);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const int bit = i * BW;
      out[i] = static_cast<T>((LoadLE64(in + (bit >> 3)) >> (bit & 7)) & kMask);
    }
  }
}

/// Unpacks 8 values of up to 64 bits with a runtime width (DELTA_BINARY_PACKED may use > 32 bits). Reads up to
/// 16 bytes past `in` (callers pass padded input).
inline void Unpack8Wide(const uint8_t* in, int bw, uint64_t* out) {
  if (bw == 0) {
    for (int i = 0; i < 8; ++i) out[i] = 0;
    return;
  }
  const uint64_t mask = bw == 64 ? ~uint64_t{0} : ((uint64_t{1} << bw) - 1);
  for (int i = 0; i < 8; ++i) {
    const int bit = i * bw;
    const uint8_t* p = in + (bit >> 3);
    const int shift = bit & 7;
    uint64_t v = LoadLE64(p) >> shift;
    if (shift + bw > 64) v |= static_cast<uint64_t>(p[8]) << (64 - shift);
    out[i] = v & mask;
  }
}

/// Dispatches Unpack8<bw> over `groups` groups of 8 values; `in` must have groups*bw bytes plus 8 bytes of padding.
template <typename T>
void UnpackGroups(const uint8_t* in, int bw, int64_t groups, T* out);

}  // namespace lakerun::parquet::bits
