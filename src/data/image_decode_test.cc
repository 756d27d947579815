#include "image_decode.h"

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/image_encode.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

// An RGB test picture: red grows left to right, green top to bottom, blue constant.
std::vector<uint8_t> Gradient(int h, int w) {
  std::vector<uint8_t> px(static_cast<size_t>(h) * w * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &px[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(x * 255 / (w - 1));
      p[1] = static_cast<uint8_t>(y * 255 / (h - 1));
      p[2] = 77;
    }
  }
  return px;
}

std::string EncodePng(const std::vector<uint8_t>& px, int h, int w) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = w;
  image.height = h;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_to_memory(&image, nullptr, &size, 0, px.data(), 0, nullptr));
  std::string out(size, '\0');
  EXPECT_TRUE(png_image_write_to_memory(&image, out.data(), &size, 0, px.data(), 0, nullptr));
  out.resize(size);
  return out;
}

std::string EncodeJpeg(const std::vector<uint8_t>& px, int h, int w) {
  return data::EncodeJpeg(px.data(), h, w, /*channels=*/3, /*quality=*/95);
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(ImageDecodeTest, PngRoundTripsExactly) {
  const auto px = Gradient(20, 30);
  const std::string png = EncodePng(px, 20, 30);
  const DecodedImage image = DecodeImage(Bytes(png), png.size(), 3, 0, "test.png");
  EXPECT_EQ(image.height, 20);
  EXPECT_EQ(image.width, 30);
  EXPECT_EQ(image.pixels, px);
}

TEST(ImageDecodeTest, JpegDecodesCloseToTheSourceAndToGrey) {
  const auto px = Gradient(64, 48);
  const std::string jpeg = EncodeJpeg(px, 64, 48);
  const DecodedImage rgb = DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg");
  ASSERT_EQ(rgb.pixels.size(), px.size());
  for (size_t i = 0; i < px.size(); ++i) ASSERT_NEAR(rgb.pixels[i], px[i], 12) << i;
  const DecodedImage grey = DecodeImage(Bytes(jpeg), jpeg.size(), 1, 0, "a.jpg");
  EXPECT_EQ(grey.channels, 1);
  EXPECT_EQ(grey.pixels.size(), 64u * 48u);
}

TEST(ImageDecodeTest, JpegDctScalingKeepsTheShorterSideAboveTheTarget) {
  const auto px = Gradient(256, 192);
  const std::string jpeg = EncodeJpeg(px, 256, 192);
  const DecodedImage small = DecodeImage(Bytes(jpeg), jpeg.size(), 3, 40, "a.jpg");
  EXPECT_EQ(small.width, 48);  // 192 / 4 >= 40 > 192 / 8
  EXPECT_EQ(small.height, 64);
}

TEST(ImageDecodeTest, ADecoderReusedAfterErrorsAndScalingDecodesLikeAFreshOne) {
  // Each thread reuses one JPEG decompressor: an error mid-header, an error mid-scan, or a DCT-scaled decode before an
  // image must not change how that image decodes.
  const auto px = Gradient(64, 48);
  const std::string jpeg = EncodeJpeg(px, 64, 48);
  std::vector<uint8_t> first;
  std::thread([&] { first = DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg").pixels; }).join();
  const std::string bad_header = "\xFF\xD8\xFF\xC0\x00\x02garbage";
  std::string bad_scan = jpeg;
  for (size_t i = bad_scan.size() / 2; i < bad_scan.size() / 2 + 40; ++i) bad_scan[i] = static_cast<char>(0xFF);
  const auto big = Gradient(256, 192);
  const std::string scaled = EncodeJpeg(big, 256, 192);
  EXPECT_THROW(DecodeImage(Bytes(bad_header), bad_header.size(), 3, 0, "bad"), CorruptDataError);
  EXPECT_EQ(DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg").pixels, first);
  try {
    DecodeImage(Bytes(bad_scan), bad_scan.size(), 3, 0, "scan");  // a marker inside the scan may only be a warning
  } catch (const CorruptDataError&) {
  }
  EXPECT_EQ(DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg").pixels, first);
  EXPECT_EQ(DecodeImage(Bytes(scaled), scaled.size(), 3, 40, "big.jpg").width, 48);
  const DecodedImage again = DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg");
  EXPECT_EQ(again.width, 48);
  EXPECT_EQ(again.height, 64);
  EXPECT_EQ(again.pixels, first);
  EXPECT_EQ(DecodeImage(Bytes(jpeg), jpeg.size(), 1, 0, "a.jpg").pixels.size(), 64u * 48u);
  EXPECT_EQ(DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg").pixels, first);
}

TEST(ImageDecodeTest, ImagesOverThePixelLimitAreRejectedFromTheHeader) {
  const auto px = Gradient(64, 48);  // 3072 pixels
  const std::string jpeg = EncodeJpeg(px, 64, 48);
  const std::string png = EncodePng(px, 64, 48);
  EXPECT_THROW_WITH(DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "row 4", 3071), CorruptDataError, "row 4",
                    "JPEG image of 48 x 64 pixels exceeds the limit of 3071 pixels");
  EXPECT_THROW_WITH(DecodeImage(Bytes(png), png.size(), 3, 0, "row 5", 3071), CorruptDataError, "row 5",
                    "PNG image of 48 x 64 pixels exceeds the limit of 3071 pixels");
  EXPECT_EQ(DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg", 3072).pixels.size(), 3072u * 3u);
  EXPECT_EQ(DecodeImage(Bytes(png), png.size(), 3, 0, "a.png", int64_t{0}).pixels.size(), 3072u * 3u);  // 0: no limit
  // The limit applies to the decoded size: a DCT-scaled JPEG passes where its full size would not.
  const auto big = Gradient(256, 192);
  const std::string scaled = EncodeJpeg(big, 256, 192);
  EXPECT_EQ(DecodeImage(Bytes(scaled), scaled.size(), 3, 40, "big.jpg", 48 * 64).width, 48);
  EXPECT_THROW(DecodeImage(Bytes(scaled), scaled.size(), 3, 0, "big.jpg", 48 * 64), CorruptDataError);
  // A header claiming 65000 x 65000 pixels is refused before anything is allocated (4 GB of pixels otherwise).
  std::string huge = png;
  const unsigned char side[4] = {0x00, 0x00, 0xFD, 0xE8};  // IHDR width and height, big-endian 65000
  huge.replace(16, 4, reinterpret_cast<const char*>(side), 4);
  huge.replace(20, 4, reinterpret_cast<const char*>(side), 4);
  const uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(huge.data() + 12), 17));
  for (int i = 0; i < 4; ++i) huge[29 + i] = static_cast<char>(crc >> (24 - 8 * i));  // IHDR's CRC, big-endian
  EXPECT_THROW_WITH(DecodeImage(Bytes(huge), huge.size(), 3, 0, "huge.png"), CorruptDataError, "huge.png",
                    "PNG image of 65000 x 65000 pixels exceeds the limit of 89478485 pixels");
  // The decoder that refused an image decodes the next one normally.
  EXPECT_EQ(DecodeImage(Bytes(jpeg), jpeg.size(), 3, 0, "a.jpg").pixels.size(), 3072u * 3u);
}

TEST(ImageDecodeTest, CorruptOrUnknownBytesNameTheSample) {
  const auto px = Gradient(16, 16);
  // libjpeg-turbo pads truncated scans with a warning; corrupt headers are errors.
  std::string bad_header = "\xFF\xD8\xFF\xC0\x00\x02garbage";
  EXPECT_THROW_WITH(DecodeImage(Bytes(bad_header), bad_header.size(), 3, 0, "part-0 row 7"), CorruptDataError,
                    "part-0 row 7", "bad JPEG");
  std::string png = EncodePng(px, 16, 16);
  png.resize(60);
  EXPECT_THROW_WITH(DecodeImage(Bytes(png), png.size(), 3, 0, "row 9"), CorruptDataError, "row 9", "bad PNG");
  const std::string text = "hello world";
  EXPECT_THROW_WITH(DecodeImage(Bytes(text), text.size(), 3, 0, "row 1"), CorruptDataError, "row 1",
                    "neither JPEG nor PNG");
}

TEST(ImageTransformTest, ResizeCropFlipAndNormaliseAreExact) {
  DecodedImage image{4, 4, 1, {}};
  for (int i = 0; i < 16; ++i) image.pixels.push_back(static_cast<uint8_t>(i * 10));
  ImageOptions o;
  o.channels = 1;
  o.crop_height = 2;
  o.crop_width = 2;
  int h, w;
  OutputSize(o, 4, 4, &h, &w);
  ASSERT_EQ(h, 2);
  ASSERT_EQ(w, 2);
  uint8_t out[4];
  TransformImage(image, o, 0, h, w, out);  // centre crop: rows 1-2, columns 1-2
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4), (std::vector<uint8_t>{50, 60, 90, 100}));
  o.flip_probability = 1.0f;
  TransformImage(image, o, 0, h, w, out);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4), (std::vector<uint8_t>{60, 50, 100, 90}));
  o.flip_probability = 0;
  o.to_float = true;
  o.mean = {0.5f};
  o.std = {0.5f};
  float f[4];
  TransformImage(image, o, 0, h, w, f);
  EXPECT_FLOAT_EQ(f[0], (50 / 255.0f - 0.5f) / 0.5f);
  // Resize 4x4 -> 2x2 averages 2x2 neighbourhoods (bilinear at pixel centres).
  ImageOptions r;
  r.channels = 1;
  r.resize = 2;
  OutputSize(r, 4, 4, &h, &w);
  ASSERT_EQ(h, 2);
  uint8_t small[4];
  TransformImage(image, r, 0, h, w, small);
  EXPECT_EQ(small[0], 25);   // (0 + 10 + 40 + 50) / 4
  EXPECT_EQ(small[3], 125);  // (100 + 110 + 140 + 150) / 4
}

TEST(ImageTransformTest, RandomCropAndFlipDependOnlyOnTheSeedValue) {
  DecodedImage image{32, 32, 1, std::vector<uint8_t>(1024)};
  for (int i = 0; i < 1024; ++i) image.pixels[i] = static_cast<uint8_t>(i * 7);
  ImageOptions o;
  o.channels = 1;
  o.crop_height = o.crop_width = 8;
  o.random_crop = true;
  o.flip_probability = 0.5f;
  std::vector<std::vector<uint8_t>> seen;
  for (uint64_t r = 0; r < 16; ++r) {
    std::vector<uint8_t> a(64), b(64);
    TransformImage(image, o, r, 8, 8, a.data());
    TransformImage(image, o, r, 8, 8, b.data());
    ASSERT_EQ(a, b);
    seen.push_back(a);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_GT(std::unique(seen.begin(), seen.end()) - seen.begin(), 8);
}

}  // namespace
}  // namespace lakerun::data
