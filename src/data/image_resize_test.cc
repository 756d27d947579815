#include "image_resize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "image_resize_rows.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

std::vector<uint8_t> Noise(int h, int w, int channels, uint32_t seed) {
  std::vector<uint8_t> px(static_cast<size_t>(h) * w * channels);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& v : px) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v = static_cast<uint8_t>(x >> 24);
  }
  return px;
}

// Straightforward bilinear in double: output (y, x) samples the resized image at (top + y, left + x') with
// x' = flip ? out_w - 1 - x : x, clamped to the resized image, mapped to the source at pixel centres.
double Reference(const std::vector<uint8_t>& src, const ResampleWindow& w, int c, int y, int x) {
  auto axis = [](int source, int resized, int r, int* a, int* b, double* t) {
    if (source == resized) {
      *a = *b = r;
      *t = 0;
      return;
    }
    const double f = std::max(0.0, (r + 0.5) * source / resized - 0.5);
    *a = std::min(static_cast<int>(f), source - 1);
    *b = std::min(*a + 1, source - 1);
    *t = f - *a;
  };
  const int ry = std::clamp(w.top + y, 0, w.resized_h - 1);
  const int rx = std::clamp(w.left + (w.flip ? w.out_w - 1 - x : x), 0, w.resized_w - 1);
  int y0, y1, x0, x1;
  double ty, tx;
  axis(w.src_h, w.resized_h, ry, &y0, &y1, &ty);
  axis(w.src_w, w.resized_w, rx, &x0, &x1, &tx);
  auto px = [&](int yy, int xx) { return static_cast<double>(src[(static_cast<size_t>(yy) * w.src_w + xx) * w.channels + c]); };
  return (px(y0, x0) * (1 - tx) + px(y0, x1) * tx) * (1 - ty) + (px(y1, x0) * (1 - tx) + px(y1, x1) * tx) * ty;
}

ResampleWindow Window(int src_h, int src_w, int channels, int resized_h, int resized_w, int top, int left, bool flip,
                      int out_h, int out_w) {
  return ResampleWindow{src_h, src_w, channels, resized_h, resized_w, top, left, flip, out_h, out_w};
}

std::vector<uint8_t> Resample(const std::vector<uint8_t>& src, const ResampleWindow& w) {
  std::vector<uint8_t> out(static_cast<size_t>(w.channels) * w.out_h * w.out_w, 0xAB);
  ResampleToPlanes(src.data(), w, nullptr, nullptr, out.data());
  return out;
}

void ExpectNearReference(const std::vector<uint8_t>& src, const ResampleWindow& w) {
  const std::vector<uint8_t> out = Resample(src, w);
  for (int c = 0; c < w.channels; ++c) {
    for (int y = 0; y < w.out_h; ++y) {
      for (int x = 0; x < w.out_w; ++x) {
        const double want = Reference(src, w, c, y, x);
        const int got = out[(static_cast<size_t>(c) * w.out_h + y) * w.out_w + x];
        // 8-bit weights are off by at most 1/512 per axis, so on the sharpest edges (255 apart) the value is off by
        // up to 2 x 0.5 before rounding: within one of the rounded reference, within 1.5 of the exact one.
        ASSERT_LE(std::abs(got - std::lround(want)), 1) << "src " << w.src_h << "x" << w.src_w << "x" << w.channels
                                             << " resized " << w.resized_h << "x" << w.resized_w << " window "
                                             << w.top << "," << w.left << " flip " << w.flip << " out " << w.out_h
                                             << "x" << w.out_w << " at c" << c << " y" << y << " x" << x;
        ASSERT_LE(std::abs(got - want), 1.5);
      }
    }
  }
}

struct Case {
  int src_h, src_w, resized_h, resized_w, top, left, out_h, out_w;
};

// Downscaling, upscaling, identity, odd sizes, windows reaching past every edge, 1-pixel sources, widths that are
// and are not multiples of the row kernels' 8 columns.
const Case kCases[] = {
    {112, 112, 104, 104, 3, 5, 96, 96},  {37, 53, 20, 29, 0, 0, 20, 29},  {20, 29, 37, 53, 2, 7, 31, 41},
    {17, 17, 17, 17, 0, 0, 17, 17},      {9, 13, 9, 13, -2, -3, 13, 19},  {1, 1, 5, 7, 0, 0, 5, 7},
    {1, 23, 3, 69, 0, 0, 3, 69},         {23, 1, 69, 3, 0, 0, 69, 3},     {64, 48, 21, 16, 0, 0, 21, 16},
    {5, 300, 2, 120, 0, 1, 2, 119},      {33, 35, 33, 35, 30, 30, 8, 9},  {2, 2, 1, 1, 0, 0, 1, 1},
    {3, 1, 9, 17, 0, 0, 9, 17},          {4, 2, 12, 24, 0, 0, 12, 24},
};

TEST(ResampleTest, MatchesReferenceBilinearWithinOneRgbAndGrey) {
  uint32_t seed = 1;
  for (const Case& k : kCases) {
    for (int channels : {1, 3}) {
      for (bool flip : {false, true}) {
        const auto src = Noise(k.src_h, k.src_w, channels, seed++);
        ExpectNearReference(src, Window(k.src_h, k.src_w, channels, k.resized_h, k.resized_w, k.top, k.left, flip,
                                        k.out_h, k.out_w));
      }
    }
  }
}

