#include "image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "image_resize_rows.h"

namespace lakerun::data {
namespace {

constexpr int kOne = 256;  // weights are 8-bit fixed point: a tap pair's weights add up to kOne

// Source taps of every coordinate of an axis resized from `source` to `resized` (half-pixel centres): first[r] and
// second[r] are source indices, weight[r] the 8-bit weight of second[r]. Kept per thread for the last geometry seen:
// a table's images mostly share one size, and only the crop offset and flip change from image to image.
struct AxisTable {
  int source = -1;
  int resized = -1;
  std::vector<int> first, second, weight;

  void Build(int source_size, int resized_size) {
    if (source == source_size && resized == resized_size) return;
    source = source_size;
    resized = resized_size;
    first.resize(resized);
    second.resize(resized);
    weight.resize(resized);
    const bool identity = source == resized;
    const double step = static_cast<double>(source) / resized;
    for (int r = 0; r < resized; ++r) {
      int a = r, b = r, w = 0;
      if (!identity) {
        const double f = std::max(0.0, (r + 0.5) * step - 0.5);
        a = std::min(static_cast<int>(f), source - 1);
        b = std::min(a + 1, source - 1);
        w = static_cast<int>(std::lround((f - a) * kOne));
      }
      first[r] = a;
      second[r] = b;
      weight[r] = w;
    }
  }
};

// Taps of `count` consecutive output coordinates starting at resized coordinate `first` (reversed when `reverse`).
// The resized coordinate is clamped to [0, resized), so crops larger than the resized image repeat its edge.
void AxisTaps(AxisTable& table, int source, int resized, int first, int count, bool reverse, int* first_tap,
              int* second_tap, int* weight) {
  table.Build(source, resized);
  for (int i = 0; i < count; ++i) {
    const int r = std::clamp(first + (reverse ? count - 1 - i : i), 0, resized - 1);
    first_tap[i] = table.first[r];
    second_tap[i] = table.second[r];
    weight[i] = table.weight[r];
  }
}

// Per-thread tables and rows, grown once and reused (no allocation per image).
struct Scratch {
  AxisTable columns, rows;
  std::vector<int> x0, x1, wx, y0, y1, wy, first;
  std::vector<int16_t> pair;
  std::vector<float> blended[2];     // two horizontally blended source rows, `channels` planes of out_w each
  std::vector<uint8_t> last_row;     // a row near the source's end, padded so row kernels may read past its end
};

// Horizontal pass first, on each source row the window reads (at most twice, kept in two slots), then a vertical
// pass over contiguous planes straight into the output. The same products as blending all four neighbours at once:
// value * 65536 = sum of pixel * row weight * column weight, exact in integers, so the order of passes changes
// nothing.
template <bool kFloat>
void Resample(const uint8_t* src, const ResampleWindow& win, const float* scale, const float* shift, void* out) {
  thread_local Scratch s;
  const int C = win.channels, out_w = win.out_w, out_h = win.out_h;
  s.x0.resize(out_w);
  s.x1.resize(out_w);
  s.wx.resize(out_w);
  s.y0.resize(out_h);
  s.y1.resize(out_h);
  s.wy.resize(out_h);
  AxisTaps(s.columns, win.src_w, win.resized_w, win.left, out_w, win.flip, s.x0.data(), s.x1.data(), s.wx.data());
  AxisTaps(s.rows, win.src_h, win.resized_h, win.top, out_h, false, s.y0.data(), s.y1.data(), s.wy.data());
  // Column taps in the row kernels' form: always the pixels (first, first + 1).
  s.first.resize(out_w);
  s.pair.resize(2 * static_cast<size_t>(out_w) + 16);
  for (int x = 0; x < out_w; ++x) {
    int first = s.x0[x], wa = kOne - s.wx[x], wb = s.wx[x];
    if (s.x1[x] == first) {  // an edge: one pixel, full weight
      if (first > 0) {
        --first;
        wa = 0;
        wb = kOne;
      } else {
        wa = kOne;  // a 1-pixel-wide source: pixel 1 is read with weight 0 (the next row, or padding)
        wb = 0;
      }
    }
    s.first[x] = first;
    s.pair[2 * x] = static_cast<int16_t>(wa);
    s.pair[2 * x + 1] = static_cast<int16_t>(wb);
  }
  const RowTaps taps{s.first.data(), s.pair.data(), out_w};
  const size_t stride = static_cast<size_t>(win.src_w) * C;
  const auto row_at = [&](int r) -> const uint8_t* {
    // Row kernels may read 2 bytes past a row's end (the rows below hold them), or past 1-pixel rows up to 8 bytes
    // from their start: rows that close to the end of the source are read from a padded copy.
    if (static_cast<size_t>(win.src_h - 1 - r) * stride >= 16) return src + r * stride;
    s.last_row.assign(stride + 16, 0);
    std::copy(src + r * stride, src + (r + 1) * stride, s.last_row.begin());
    return s.last_row.data();
  };
  int slot_row[2] = {-1, -1};
  for (auto& b : s.blended) b.resize(static_cast<size_t>(C) * out_w);
  // The slot holding blended source row r, blending it first unless it is there; never evicts row `keep`.
  const auto blended = [&](int r, int keep) -> const float* {
    for (int i = 0; i < 2; ++i) {
      if (slot_row[i] == r) return s.blended[i].data();
    }
    const int i = slot_row[0] == keep ? 1 : 0;
    BlendRow(row_at(r), C, taps, s.blended[i].data(), out_w);
    slot_row[i] = r;
    return s.blended[i].data();
  };
  const size_t plane = static_cast<size_t>(out_h) * out_w;
  float mul[3] = {0, 0, 0}, add[3] = {0, 0, 0};
  if constexpr (kFloat) {
    for (int c = 0; c < C; ++c) {
      mul[c] = scale[c] / 65536.0f;  // exact: a power of two
      add[c] = shift[c];
    }
  }
  for (int y = 0; y < out_h; ++y) {
    const float* h0 = blended(s.y0[y], -1);
    const float* h1 = blended(s.y1[y], s.y0[y]);
    const auto wb = static_cast<float>(s.wy[y]), wa = static_cast<float>(kOne - s.wy[y]);
    for (int c = 0; c < C; ++c) {
      // Float arithmetic on integers below 2^24 is exact: v = a * wa + b * wb is the same integer as in int32, and
      // scaling by powers of two is exact too, so uint8 output (v / 65536 rounded) matches (v + 32768) >> 16.
      const float* __restrict a = h0 + static_cast<size_t>(c) * out_w;
      const float* __restrict b = h1 + static_cast<size_t>(c) * out_w;
      const size_t base = c * plane + static_cast<size_t>(y) * out_w;
      if constexpr (kFloat) {
        float* __restrict d = static_cast<float*>(out) + base;
        const float m = mul[c], k = add[c];
        for (int x = 0; x < out_w; ++x) d[x] = (a[x] * wa + b[x] * wb) * m + k;
      } else {
        MixRowsToBytes(a, b, wa * (1.0f / 65536.0f), wb * (1.0f / 65536.0f), out_w,
                       static_cast<uint8_t*>(out) + base);
      }
    }
  }
}

}  // namespace

void ResampleToPlanes(const uint8_t* src, const ResampleWindow& window, const float* scale, const float* shift,
                      void* out) {
  if (window.out_h <= 0 || window.out_w <= 0) return;
  if (scale != nullptr) return Resample<true>(src, window, scale, shift, out);
  Resample<false>(src, window, scale, shift, out);
}

}  // namespace lakerun::data
