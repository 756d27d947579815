#include "idx_reader.h"

#include <zlib.h>

#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "dataset.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::examples {
namespace {

const std::string kDir = kDefaultFashionMnistDir;

FashionMnistOptions FromDir(const std::string& dir) {
  FashionMnistOptions options;
  options.data_dir = dir;
  return options;
}

std::string BigEndian(std::initializer_list<uint32_t> words) {
  std::string out;
  for (uint32_t w : words) {
    out.push_back(static_cast<char>(w >> 24));
    out.push_back(static_cast<char>(w >> 16));
    out.push_back(static_cast<char>(w >> 8));
    out.push_back(static_cast<char>(w));
  }
  return out;
}

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

void WritePlain(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(IdxReaderTest, ReadsTheRealTrainingLabels) {
  const IdxLabels labels = ReadIdxLabels(kDir + "/train-labels-idx1-ubyte.gz");
  ASSERT_EQ(labels.labels.size(), 60000u);
  const std::vector<uint8_t> first(labels.labels.begin(), labels.labels.begin() + 10);
  EXPECT_EQ(first, (std::vector<uint8_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  // Fashion-MNIST is balanced: 6,000 of each class.
  std::vector<int> per_class(10, 0);
  for (uint8_t l : labels.labels) per_class.at(l) += 1;
  EXPECT_EQ(per_class, std::vector<int>(10, 6000));
}

TEST(IdxReaderTest, ReadsTheRealTestImagesAndLabels) {
  const IdxImages images = ReadIdxImages(kDir + "/t10k-images-idx3-ubyte.gz");
  EXPECT_EQ(images.count, 10000);
  EXPECT_EQ(images.rows, 28);
  EXPECT_EQ(images.cols, 28);
  EXPECT_EQ(images.pixels.size(), 10000u * 28 * 28);
  const IdxLabels labels = ReadIdxLabels(kDir + "/t10k-labels-idx1-ubyte.gz");
  const std::vector<uint8_t> first(labels.labels.begin(), labels.labels.begin() + 10);
  EXPECT_EQ(first, (std::vector<uint8_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
}

TEST(IdxReaderTest, ReadsTheRealTrainingImages) {
  const IdxImages images = ReadIdxImages(kDir + "/train-images-idx3-ubyte.gz");
  EXPECT_EQ(images.count, 60000);
  ASSERT_EQ(images.pixels.size(), 60000u * 784);
  // The first image's pixel sum, as Python's gzip + numpy reads it.
  EXPECT_EQ(std::accumulate(images.pixels.begin(), images.pixels.begin() + 784, 0), 76247);
}

TEST(IdxReaderTest, MissingFileNamesThePathAndThePackage) {
  EXPECT_THROW_WITH(ReadIdxImages("/nonexistent/dir/train-images-idx3-ubyte.gz"), IoError,
                    "/nonexistent/dir/train-images-idx3-ubyte.gz", "dataset-fashion-mnist", "scripts/setup.sh");
}

TEST(IdxReaderTest, BadMagicNamesThePath) {
  testing::TempDir dir;
  const std::string path = dir.Join("labels.gz");
  WriteGzip(path, BigEndian({0x00000803, 2}) + std::string(2, '\1'));
  EXPECT_THROW_WITH(ReadIdxLabels(path), CorruptDataError, path, "bad IDX magic number 0x803", "expected 0x801");
  const std::string images = dir.Join("images.gz");
  WriteGzip(images, BigEndian({0x00000801, 1, 2, 2}) + std::string(4, '\0'));
  EXPECT_THROW_WITH(ReadIdxImages(images), CorruptDataError, images, "magic");
}

TEST(IdxReaderTest, ShortPayloadIsTruncated) {
  testing::TempDir dir;
  const std::string path = dir.Join("images.gz");
  WriteGzip(path, BigEndian({0x00000803, 3, 28, 28}) + std::string(2 * 784 + 5, '\7'));
  EXPECT_THROW_WITH(ReadIdxImages(path), CorruptDataError, path, "truncated", "3 images of 28x28", "1573 bytes");
}

TEST(IdxReaderTest, CutGzipStreamIsAnErrorNamingThePath) {
  testing::TempDir dir;
  const std::string whole = LocalFileSystem().ReadFile(kDir + "/t10k-labels-idx1-ubyte.gz");
  const std::string path = dir.Join("t10k-labels-idx1-ubyte.gz");
  WritePlain(path, whole.substr(0, whole.size() / 2));
  EXPECT_THROW_WITH(ReadIdxLabels(path), CorruptDataError, path);
}

TEST(IdxReaderTest, TruncatedHeaderIsAnError) {
  testing::TempDir dir;
  const std::string path = dir.Join("labels");
  WritePlain(path, BigEndian({0x00000801}) + "\0\0");
  EXPECT_THROW_WITH(ReadIdxLabels(path), CorruptDataError, path, "truncated IDX header");
}

TEST(IdxReaderTest, TrailingBytesAreAnError) {
  testing::TempDir dir;
  const std::string path = dir.Join("labels.gz");
  WriteGzip(path, BigEndian({0x00000801, 2}) + std::string("\1\2\3", 3));
  EXPECT_THROW_WITH(ReadIdxLabels(path), CorruptDataError, path, "unexpected bytes");
}

TEST(IdxReaderTest, ImplausibleDimensionsAreRejectedBeforeAllocating) {
  testing::TempDir dir;
  const std::string path = dir.Join("images.gz");
  WriteGzip(path, BigEndian({0x00000803, 0xFFFFFFFF, 28, 28}));
  EXPECT_THROW_WITH(ReadIdxImages(path), CorruptDataError, path, "implausible");
}

TEST(IdxReaderTest, ReadsUncompressedFilesToo) {
  testing::TempDir dir;
  const std::string path = dir.Join("labels");
  WritePlain(path, BigEndian({0x00000801, 3}) + std::string("\4\5\6", 3));
  EXPECT_EQ(ReadIdxLabels(path).labels, (std::vector<uint8_t>{4, 5, 6}));
}

TEST(FashionMnistTest, LoadsNormalizedTensors) {
  const FashionMnist data = LoadFashionMnist({});
  EXPECT_EQ(data.train_images.sizes(), (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(data.test_images.sizes(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_EQ(data.train_images.scalar_type(), at::kFloat);
  EXPECT_EQ(data.train_labels.scalar_type(), at::kLong);
  EXPECT_EQ(data.train_labels[0].item<int64_t>(), 9);
  // A black pixel maps to -mean/std.
  EXPECT_NEAR(data.train_images.min().item<float>(), -0.1307 / 0.3081, 1e-6);
  EXPECT_NEAR(data.train_images.max().item<float>(), (1 - 0.1307) / 0.3081, 1e-5);
}

TEST(FashionMnistTest, MissingDirectoryNamesTheFile) {
  EXPECT_THROW_WITH(LoadFashionMnist(FromDir("/nonexistent/fmnist")), IoError,
                    "/nonexistent/fmnist/train-images-idx3-ubyte.gz", "apt-get install dataset-fashion-mnist");
}

TEST(FashionMnistTest, LabelOutOfRangeIsCorruptData) {
  testing::TempDir dir;
  WriteGzip(dir.Join("train-images-idx3-ubyte.gz"), BigEndian({0x00000803, 2, 28, 28}) + std::string(2 * 784, '\0'));
  WriteGzip(dir.Join("train-labels-idx1-ubyte.gz"), BigEndian({0x00000801, 2}) + std::string("\1\12", 2));
  EXPECT_THROW_WITH(LoadFashionMnist(FromDir(dir.path())), CorruptDataError, "train-labels-idx1-ubyte.gz",
                    "label 1 is 10");
}

TEST(FashionMnistTest, CountMismatchNamesBothFiles) {
  testing::TempDir dir;
  WriteGzip(dir.Join("train-images-idx3-ubyte.gz"), BigEndian({0x00000803, 2, 28, 28}) + std::string(2 * 784, '\0'));
  WriteGzip(dir.Join("train-labels-idx1-ubyte.gz"), BigEndian({0x00000801, 3}) + std::string("\1\2\3", 3));
  EXPECT_THROW_WITH(LoadFashionMnist(FromDir(dir.path())), CorruptDataError, "holds 3 labels",
                    "holds 2 images");
}

}  // namespace
}  // namespace lakerun::examples
