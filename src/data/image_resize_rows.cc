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

__attribute__((target("avx2"))) inline __m256i Lanes(__m128i low, __m128i high) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
}

__attribute__((target("avx2"))) inline __m256i RoundedBlend8(const float* a, const float* b, __m256 wa, __m256 wb) {
  const __m256 half = _mm256_set1_ps(0.5f);
  return _mm256_cvttps_epi32(
      _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(a), wa), _mm256_mul_ps(_mm256_loadu_ps(b), wb)), half));
}

// The SSE4.1 kernel twice over: 16 output columns per step, columns x..x+7 in the low 128-bit lane and x+8..x+15 in
// the high one (AVX2 shuffles and multiply-adds work per lane). The results come out as lane 0 = columns x..x+3 |
// x+8..x+11 and lane 1 = x+4..x+7 | x+12..x+15; two cross-lane permutes put them back in column order. Same
// integer arithmetic, so bit-identical to the other kernels.
__attribute__((target("avx2"))) void BlendRgbAvx2(const uint8_t* row, const RowTaps& taps, float* out,
                                                  int plane_stride) {
  // The SSE4.1 kernel's byte shuffles, the same in both lanes.
  constexpr char Z = static_cast<char>(0x80);
  const __m256i kLow[3] = {
      _mm256_broadcastsi128_si256(_mm_setr_epi8(0, Z, 3, Z, 8, Z, 11, Z, Z, Z, Z, Z, Z, Z, Z, Z)),
      _mm256_broadcastsi128_si256(_mm_setr_epi8(1, Z, 4, Z, 9, Z, 12, Z, Z, Z, Z, Z, Z, Z, Z, Z)),
      _mm256_broadcastsi128_si256(_mm_setr_epi8(2, Z, 5, Z, 10, Z, 13, Z, Z, Z, Z, Z, Z, Z, Z, Z))};
  const __m256i kHigh[3] = {
      _mm256_broadcastsi128_si256(_mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, 0, Z, 3, Z, 8, Z, 11, Z)),
      _mm256_broadcastsi128_si256(_mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, 1, Z, 4, Z, 9, Z, 12, Z)),
      _mm256_broadcastsi128_si256(_mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, 2, Z, 5, Z, 10, Z, 13, Z))};
  const int* first = taps.first;
  auto two = [&](int x) {
    return _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + first[x] * 3)),
                              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + first[x + 1] * 3)));
  };
  // (Lambdas do not inherit the target attribute: only SSE2 code may go in them.)
  auto weight_pairs = [&](int x) { return reinterpret_cast<const __m128i*>(taps.pair + 2 * x); };
  int x = 0;
  for (; x + 16 <= taps.count; x += 16) {
    const __m256i a = Lanes(two(x), two(x + 8)), b = Lanes(two(x + 2), two(x + 10));
    const __m256i c = Lanes(two(x + 4), two(x + 12)), d = Lanes(two(x + 6), two(x + 14));
    // Weight pairs of columns x..x+3 | x+8..x+11, and x+4..x+7 | x+12..x+15.
    const __m256i w_lo = Lanes(_mm_loadu_si128(weight_pairs(x)), _mm_loadu_si128(weight_pairs(x + 8)));
    const __m256i w_hi = Lanes(_mm_loadu_si128(weight_pairs(x + 4)), _mm_loadu_si128(weight_pairs(x + 12)));
    for (int ch = 0; ch < 3; ++ch) {
      const __m256i lo = _mm256_or_si256(_mm256_shuffle_epi8(a, kLow[ch]), _mm256_shuffle_epi8(b, kHigh[ch]));
      const __m256i hi = _mm256_or_si256(_mm256_shuffle_epi8(c, kLow[ch]), _mm256_shuffle_epi8(d, kHigh[ch]));
      const __m256 f_lo = _mm256_cvtepi32_ps(_mm256_madd_epi16(lo, w_lo));  // x..x+3 | x+8..x+11
      const __m256 f_hi = _mm256_cvtepi32_ps(_mm256_madd_epi16(hi, w_hi));  // x+4..x+7 | x+12..x+15
      float* dst = out + ch * plane_stride + x;
      _mm256_storeu_ps(dst, _mm256_permute2f128_ps(f_lo, f_hi, 0x20));
      _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(f_lo, f_hi, 0x31));
    }
  }
  BlendRowScalar<3>(row, taps, x, out, plane_stride);
}

