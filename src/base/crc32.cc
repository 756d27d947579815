// CRC-32 by folding: the message is treated as a polynomial over GF(2), and 128-bit lanes of it (4 in 64 bytes, or
// 16 in 256 bytes with 512-bit registers) are folded forward over the bytes after them with carry-less
// multiplications by x^k mod P (constants for the bit-reflected domain), then reduced to one lane, 64 bits and
// finally 32 bits with a Barrett reduction. The constants follow from P = 0x104C11DB7 alone (x^(N+32) and x^(N-32)
// mod P for a fold over N bits, reflected and shifted left by one); tests check the result against zlib at every
// length and alignment.
#include "lakerun/base/crc32.h"

#include "crc32_kernels.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

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
// Folding constants: x^(N+32) and x^(N-32) mod P for a fold over N bits (N = 16*128: sixteen lanes in four 512-bit
// registers; 4*128: four lanes; 128: one lane), x^64 mod P, and the Barrett pair (P, floor(x^64 / P)), all
// bit-reflected and shifted left by one as the reflected domain needs.
constexpr uint64_t kFold16[2] = {0x011542778a, 0x01322d1430};
constexpr uint64_t kFold4[2] = {0x0154442bd4, 0x01c6e41596};
constexpr uint64_t kFold1[2] = {0x01751997d0, 0x00ccaa009e};
constexpr uint64_t kFold64 = 0x0163cd6124;
constexpr uint64_t kBarrett[2] = {0x01db710641, 0x01f7011641};

__attribute__((target("pclmul,sse4.1"))) inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Where Crc32Copy stores the bytes loaded from p: `to_dst` bytes further (the destination's address minus the
// source's, as integers: the two are separate objects).
inline void* CopyTarget(const uint8_t* p, intptr_t to_dst) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(to_dst));
}

// The 16 bytes at p, also stored at CopyTarget(p, to_dst) when kCopy (Crc32Copy: the bytes are read from memory
// once, for both the copy and the CRC).
template <bool kCopy>
__attribute__((target("pclmul,sse4.1"))) inline __m128i Load(const uint8_t* p, intptr_t to_dst) {
  const __m128i x = Load(p);
  if (kCopy) _mm_storeu_si128(static_cast<__m128i*>(CopyTarget(p, to_dst)), x);
  return x;
}

// acc * x^k mod P (in 128 bits) plus `next`: the step that moves a 128-bit lane forward over the bytes after it.
__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold(__m128i acc, __m128i k, __m128i next) {
  const __m128i low = _mm_clmulepi64_si128(acc, k, 0x00);
  const __m128i high = _mm_clmulepi64_si128(acc, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Constant(const uint64_t (&k)[2]) {
  return _mm_set_epi64x(static_cast<int64_t>(k[1]), static_cast<int64_t>(k[0]));
}

// Four 128-bit lanes (64 consecutive bytes) folded into one.
__attribute__((target("pclmul,sse4.1"))) inline __m128i Join(const __m128i (&lane)[4]) {
  const __m128i k1 = Constant(kFold1);
  __m128i x = lane[0];
  for (int i = 1; i < 4; ++i) x = Fold(x, k1, lane[i]);
  return x;
}

// The bytes after the first 64 (whose lanes `lane` holds, the state already XORed in) folded 64 at a time; the rest
// (size < 64, a multiple of 16) is left to the caller. Returns the single lane. `to_dst`: see Load<kCopy>.
template <bool kCopy>
__attribute__((target("pclmul,sse4.1"))) __m128i Fold4(__m128i (&lane)[4], const uint8_t*& p, size_t& size,
                                                       intptr_t to_dst) {
  const __m128i k4 = Constant(kFold4);
  for (; size >= 64; p += 64, size -= 64) {
    for (int i = 0; i < 4; ++i) lane[i] = Fold(lane[i], k4, Load<kCopy>(p + 16 * i, to_dst));
  }
  return Join(lane);
}

#define LAKERUN_CRC32_WIDE __attribute__((target("pclmul,sse4.1,avx512f,avx512vl,vpclmulqdq")))

// Load<kCopy> for 64 bytes.
template <bool kCopy>
LAKERUN_CRC32_WIDE inline __m512i Load512(const uint8_t* p, intptr_t to_dst) {
  const __m512i x = _mm512_loadu_si512(p);
  if (kCopy) _mm512_storeu_si512(CopyTarget(p, to_dst), x);
  return x;
}

// A pair of constants in each of the four 128-bit lanes.
LAKERUN_CRC32_WIDE inline __m512i Constant512(const uint64_t (&k)[2]) {
  const auto lo = static_cast<int64_t>(k[0]), hi = static_cast<int64_t>(k[1]);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

// Fold() on four lanes at once.
LAKERUN_CRC32_WIDE inline __m512i Fold512(__m512i acc, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00), _mm512_clmulepi64_epi128(acc, k, 0x11),
                                   next, 0x96);  // a ^ b ^ c
}

// The same with 512-bit registers: sixteen lanes (256 bytes) per step, then reduced to four lanes and on by Fold4.
// Only called where the CPU has AVX-512 and VPCLMULQDQ.
template <bool kCopy>
LAKERUN_CRC32_WIDE __m128i Fold16(const uint8_t*& p, size_t& size, uint32_t state, intptr_t to_dst) {
  __m512i reg[4] = {Load512<kCopy>(p, to_dst), Load512<kCopy>(p + 64, to_dst), Load512<kCopy>(p + 128, to_dst),
                    Load512<kCopy>(p + 192, to_dst)};
  reg[0] = _mm512_xor_si512(reg[0], _mm512_castsi128_si512(_mm_cvtsi32_si128(static_cast<int>(state))));
  p += 256;
  size -= 256;
  const __m512i k16 = Constant512(kFold16);
  for (; size >= 256; p += 256, size -= 256) {
    for (int i = 0; i < 4; ++i) reg[i] = Fold512(reg[i], k16, Load512<kCopy>(p + 64 * i, to_dst));
  }
  const __m512i k4 = Constant512(kFold4);
  __m512i x = reg[0];
  for (int i = 1; i < 4; ++i) x = Fold512(x, k4, reg[i]);
  alignas(64) __m128i lane[4];
  _mm512_store_si512(lane, x);
  return Fold4<kCopy>(lane, p, size, to_dst);
}

// The raw (not inverted) CRC register after `size` bytes, size >= 64 and a multiple of 16, starting from `state`;
// `wide`: the CPU has AVX-512 and VPCLMULQDQ. kCopy: the bytes are also copied to p + to_dst.
template <bool kCopy>
__attribute__((target("pclmul,sse4.1"))) uint32_t FoldBlocks(const uint8_t* p, size_t size, uint32_t state, bool wide,
                                                             intptr_t to_dst) {
  __m128i x;
  if (wide && size >= 1024) {
    x = Fold16<kCopy>(p, size, state, to_dst);
  } else {
    __m128i lane[4] = {Load<kCopy>(p, to_dst), Load<kCopy>(p + 16, to_dst), Load<kCopy>(p + 32, to_dst),
                       Load<kCopy>(p + 48, to_dst)};
    lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi32_si128(static_cast<int>(state)));
    p += 64;
    size -= 64;
    x = Fold4<kCopy>(lane, p, size, to_dst);
  }
  const __m128i k1 = Constant(kFold1);
  for (; size >= 16; p += 16, size -= 16) x = Fold(x, k1, Load<kCopy>(p, to_dst));
  // 128 -> 64 bits.
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k1, 0x10));
  const __m128i k64 = _mm_cvtsi64_si128(static_cast<int64_t>(kFold64));
  x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, low32), k64, 0x00));
  // Barrett reduction, 64 -> 32 bits.
  const __m128i barrett = Constant(kBarrett);
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

