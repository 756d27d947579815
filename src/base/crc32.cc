// CRC-32 by folding: the message is treated as a polynomial over GF(2), and 512 bits at a time are folded forward
// into the next 512 with carry-less multiplications by x^k mod P (constants for the bit-reflected domain), then
// reduced to 128, 64 and finally 32 bits with a Barrett reduction. The constants follow from P = 0x104C11DB7 alone;
// tests check the result against zlib at every length and alignment.
#include "lakerun/base/crc32.h"

#include <zlib.h>

#include <cstdio>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LAKERUN_CRC32_CLMUL 1
#endif

namespace lakerun {
namespace {

uint32_t ZlibCrc32(const uint8_t* data, size_t size, uint32_t crc) {
  return static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(data), size));
}

#ifdef LAKERUN_CRC32_CLMUL
// Folding constants: x^(4*128+32) and x^(4*128-32) mod P (four lanes), x^(128+32) and x^(128-32) mod P (one lane),
// x^64 mod P, and the Barrett pair (P, floor(x^64 / P)), all bit-reflected and shifted as the reflected domain needs.
constexpr uint64_t kFold4[2] = {0x0154442bd4, 0x01c6e41596};
constexpr uint64_t kFold1[2] = {0x01751997d0, 0x00ccaa009e};
constexpr uint64_t kFold64 = 0x0163cd6124;
constexpr uint64_t kBarrett[2] = {0x01db710641, 0x01f7011641};

__attribute__((target("pclmul,sse4.1"))) inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// acc * x^k mod P (in 128 bits) plus `next`: the step that moves a 128-bit lane forward over the bytes after it.
__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold(__m128i acc, __m128i k, __m128i next) {
  const __m128i low = _mm_clmulepi64_si128(acc, k, 0x00);
  const __m128i high = _mm_clmulepi64_si128(acc, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

// The raw (not inverted) CRC register after `size` bytes, size >= 64 and a multiple of 16, starting from `state`.
__attribute__((target("pclmul,sse4.1"))) uint32_t FoldBlocks(const uint8_t* p, size_t size, uint32_t state) {
  __m128i lane[4] = {Load(p), Load(p + 16), Load(p + 32), Load(p + 48)};
  lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi32_si128(static_cast<int>(state)));
  p += 64;
  size -= 64;
  const __m128i k4 = _mm_set_epi64x(static_cast<int64_t>(kFold4[1]), static_cast<int64_t>(kFold4[0]));
  for (; size >= 64; p += 64, size -= 64) {
    for (int i = 0; i < 4; ++i) lane[i] = Fold(lane[i], k4, Load(p + 16 * i));
  }
  const __m128i k1 = _mm_set_epi64x(static_cast<int64_t>(kFold1[1]), static_cast<int64_t>(kFold1[0]));
  __m128i x = lane[0];
  for (int i = 1; i < 4; ++i) x = Fold(x, k1, lane[i]);
  for (; size >= 16; p += 16, size -= 16) x = Fold(x, k1, Load(p));
  // 128 -> 64 bits.
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k1, 0x10));
  const __m128i k64 = _mm_cvtsi64_si128(static_cast<int64_t>(kFold64));
  x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, low32), k64, 0x00));
  // Barrett reduction, 64 -> 32 bits.
  const __m128i barrett = _mm_set_epi64x(static_cast<int64_t>(kBarrett[1]), static_cast<int64_t>(kBarrett[0]));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

bool HasClmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
#endif

}  // namespace

std::string Crc32Text(uint32_t crc) {
  char out[11];
  std::snprintf(out, sizeof(out), "0x%08x", crc);
  return out;
}

bool Crc32IsAccelerated() {
#ifdef LAKERUN_CRC32_CLMUL
  static const bool has = HasClmul();
  return has;
#else
  return false;
#endif
}

uint32_t Crc32(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
#ifdef LAKERUN_CRC32_CLMUL
  if (size >= 64 && Crc32IsAccelerated()) {
    const size_t folded = size & ~size_t{15};
    crc = ~FoldBlocks(p, folded, ~crc);
    p += folded;
    size -= folded;
  }
#endif
  return size == 0 ? crc : ZlibCrc32(p, size, crc);
}

}  // namespace lakerun
