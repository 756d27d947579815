#include "image_resize_rows.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LAKERUN_RESIZE_SSE41 1
#endif

namespace lakerun::data {
namespace {

template <int C>
void BlendRowScalar(const uint8_t* __restrict row, const RowTaps& taps, int begin, float* __restrict out,
                    int plane_stride) {
  const int* __restrict first = taps.first;
  const int16_t* __restrict pair = taps.pair;
  for (int x = begin; x < taps.count; ++x) {
    const uint8_t* p = row + first[x] * C;
    const int wa = pair[2 * x], wb = pair[2 * x + 1];
    for (int c = 0; c < C; ++c) out[c * plane_stride + x] = static_cast<float>(p[c] * wa + p[C + c] * wb);
  }
}

void MixRowsScalar(const float* __restrict a, const float* __restrict b, float wa, float wb, int begin, int n,
                   uint8_t* __restrict out) {
  // Values are non-negative: truncating value + 0.5 rounds half up, as (v + 32768) >> 16 does on the integers.
  for (int x = begin; x < n; ++x) out[x] = static_cast<uint8_t>(static_cast<int>(a[x] * wa + b[x] * wb + 0.5f));
}

#ifdef LAKERUN_RESIZE_SSE41
// RGB, 8 output columns per step: each column's two source pixels (6 bytes) come in with one 8-byte load, byte
// shuffles gather every channel's (first, second) pairs as int16, and one multiply-add per 4 columns blends them.
__attribute__((target("sse4.1"))) void BlendRgbSse41(const uint8_t* row, const RowTaps& taps, float* out,
                                                      int plane_stride) {
  // Register L holds column j's pixels in bytes 0-5 and column j + 1's in bytes 8-13. kLow[c] puts channel c's pairs
  // of both columns into int16 lanes 0-3, kHigh[c] those of the next register into lanes 4-7 (0x80: zero byte).
  constexpr char Z = static_cast<char>(0x80);
  const __m128i kLow[3] = {_mm_setr_epi8(0, Z, 3, Z, 8, Z, 11, Z, Z, Z, Z, Z, Z, Z, Z, Z),
                           _mm_setr_epi8(1, Z, 4, Z, 9, Z, 12, Z, Z, Z, Z, Z, Z, Z, Z, Z),
                           _mm_setr_epi8(2, Z, 5, Z, 10, Z, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z)};
  const __m128i kHigh[3] = {_mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, 0, Z, 3, Z, 8, Z, 11, Z),
                            _mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, 1, Z, 4, Z, 9, Z, 12, Z),
                            _mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, 2, Z, 5, Z, 10, Z, 13, Z)};
  const int* first = taps.first;
  auto two = [&](int x) {
    return _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + first[x] * 3)),
                              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + first[x + 1] * 3)));
  };
  int x = 0;
  for (; x + 8 <= taps.count; x += 8) {
    const __m128i a = two(x), b = two(x + 2), c = two(x + 4), d = two(x + 6);
    const __m128i w_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(taps.pair + 2 * x));
    const __m128i w_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(taps.pair + 2 * x + 8));
    for (int ch = 0; ch < 3; ++ch) {
      const __m128i lo = _mm_or_si128(_mm_shuffle_epi8(a, kLow[ch]), _mm_shuffle_epi8(b, kHigh[ch]));
      const __m128i hi = _mm_or_si128(_mm_shuffle_epi8(c, kLow[ch]), _mm_shuffle_epi8(d, kHigh[ch]));
      float* dst = out + ch * plane_stride + x;
      _mm_storeu_ps(dst, _mm_cvtepi32_ps(_mm_madd_epi16(lo, w_lo)));
      _mm_storeu_ps(dst + 4, _mm_cvtepi32_ps(_mm_madd_epi16(hi, w_hi)));
    }
  }
  BlendRowScalar<3>(row, taps, x, out, plane_stride);
}

inline int Word(const uint8_t* p) {
  uint16_t w;
  std::memcpy(&w, p, 2);
  return w;
}

// Grey, 8 output columns per step (SSE2, every x86-64): each column's two source pixels are one 16-bit load, widened
// to int16 pairs for the same multiply-add.
void BlendGreySse2(const uint8_t* row, const RowTaps& taps, float* out) {
  const int* first = taps.first;
  const __m128i zero = _mm_setzero_si128();
  int x = 0;
  for (; x + 8 <= taps.count; x += 8) {
    __m128i pairs = zero;
    pairs = _mm_insert_epi16(pairs, Word(row + first[x]), 0);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 1]), 1);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 2]), 2);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 3]), 3);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 4]), 4);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 5]), 5);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 6]), 6);
    pairs = _mm_insert_epi16(pairs, Word(row + first[x + 7]), 7);
    const __m128i w_lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(taps.pair + 2 * x));
    const __m128i w_hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(taps.pair + 2 * x + 8));
    _mm_storeu_ps(out + x, _mm_cvtepi32_ps(_mm_madd_epi16(_mm_unpacklo_epi8(pairs, zero), w_lo)));
    _mm_storeu_ps(out + x + 4, _mm_cvtepi32_ps(_mm_madd_epi16(_mm_unpackhi_epi8(pairs, zero), w_hi)));
  }
  BlendRowScalar<1>(row, taps, x, out, 0);
}

bool HasSse41() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.1");
}
#endif

}  // namespace

void MixRowsToBytes(const float* a, const float* b, float wa, float wb, int n, uint8_t* out) {
  int x = 0;
#ifdef LAKERUN_RESIZE_SSE41
  // SSE2 (every x86-64): 16 bytes per step; the packs saturate, which never triggers for values in [0, 255].
  const __m128 va = _mm_set1_ps(wa), vb = _mm_set1_ps(wb), half = _mm_set1_ps(0.5f);
  auto four = [&](int i) {
    const __m128 v = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(a + i), va), _mm_mul_ps(_mm_loadu_ps(b + i), vb)),
                                half);
    return _mm_cvttps_epi32(v);
  };
  for (; x + 16 <= n; x += 16) {
    const __m128i lo = _mm_packs_epi32(four(x), four(x + 4));
    const __m128i hi = _mm_packs_epi32(four(x + 8), four(x + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), _mm_packus_epi16(lo, hi));
  }
#endif
  MixRowsScalar(a, b, wa, wb, x, n, out);
}

void BlendRow(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride) {
#ifdef LAKERUN_RESIZE_SSE41
  if (channels == 1) return BlendGreySse2(row, taps, out);
#endif
  if (channels == 1) return BlendRowScalar<1>(row, taps, 0, out, plane_stride);
#ifdef LAKERUN_RESIZE_SSE41
  static const bool sse41 = HasSse41();
  if (sse41) return BlendRgbSse41(row, taps, out, plane_stride);
#endif
  BlendRowScalar<3>(row, taps, 0, out, plane_stride);
}

void BlendRowPortable(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride) {
  if (channels == 1) return BlendRowScalar<1>(row, taps, 0, out, plane_stride);
  BlendRowScalar<3>(row, taps, 0, out, plane_stride);
}

}  // namespace lakerun::data
