#include "jpeg_encode.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "lakerun/base/error.h"
#include "lakerun/data/image_encode.h"

namespace lakerun::examples::flowers {

std::vector<uint8_t> ResizeGrey(const uint8_t* pixels, int height, int width, int size) {
  LAKERUN_CHECK_AS(InvalidArgument, height > 0 && width > 0 && size > 0, "ResizeGrey: bad sizes ", height, "x",
                   width, " -> ", size);
  std::vector<uint8_t> out(static_cast<size_t>(size) * size);
  const float sy = static_cast<float>(height) / size;
  const float sx = static_cast<float>(width) / size;
  for (int y = 0; y < size; ++y) {
    const float fy = std::clamp((y + 0.5f) * sy - 0.5f, 0.0f, static_cast<float>(height - 1));
    const int y0 = static_cast<int>(fy);
    const int y1 = std::min(y0 + 1, height - 1);
    const float wy = fy - y0;
    for (int x = 0; x < size; ++x) {
      const float fx = std::clamp((x + 0.5f) * sx - 0.5f, 0.0f, static_cast<float>(width - 1));
      const int x0 = static_cast<int>(fx);
      const int x1 = std::min(x0 + 1, width - 1);
      const float wx = fx - x0;
      const float top = pixels[y0 * width + x0] * (1 - wx) + pixels[y0 * width + x1] * wx;
      const float bottom = pixels[y1 * width + x0] * (1 - wx) + pixels[y1 * width + x1] * wx;
      out[static_cast<size_t>(y) * size + x] = static_cast<uint8_t>(std::lround(top * (1 - wy) + bottom * wy));
    }
  }
  return out;
}

std::string EncodeGreyJpeg(const uint8_t* pixels, int height, int width, int quality) {
  return data::EncodeJpeg(pixels, height, width, /*channels=*/1, quality);
}

}  // namespace lakerun::examples::flowers
