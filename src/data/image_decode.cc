#include "image_decode.h"

#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "lakerun/base/error.h"
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

void DecodeJpeg(const uint8_t* data, size_t size, int channels, int min_short_side, const std::string& what,
                DecodedImage* out) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  err.mgr.output_message = [](j_common_ptr) {};
  DecodedImage& image = *out;  // constructed before setjmp; only POD locals change after it
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    LAKERUN_THROW(CorruptDataError, what, ": bad JPEG: ", err.message);
  }
  jpeg_create_decompress(&cinfo);
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
  jpeg_start_decompress(&cinfo);
  image.height = static_cast<int>(cinfo.output_height);
  image.width = static_cast<int>(cinfo.output_width);
  image.channels = channels;
  image.pixels.resize(static_cast<size_t>(image.height) * image.width * channels);
  // Several rows per call (libjpeg-turbo's upsamplers emit up to rec_outbuf_height rows at once).
  JSAMPROW rows[16];
  while (cinfo.output_scanline < cinfo.output_height) {
    const unsigned first = cinfo.output_scanline;
    const unsigned n = std::min(16u, cinfo.output_height - first);
    for (unsigned i = 0; i < n; ++i) rows[i] = image.pixels.data() + static_cast<size_t>(first + i) * image.width * channels;
    jpeg_read_scanlines(&cinfo, rows, n);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
}

void DecodePng(const uint8_t* data, size_t size, int channels, const std::string& what, DecodedImage* out) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, data, size)) {
    const std::string message = png.message;
    png_image_free(&png);
    LAKERUN_THROW(CorruptDataError, what, ": bad PNG: ", message);
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
                         const std::string& what) {
  DecodedImage image;
  DecodeImage(data, size, channels, min_short_side, what, &image);
  return image;
}

void DecodeImage(const uint8_t* data, size_t size, int channels, int min_short_side, const std::string& what,
                 DecodedImage* out) {
  LAKERUN_CHECK(channels == 1 || channels == 3, what, ": image channels must be 1 or 3, got ", channels);
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
    return DecodeJpeg(data, size, channels, min_short_side, what, out);
  }
  static const uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size >= 8 && std::memcmp(data, kPngMagic, 8) == 0) return DecodePng(data, size, channels, what, out);
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
  const int c_count = image.channels;
  const double sy = static_cast<double>(image.height) / rh, sx = static_cast<double>(image.width) / rw;
  const bool identity = rh == image.height && rw == image.width;
  const size_t plane = static_cast<size_t>(out_h) * out_w;
  // Bilinear interpolation in 8-bit fixed point: value * 65536 = sum of the four pixels times weights that add up
  // to 256 * 256, all in int (no float per element on the uint8 path).
  constexpr int kOne = 256;
  float scale[3] = {1.0f / (255.0f * 65536.0f), 1.0f / (255.0f * 65536.0f), 1.0f / (255.0f * 65536.0f)};
  float shift[3] = {0.0f, 0.0f, 0.0f};
  if (o.to_float) {
    for (int c = 0; c < c_count; ++c) {
      const float mean = o.mean.empty() ? 0.0f : o.mean[c % o.mean.size()];
      const float stdv = o.std.empty() ? 1.0f : o.std[c % o.std.size()];
      scale[c] = 1.0f / (255.0f * stdv * 65536.0f);
      shift[c] = -mean / stdv;
    }
  }
  // Separable bilinear in integer arithmetic, bit-identical to blending the four neighbours at once: a vertical
  // pass blends the two source rows of an output row over the columns the crop reads (contiguous, vectorised, 16-bit:
  // 255 * 256 fits), then a horizontal pass blends two of those per output pixel into the CHW planes.
  // value * 65536 = sum of the four pixels times weights adding up to 256 * 256.
  thread_local std::vector<int> x0, x1, wx;
  thread_local std::vector<uint16_t> blended;
  x0.resize(out_w);
  x1.resize(out_w);
  wx.resize(out_w);
  int lo = image.width, hi = 0;  // source columns the crop reads
  for (int x = 0; x < out_w; ++x) {
    const int rx = std::clamp(left + (flip ? out_w - 1 - x : x), 0, rw - 1);
    int a = rx, b = rx, w = 0;
    if (!identity) {
      const double fx = std::max(0.0, (rx + 0.5) * sx - 0.5);
      a = std::min(static_cast<int>(fx), image.width - 1);
      b = std::min(a + 1, image.width - 1);
      w = static_cast<int>(std::lround((fx - a) * kOne));
    }
    lo = std::min(lo, a);
    hi = std::max(hi, b);
    x0[x] = a;
    x1[x] = b;
    wx[x] = w;
  }
  const int span = (hi - lo + 1) * c_count;  // blended values per row, from source column lo on
  for (int x = 0; x < out_w; ++x) {
    x0[x] = (x0[x] - lo) * c_count;
    x1[x] = (x1[x] - lo) * c_count;
  }
  blended.resize(static_cast<size_t>(span));
  // Plain pointers: stores through uint8_t* may alias anything, so vector members would be reloaded every pixel.
  uint16_t* __restrict row = blended.data();
  const int* __restrict X0 = x0.data();
  const int* __restrict X1 = x1.data();
  const int* __restrict WX = wx.data();
  const uint8_t* px = image.pixels.data();
  const size_t stride = static_cast<size_t>(image.width) * c_count;
  for (int y = 0; y < out_h; ++y) {
    const int ry = std::clamp(top + y, 0, rh - 1);
    int y0 = ry, y1 = ry, wy = 0;
    if (!identity) {
      const double fy = std::max(0.0, (ry + 0.5) * sy - 0.5);
      y0 = std::min(static_cast<int>(fy), image.height - 1);
      y1 = std::min(y0 + 1, image.height - 1);
      wy = static_cast<int>(std::lround((fy - y0) * kOne));
    }
    const uint8_t* row0 = px + y0 * stride + static_cast<size_t>(lo) * c_count;
    const uint8_t* row1 = px + y1 * stride + static_cast<size_t>(lo) * c_count;
    const uint16_t w0 = static_cast<uint16_t>(kOne - wy), w1 = static_cast<uint16_t>(wy);
    for (int i = 0; i < span; ++i) row[i] = static_cast<uint16_t>(row0[i] * w0 + row1[i] * w1);
    // Horizontal pass: every channel of an output pixel at once (its two source pixels are adjacent in memory).
    const size_t base = static_cast<size_t>(y) * out_w;
    if (o.to_float) {
      float* dst = static_cast<float*>(out) + base;
      for (int x = 0; x < out_w; ++x) {
        const int a = X0[x], b = X1[x], w = WX[x];
        for (int c = 0; c < c_count; ++c) {
          const int v = row[a + c] * (kOne - w) + row[b + c] * w;
          dst[c * plane + x] = static_cast<float>(v) * scale[c] + shift[c];
        }
      }
    } else {
      uint8_t* dst = static_cast<uint8_t*>(out) + base;
      for (int x = 0; x < out_w; ++x) {
        const int a = X0[x], b = X1[x], w = WX[x];
        for (int c = 0; c < c_count; ++c) {
          const int v = row[a + c] * (kOne - w) + row[b + c] * w;
          dst[c * plane + x] = static_cast<uint8_t>((v + (1 << 15)) >> 16);
        }
      }
    }
  }
}

}  // namespace lakerun::data
