// The horizontal pass of the bilinear resampler (image_resize.cc): one source row of HWC uint8 pixels to the
// horizontally blended values of the output columns, one float plane per channel. Torch-free, internal.
#pragma once

#include <cstdint>
#include <vector>

namespace lakerun::data {

/// Taps of `count` output columns in the form the row kernels read: output x blends source pixels first[x] and
/// first[x] + 1 with weights pair[2x] and pair[2x + 1] (adding up to 256; int16 pairs, the layout of an SSE multiply-
/// add). Needs a source row of at least 2 pixels: an edge tap (both neighbours the same pixel p) is written as
/// (p - 1, p) with weights (0, 256), which gives the same value.
struct RowTaps {
  const int* first = nullptr;
  const int16_t* pair = nullptr;
  int count = 0;
};

/// out[c][x] = row[first[x]][c] * pair[2x] + row[first[x] + 1][c] * pair[2x + 1] for c < channels (1 or 3): integers
/// of at most 255 * 256, exact as float (as are sums of two of them times weights up to 256: below 2^24). May read
/// up to 8 bytes from the start of a tap's first pixel: the caller keeps `row` readable that far (2 bytes past its
/// last pixel when rows have 2 pixels or more). `out` holds `channels` planes of `plane_stride` values each.
void BlendRow(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride);
/// out[x] = round(a[x] * wa + b[x] * wb) for x < n, where a and b hold BlendRow's values, wa + wb = 1 / 256 (the row
/// weights over 65536: exact) and every result lies in [0, 255].
void MixRowsToBytes(const float* a, const float* b, float wa, float wb, int n, uint8_t* out);

/// One implementation of both row functions. BlendRow and MixRowsToBytes run the last of AvailableRowKernels().
struct RowKernels {
  const char* name;  ///< "portable", "sse4.1" (grey rows and the mix need only SSE2), "avx2"
  void (*blend)(const uint8_t* row, int channels, const RowTaps& taps, float* out, int plane_stride);
  void (*mix)(const float* a, const float* b, float wa, float wb, int n, uint8_t* out);
};
/// The kernels this CPU runs, portable scalar code first, widest SIMD last; all give bit-identical results (tests
/// compare them).
std::vector<RowKernels> AvailableRowKernels();

}  // namespace lakerun::data
