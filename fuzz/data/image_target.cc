#include "image_target.h"

#include <cstdint>
#include <vector>

#include "data/image_decode.h"
#include "lakerun/data/image_options.h"

namespace lakerun::data::fuzz {

void FuzzImage(std::string_view data) {
  if (data.size() < 4) return;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  ImageOptions options;
  options.channels = (p[0] & 1) ? 1 : 3;
  options.to_float = (p[0] & 2) != 0;
  options.random_crop = (p[0] & 4) != 0;
  options.flip_probability = (p[0] & 8) ? 1.0f : 0.0f;
  options.resize = p[1] % 64;
  options.crop_height = options.crop_width = p[2] % 48;
  options.max_pixels = int64_t{1} << 20;
  if (options.to_float) {
    options.mean = {0.5f, 0.4f, 0.3f};
    options.std = {0.2f, 0.25f, 0.3f};
  }
  const int min_short_side = p[3] % 32;
  thread_local DecodedImage image;  // reused as the loader reuses it, so stale sizes from earlier inputs are tested
  DecodeImage(p + 4, data.size() - 4, options.channels, min_short_side, "fuzz input", &image, options.max_pixels);
  int out_h = 0, out_w = 0;
  OutputSize(options, image.height, image.width, &out_h, &out_w);
  const size_t elements = static_cast<size_t>(options.channels) * out_h * out_w;
  std::vector<uint8_t> out(elements * (options.to_float ? sizeof(float) : 1));
  TransformImage(image, options, /*random=*/data.size() * 0x9E3779B97F4A7C15ULL, out_h, out_w, out.data());
}

}  // namespace lakerun::data::fuzz
