#include "image_decode.h"

#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "lakerun/base/error.h"
#include "image_resize.h"
#include "lakerun/data/shuffle.h"

namespace lakerun::data {
namespace {

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Whether an image of width x height pixels is over `max_pixels` (0: no limit). Checked from the header, so that a
// damaged size never reaches an allocation.
bool TooManyPixels(uint64_t width, uint64_t height, int64_t max_pixels) {
  return max_pixels > 0 && width * height > static_cast<uint64_t>(max_pixels);
}

[[noreturn]] void ThrowTooManyPixels(uint64_t width, uint64_t height, int64_t max_pixels, const char* format,
                                     const std::string& what) {
  LAKERUN_THROW(CorruptDataError, what, ": ", format, " image of ", width, " x ", height,
                " pixels exceeds the limit of ", max_pixels, " pixels (ImageOptions::max_pixels)");
}

// One decompressor per thread, reused image after image: libjpeg allocates its pools and tables when a decompressor
// is created, and that cost is per image otherwise. After an error the decompressor is aborted, which returns it to
// a reusable state.
struct JpegDecoder {
  jpeg_decompress_struct cinfo;
  JpegError err;
  bool created = false;
  ~JpegDecoder() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

// The work of DecodeJpeg after its setjmp. libjpeg's errors longjmp out of this frame, so it holds only trivially
// destructible locals (and is never inlined), and nothing of DecodeJpeg's own frame changes after the setjmp (whose
// values would then be indeterminate).
[[gnu::noinline]] void DecodeJpegAfterSetjmp(JpegDecoder& decoder, const uint8_t* data, size_t size, int channels,
                                            int min_short_side, const std::string& what, DecodedImage* out,
                                            int64_t max_pixels) {
  jpeg_decompress_struct& cinfo = decoder.cinfo;
  if (!decoder.created) {
    cinfo.err = jpeg_std_error(&decoder.err.mgr);
    decoder.err.mgr.error_exit = JpegErrorExit;
    decoder.err.mgr.output_message = [](j_common_ptr) {};
    jpeg_create_decompress(&cinfo);
    decoder.created = true;
  }
  jpeg_mem_src(&cinfo, const_cast<unsigned char*>(data), static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  if (min_short_side > 0) {
    const unsigned short_side = std::min(cinfo.image_width, cinfo.image_height);
    unsigned denom = 8;
    while (denom > 1 && short_side / denom < static_cast<unsigned>(min_short_side)) denom /= 2;
    cinfo.scale_num = 1;
    cinfo.scale_denom = denom;
  }
  cinfo.dct_method = JDCT_ISLOW;
  jpeg_calc_output_dimensions(&cinfo);
  if (TooManyPixels(cinfo.output_width, cinfo.output_height, max_pixels)) {
    jpeg_abort_decompress(&cinfo);
    ThrowTooManyPixels(cinfo.output_width, cinfo.output_height, max_pixels, "JPEG", what);
  }
  jpeg_start_decompress(&cinfo);
  out->height = static_cast<int>(cinfo.output_height);
  out->width = static_cast<int>(cinfo.output_width);
  out->channels = channels;
  out->pixels.resize(static_cast<size_t>(out->height) * out->width * channels);
  // Several rows per call (libjpeg-turbo's upsamplers emit up to rec_outbuf_height rows at once).
  JSAMPROW rows[16];
  while (cinfo.output_scanline < cinfo.output_height) {
    const unsigned first = cinfo.output_scanline;
    const unsigned n = std::min(16u, cinfo.output_height - first);
    for (unsigned i = 0; i < n; ++i) {
      rows[i] = out->pixels.data() + static_cast<size_t>(first + i) * out->width * channels;
    }
    jpeg_read_scanlines(&cinfo, rows, n);
  }
  jpeg_finish_decompress(&cinfo);
}

void DecodeJpeg(const uint8_t* data, size_t size, int channels, int min_short_side, const std::string& what,
                DecodedImage* out, int64_t max_pixels) {
  thread_local JpegDecoder decoder;
  if (setjmp(decoder.err.jump)) {
    if (decoder.created) jpeg_abort_decompress(&decoder.cinfo);
    LAKERUN_THROW(CorruptDataError, what, ": bad JPEG: ", decoder.err.message);
  }
  DecodeJpegAfterSetjmp(decoder, data, size, channels, min_short_side, what, out, max_pixels);
}

void DecodePng(const uint8_t* data, size_t size, int channels, const std::string& what, DecodedImage* out,
               int64_t max_pixels) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, data, size)) {
    const std::string message = png.message;
    png_image_free(&png);
    LAKERUN_THROW(CorruptDataError, what, ": bad PNG: ", message);
  }
  if (TooManyPixels(png.width, png.height, max_pixels)) {
    png_image_free(&png);
    ThrowTooManyPixels(png.width, png.height, max_pixels, "PNG", what);
  }
  png.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  DecodedImage& image = *out;
  image.height = static_cast<int>(png.height);
  image.width = static_cast<int>(png.width);
  image.channels = channels;
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    LAKERUN_THROW(CorruptDataError, what, ": bad PNG: ", message);
  }
}

