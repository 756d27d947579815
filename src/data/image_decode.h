// JPEG (libjpeg-turbo) and PNG (libpng) decoding, and the fused resize/crop/flip/normalise of one sample into its
// slot of a [B, C, H, W] batch. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lakerun/data/image_options.h"

namespace lakerun::data {

/// Decoded pixels, row-major HWC, `channels` of 1 or 3.
struct DecodedImage {
  int height = 0;
  int width = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

/// Decodes JPEG or PNG bytes (sniffed by magic) to `channels` (1 or 3) channels. `min_short_side` > 0 lets JPEG
/// decode at a reduced DCT scale as long as the shorter side stays >= it (much faster before a downscale).
/// Throws CorruptDataError naming `what` for undecodable bytes, or for an image of more than `max_pixels` pixels as
/// decoded (checked from the header, before allocating; 0: no limit).
DecodedImage DecodeImage(const uint8_t* data, size_t size, int channels, int min_short_side,
                         const std::string& what, int64_t max_pixels = kDefaultMaxImagePixels);
/// Same, into `out`, reusing the capacity of its pixels (no allocation per image in a loop).
void DecodeImage(const uint8_t* data, size_t size, int channels, int min_short_side, const std::string& what,
                 DecodedImage* out, int64_t max_pixels = kDefaultMaxImagePixels);

/// Output height and width for an image of the given size under `options`.
void OutputSize(const ImageOptions& options, int height, int width, int* out_height, int* out_width);

/// Resizes, crops, flips and writes `image` as CHW into `out` (uint8_t* or float* by options.to_float), which holds
/// channels x out_height x out_width elements. `random` seeds the sample's crop and flip.
void TransformImage(const DecodedImage& image, const ImageOptions& options, uint64_t random, int out_height,
                    int out_width, void* out);

}  // namespace lakerun::data