TEST(ResampleTest, FusedCropEqualsResizeThenCrop) {
  for (int channels : {1, 3}) {
    const auto src = Noise(45, 61, channels, 7 + channels);
    const int rh = 38, rw = 51;
    const std::vector<uint8_t> full = Resample(src, Window(45, 61, channels, rh, rw, 0, 0, false, rh, rw));
    for (const auto& [top, left, oh, ow] : {std::array<int, 4>{0, 0, 38, 51}, std::array<int, 4>{5, 9, 20, 33},
                                            std::array<int, 4>{37, 50, 1, 1}, std::array<int, 4>{11, 2, 17, 8}}) {
      for (bool flip : {false, true}) {
        const std::vector<uint8_t> cropped = Resample(src, Window(45, 61, channels, rh, rw, top, left, flip, oh, ow));
        for (int c = 0; c < channels; ++c) {
          for (int y = 0; y < oh; ++y) {
            for (int x = 0; x < ow; ++x) {
              const int fx = left + (flip ? ow - 1 - x : x);
              ASSERT_EQ(cropped[(static_cast<size_t>(c) * oh + y) * ow + x],
                        full[(static_cast<size_t>(c) * rh + top + y) * rw + fx])
                  << "window " << top << "," << left << " " << oh << "x" << ow << " flip " << flip << " c" << c
                  << " y" << y << " x" << x;
            }
          }
        }
      }
    }
  }
}

TEST(ResampleTest, FloatOutputIsTheUnroundedValueScaledAndShifted) {
  const auto src = Noise(30, 41, 3, 99);
  const ResampleWindow w = Window(30, 41, 3, 22, 30, 1, 2, true, 19, 27);
  const std::vector<uint8_t> bytes = Resample(src, w);
  std::vector<float> floats(bytes.size());
  const float scale[3] = {1 / 255.0f, 2 / 255.0f, -1 / 255.0f}, shift[3] = {0.0f, -1.0f, 0.5f};
  ResampleToPlanes(src.data(), w, scale, shift, floats.data());
  const size_t plane = static_cast<size_t>(w.out_h) * w.out_w;
  for (size_t i = 0; i < floats.size(); ++i) {
    const size_t c = i / plane;
    const float value = (floats[i] - shift[c]) / scale[c];  // back in [0, 255]
    ASSERT_NEAR(value, bytes[i], 0.5f + 1e-3f) << i;
  }
}

TEST(ResampleTest, RowKernelsMatchThePortableBlend) {
  // Every tap shape the loader produces: edges as (p - 1, p) with weights (0, 256), steps below and above 1.
  const std::vector<RowKernels> kernels = AvailableRowKernels();
  ASSERT_STREQ(kernels.front().name, "portable");
  for (int channels : {1, 3}) {
    const int width = 77;
    const auto row = Noise(1, width + 1, channels, 5);  // one spare pixel: kernels may read 2 bytes past the end
    for (int count : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 96, 150}) {
      std::vector<int> first(count);
      std::vector<int16_t> pair(2 * count + 16);
      for (int x = 0; x < count; ++x) {
        first[x] = (x * 37 + count) % (width - 1);
        const int w = (x * 53) % 257;
        pair[2 * x] = static_cast<int16_t>(256 - w);
        pair[2 * x + 1] = static_cast<int16_t>(w);
      }
      const RowTaps taps{first.data(), pair.data(), count};
      std::vector<float> portable(static_cast<size_t>(channels) * count);
      kernels.front().blend(row.data(), channels, taps, portable.data(), count);
      for (int x = 0; x < count; ++x) {
        for (int c = 0; c < channels; ++c) {
          const int want = row[first[x] * channels + c] * pair[2 * x] + row[(first[x] + 1) * channels + c] * pair[2 * x + 1];
          ASSERT_EQ(portable[static_cast<size_t>(c) * count + x], static_cast<float>(want));
        }
      }
      for (const RowKernels& kernel : kernels) {
        std::vector<float> out(portable.size(), -1.0f);
        kernel.blend(row.data(), channels, taps, out.data(), count);
        EXPECT_EQ(out, portable) << kernel.name << ", " << channels << " channels, " << count << " columns";
      }
      std::vector<float> fast(portable.size(), -1.0f);
      BlendRow(row.data(), channels, taps, fast.data(), count);
      EXPECT_EQ(fast, portable) << "BlendRow, " << channels << " channels, " << count << " columns";
    }
  }
}

TEST(ResampleTest, MixKernelsRoundLikeTheIntegers) {
  // a, b: blended values (integers up to 255 * 256); the row weights over 65536 add up to 1 / 256.
  const std::vector<RowKernels> kernels = AvailableRowKernels();
  for (int n : {1, 15, 16, 17, 31, 32, 33, 63, 96, 100}) {
    std::vector<float> a(n), b(n);
    for (int x = 0; x < n; ++x) {
      a[x] = static_cast<float>((x * 7919 + 13) % (255 * 256 + 1));
      b[x] = static_cast<float>((x * 104729 + n) % (255 * 256 + 1));
    }
    for (int wy : {0, 1, 77, 128, 255, 256}) {
      std::vector<uint8_t> want(n);
      for (int x = 0; x < n; ++x) {
        const int64_t v = static_cast<int64_t>(a[x]) * (256 - wy) + static_cast<int64_t>(b[x]) * wy;
        want[x] = static_cast<uint8_t>((v + 32768) >> 16);
      }
      const float wa = (256 - wy) / 65536.0f, wb = wy / 65536.0f;
      for (const RowKernels& kernel : kernels) {
        std::vector<uint8_t> got(n + 1, 0xAB);
        kernel.mix(a.data(), b.data(), wa, wb, n, got.data());
        EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.begin() + n), want) << kernel.name << ", " << n << " values";
        EXPECT_EQ(got[n], 0xAB) << kernel.name << " wrote past " << n << " values";
      }
    }
  }
}

}  // namespace
}  // namespace lakerun::data
