// Fused bilinear resize + crop + horizontal flip of HWC uint8 pixels into CHW planes (uint8, or float scaled and
// shifted per channel), in integer arithmetic. Torch-free.
//
// Only the output pixels that survive the crop are computed: the crop window is mapped back into source coordinates
// through per-row and per-column tap tables (two source indices and an 8-bit weight each), so a 104 -> 96 crop costs
// 96 x 96 pixels, not 104 x 104.
#pragma once

#include <cstdint>

namespace lakerun::data {

/// Where the output window lies. The source (src_h x src_w, `channels` of 1 or 3, row-major HWC) is resized to
/// resized_h x resized_w; output pixel (y, x) is resized pixel (top + y, left + x), or (top + y, left + out_w - 1 - x)
/// when `flip`. Coordinates outside the resized image read its clamped edge.
struct ResampleWindow {
  int src_h = 0;
  int src_w = 0;
  int channels = 0;
  int resized_h = 0;
  int resized_w = 0;
  int top = 0;
  int left = 0;
  bool flip = false;
  int out_h = 0;
  int out_w = 0;
};

/// Bilinear at pixel centres (half-pixel mapping, as torchvision's antialias=False): value * 65536 is the sum of the
/// two-by-two source neighbours times 8-bit weights (exact in integers, whatever the order of the passes); uint8
/// output rounds to nearest. Results are bit-identical on every CPU (SIMD row kernels where available). Writes channels x out_h x out_w elements to `out`: uint8_t when `scale` is null, else
/// float, element = value * scale[c] + shift[c] with value the unrounded blend in [0, 255] (scale 1/255, shift 0 for
/// [0, 1]).
void ResampleToPlanes(const uint8_t* src, const ResampleWindow& window, const float* scale, const float* shift,
                      void* out);

}  // namespace lakerun::data
