// How binary image columns (JPEG or PNG bytes) become [B, C, H, W] tensors.
//
// Per sample: decode -> resize (shorter side) -> crop (center, or random) -> horizontal flip (random) -> uint8, or
// float scaled to [0, 1] then normalised by mean/std. The random choices of a sample come from a counter-based hash
// of (seed, epoch, sample index), so augmentation is reproducible and independent of threads and ranks.
#pragma once

#include <cstdint>
#include <vector>

namespace lakerun::data {

/// The default ImageOptions::max_pixels: PIL's Image.MAX_IMAGE_PIXELS (a 9459 x 9459 image, ~256 MB as RGB).
constexpr int64_t kDefaultMaxImagePixels = 89'478'485;

struct ImageOptions {
  /// Output channels: 1 (grey) or 3 (RGB); decoded images are converted.
  int channels = 3;
  /// Scale so the shorter side has this many pixels (bilinear); 0 keeps the decoded size.
  int resize = 0;
  /// Crop to crop_height x crop_width; 0 = no crop (then every image of a batch must have the same size).
  int crop_height = 0;
  int crop_width = 0;
  /// Random crop position instead of the centre.
  bool random_crop = false;
  /// Probability of a horizontal flip.
  float flip_probability = 0.0f;
  /// float32 in [0, 1] (then normalised) instead of uint8.
  bool to_float = false;
  /// Per-channel normalisation when to_float: (x - mean[c]) / std[c]. Empty = none.
  std::vector<float> mean;
  std::vector<float> std;
  /// Images with more pixels than this (as decoded, after JPEG's DCT scaling) are a CorruptDataError naming the
  /// sample, raised from the header before any pixel memory is allocated: a damaged or hostile header can claim
  /// 65535 x 65535 pixels (12 GB as RGB). 0: no limit.
  int64_t max_pixels = kDefaultMaxImagePixels;
};

}  // namespace lakerun::data
