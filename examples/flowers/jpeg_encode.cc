#include "jpeg_encode.h"

#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "lakerun/base/error.h"

namespace lakerun::examples::flowers {
namespace {

// libjpeg reports errors through a callback that must not return; it jumps back to EncodeGreyJpeg instead.
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

}  // namespace

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
  LAKERUN_CHECK_AS(InvalidArgument, height > 0 && width > 0, "EncodeGreyJpeg: bad size ", height, "x", width);
  LAKERUN_CHECK_AS(InvalidArgument, quality >= 1 && quality <= 100, "EncodeGreyJpeg: quality must be in [1, 100], got ",
                   quality);
  jpeg_compress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.base);
  err.base.error_exit = OnError;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): libjpeg's type
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
    LAKERUN_THROW(CorruptDataError, "EncodeGreyJpeg: libjpeg failed on a ", height, "x", width, " image: ",
                  err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 1;
  cinfo.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + static_cast<size_t>(cinfo.next_scanline) * width);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

}  // namespace lakerun::examples::flowers