constexpr uint64_t kCropYStream = 0x63726f7079ULL;
constexpr uint64_t kCropXStream = 0x63726f7078ULL;
constexpr uint64_t kFlipStream = 0x666c6970ULL;

}  // namespace

DecodedImage DecodeImage(const uint8_t* data, size_t size, int channels, int min_short_side,
                         const std::string& what, int64_t max_pixels) {
  DecodedImage image;
  DecodeImage(data, size, channels, min_short_side, what, &image, max_pixels);
  return image;
}

void DecodeImage(const uint8_t* data, size_t size, int channels, int min_short_side, const std::string& what,
                 DecodedImage* out, int64_t max_pixels) {
  LAKERUN_CHECK(channels == 1 || channels == 3, what, ": image channels must be 1 or 3, got ", channels);
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
    return DecodeJpeg(data, size, channels, min_short_side, what, out, max_pixels);
  }
  static const uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size >= 8 && std::memcmp(data, kPngMagic, 8) == 0) return DecodePng(data, size, channels, what, out, max_pixels);
  LAKERUN_THROW(CorruptDataError, what, ": ", size, " bytes are neither JPEG nor PNG (unknown magic)");
}

namespace {
// Size after the shorter-side resize.
void ResizedSize(const ImageOptions& o, int height, int width, int* rh, int* rw) {
  if (o.resize <= 0) {
    *rh = height;
    *rw = width;
    return;
  }
  const double scale = static_cast<double>(o.resize) / std::min(height, width);
  *rh = std::max(1, static_cast<int>(std::lround(height * scale)));
  *rw = std::max(1, static_cast<int>(std::lround(width * scale)));
  if (height <= width) *rh = o.resize; else *rw = o.resize;
}
}  // namespace

void OutputSize(const ImageOptions& options, int height, int width, int* out_height, int* out_width) {
  ResizedSize(options, height, width, out_height, out_width);
  if (options.crop_height > 0) *out_height = options.crop_height;
  if (options.crop_width > 0) *out_width = options.crop_width;
}

void TransformImage(const DecodedImage& image, const ImageOptions& o, uint64_t random, int out_h, int out_w,
                    void* out) {
  int rh, rw;
  ResizedSize(o, image.height, image.width, &rh, &rw);
  // Crops larger than the resized image read clamped edge pixels (the crop extends past the border).
  const int slack_y = rh - out_h, slack_x = rw - out_w;
  int top = slack_y / 2, left = slack_x / 2;
  if (o.random_crop) {
    top = slack_y > 0 ? static_cast<int>(Bounded(Mix64(random ^ kCropYStream), slack_y + 1)) : slack_y / 2;
    left = slack_x > 0 ? static_cast<int>(Bounded(Mix64(random ^ kCropXStream), slack_x + 1)) : slack_x / 2;
  }
  const bool flip = o.flip_probability > 0 &&
                    static_cast<double>(Mix64(random ^ kFlipStream) >> 11) * 0x1.0p-53 < o.flip_probability;
  ResampleWindow window;
  window.src_h = image.height;
  window.src_w = image.width;
  window.channels = image.channels;
  window.resized_h = rh;
  window.resized_w = rw;
  window.top = top;
  window.left = left;
  window.flip = flip;
  window.out_h = out_h;
  window.out_w = out_w;
  if (!o.to_float) return ResampleToPlanes(image.pixels.data(), window, nullptr, nullptr, out);
  float scale[3], shift[3];
  for (int c = 0; c < image.channels; ++c) {
    const float mean = o.mean.empty() ? 0.0f : o.mean[c % o.mean.size()];
    const float stdv = o.std.empty() ? 1.0f : o.std[c % o.std.size()];
    scale[c] = 1.0f / (255.0f * stdv);
    shift[c] = -mean / stdv;
  }
  ResampleToPlanes(image.pixels.data(), window, scale, shift, out);
}

}  // namespace lakerun::data
