#include "lakerun/data/image_encode.h"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>

#include "lakerun/base/error.h"

namespace lakerun::data {
namespace {

// libjpeg reports errors through a callback that must not return; it jumps back to EncodeJpeg instead.
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

std::string EncodeJpeg(const uint8_t* pixels, int height, int width, int channels, int quality) {
  LAKERUN_CHECK_AS(InvalidArgument, height > 0 && width > 0, "EncodeJpeg: bad size ", height, "x", width);
  LAKERUN_CHECK_AS(InvalidArgument, channels == 1 || channels == 3, "EncodeJpeg: channels must be 1 or 3, got ",
                   channels);
  LAKERUN_CHECK_AS(InvalidArgument, quality >= 1 && quality <= 100, "EncodeJpeg: quality must be in [1, 100], got ",
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
    LAKERUN_THROW(CorruptDataError, "EncodeJpeg: libjpeg failed on a ", height, "x", width, "x", channels,
                  " image: ", err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const size_t row_bytes = static_cast<size_t>(width) * channels;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + static_cast<size_t>(cinfo.next_scanline) * row_bytes);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

}  // namespace lakerun::data