// MixRowsToBytes on 32 values per step. The packs work per 128-bit lane, leaving 4-byte groups in the order
// 0 2 4 6 | 1 3 5 7 of the four 8-value inputs' halves; one dword permute restores it.
__attribute__((target("avx2"))) int MixRowsAvx2(const float* a, const float* b, float wa, float wb, int n,
                                                uint8_t* out) {
  const __m256 va = _mm256_set1_ps(wa), vb = _mm256_set1_ps(wb);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int x = 0;
  for (; x + 32 <= n; x += 32) {
    const __m256i lo =
        _mm256_packs_epi32(RoundedBlend8(a + x, b + x, va, vb), RoundedBlend8(a + x + 8, b + x + 8, va, vb));
    const __m256i hi =
        _mm256_packs_epi32(RoundedBlend8(a + x + 16, b + x + 16, va, vb), RoundedBlend8(a + x + 24, b + x + 24, va, vb));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(lo, hi), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), bytes);
  }
  return x;
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

// Each Mix* kernel returns how many leading values it wrote; the caller finishes the rest with a narrower one.
int MixRowsSse2(const float* a, const float* b, float wa, float wb, int n, uint8_t* out) {
  // 16 bytes per step; the packs saturate, which never triggers for values in [0, 255].
  const __m128 va = _mm_set1_ps(wa), vb = _mm_set1_ps(wb), half = _mm_set1_ps(0.5f);
  auto four = [&](int i) {
    const __m128 v = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(a + i), va), _mm_mul_ps(_mm_loadu_ps(b + i), vb)),
                                half);
    return _mm_cvttps_epi32(v);
  };
  int x = 0;
  for (; x + 16 <= n; x += 16) {
    const __m128i lo = _mm_packs_epi32(four(x), four(x + 4));
    const __m128i hi = _mm_packs_epi32(four(x + 8), four(x + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), _mm_packus_epi16(lo, hi));
  }
  return x;
}
#endif

void BlendPortable(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride) {
  if (channels == 1) return BlendRowScalar<1>(row, taps, 0, out, plane_stride);
  BlendRowScalar<3>(row, taps, 0, out, plane_stride);
}

void MixPortable(const float* a, const float* b, float wa, float wb, int n, uint8_t* out) {
  MixRowsScalar(a, b, wa, wb, 0, n, out);
}

#ifdef LAKERUN_RESIZE_SSE41
void BlendSse41(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride) {
  if (channels == 1) return BlendGreySse2(row, taps, out);
  BlendRgbSse41(row, taps, out, plane_stride);
}

void MixSse2(const float* a, const float* b, float wa, float wb, int n, uint8_t* out) {
  MixRowsScalar(a, b, wa, wb, MixRowsSse2(a, b, wa, wb, n, out), n, out);
}

void BlendAvx2(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride) {
  if (channels == 1) return BlendGreySse2(row, taps, out);
  BlendRgbAvx2(row, taps, out, plane_stride);
}

void MixAvx2(const float* a, const float* b, float wa, float wb, int n, uint8_t* out) {
  const int x = MixRowsAvx2(a, b, wa, wb, n, out);
  const int y = x + MixRowsSse2(a + x, b + x, wa, wb, n - x, out + x);
  MixRowsScalar(a, b, wa, wb, y, n, out);
}
#endif

const RowKernels& Best() {
  static const RowKernels best = AvailableRowKernels().back();
  return best;
}

}  // namespace

std::vector<RowKernels> AvailableRowKernels() {
  std::vector<RowKernels> kernels{{"portable", BlendPortable, MixPortable}};
#ifdef LAKERUN_RESIZE_SSE41
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.1")) kernels.push_back({"sse4.1", BlendSse41, MixSse2});
  if (__builtin_cpu_supports("avx2")) kernels.push_back({"avx2", BlendAvx2, MixAvx2});
#endif
  return kernels;
}

void MixRowsToBytes(const float* a, const float* b, float wa, float wb, int n, uint8_t* out) {
  Best().mix(a, b, wa, wb, n, out);
}

void BlendRow(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride) {
  Best().blend(row, channels, taps, out, plane_stride);
}

}  // namespace lakerun::data