#endif

Crc32Kernel Detect() {
#ifdef LAKERUN_CRC32_CLMUL
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1")) return Crc32Kernel::kZlib;
  const bool wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("vpclmulqdq");
  return wide ? Crc32Kernel::kClmul512 : Crc32Kernel::kClmul128;
#else
  return Crc32Kernel::kZlib;
#endif
}

Crc32Kernel Chosen() {
  static const Crc32Kernel kernel = Detect();
  return kernel;
}

}  // namespace

std::string Crc32Text(uint32_t crc) {
  char out[11];
  std::snprintf(out, sizeof(out), "0x%08x", crc);
  return out;
}

const char* Crc32Implementation() {
  switch (Chosen()) {
    case Crc32Kernel::kClmul512: return "VPCLMULQDQ, 512-bit";
    case Crc32Kernel::kClmul128: return "PCLMULQDQ, 128-bit";
    case Crc32Kernel::kZlib: break;
  }
  return "zlib crc32_z";
}

bool Crc32KernelAvailable(Crc32Kernel kernel) { return static_cast<int>(kernel) <= static_cast<int>(Chosen()); }

uint32_t Crc32With(Crc32Kernel kernel, const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
#ifdef LAKERUN_CRC32_CLMUL
  if (size >= 64 && kernel != Crc32Kernel::kZlib) {
    const size_t folded = size & ~size_t{15};
    crc = ~FoldBlocks<false>(p, folded, ~crc, kernel == Crc32Kernel::kClmul512, 0);
    p += folded;
    size -= folded;
  }
#endif
  return size == 0 ? crc : ZlibCrc32(p, size, crc);
}

uint32_t Crc32CopyWith(Crc32Kernel kernel, void* dst, const void* src, size_t size, uint32_t crc) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* p = static_cast<const uint8_t*>(src);
#ifdef LAKERUN_CRC32_CLMUL
  if (size >= 64 && kernel != Crc32Kernel::kZlib) {
    const size_t folded = size & ~size_t{15};
    crc = ~FoldBlocks<true>(p, folded, ~crc, kernel == Crc32Kernel::kClmul512,
                            static_cast<intptr_t>(reinterpret_cast<uintptr_t>(d) - reinterpret_cast<uintptr_t>(p)));
    p += folded;
    d += folded;
    size -= folded;
  }
#endif
  // zlib, and the tail: copy then hash blocks small enough to be hashed from the first level of cache.
  constexpr size_t kBlock = 16 << 10;
  for (size_t n = 0; size > 0; p += n, d += n, size -= n) {
    n = std::min(size, kBlock);
    std::memcpy(d, p, n);
    crc = ZlibCrc32(d, n, crc);
  }
  return crc;
}

uint32_t Crc32(const void* data, size_t size, uint32_t crc) { return Crc32With(Chosen(), data, size, crc); }

uint32_t Crc32Copy(void* dst, const void* src, size_t size, uint32_t crc) {
  return Crc32CopyWith(Chosen(), dst, src, size, crc);
}

}  // namespace lakerun
