// The table builder: JPEG encoding, both sources, the split partitions, metadata, and its errors.
#include "table_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "jpeg_encode.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::examples::flowers {
namespace {

// An uncompressed IDX file of unsigned bytes.
void WriteIdx(const std::string& path, const std::vector<int32_t>& dims, const std::string& payload) {
  std::string bytes = {0, 0, 8, static_cast<char>(dims.size())};
  for (int32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>((d >> shift) & 0xff));
  }
  LocalFileSystem().WriteAtomically(path, bytes + payload);
}

// A Fashion-MNIST lookalike: image i of label l is a flat 28x28 image of grey level 20 * l.
void WriteFakeFashionMnist(const std::string& dir, int train, int test) {
  LocalFileSystem().CreateDirs(dir);
  for (const auto& [prefix, n] : std::map<std::string, int>{{"train", train}, {"t10k", test}}) {
    std::string images, labels;
    for (int i = 0; i < n; ++i) {
      const int label = i % 10;
      labels.push_back(static_cast<char>(label));
      images.append(28 * 28, static_cast<char>(20 * label));
    }
    WriteIdx(JoinPath(dir, prefix + "-images-idx3-ubyte"), {n, 28, 28}, images);
    WriteIdx(JoinPath(dir, prefix + "-labels-idx1-ubyte"), {n}, labels);
  }
}

// Every (label, mean pixel) of a split, read back through the loader's image decoding (uint8, no crop).
std::vector<std::pair<int64_t, double>> ReadSplit(const std::string& table, const std::string& split,
                                                  int channels) {
  data::TableOptions t;
  t.columns = {"image", "label"};
  t.filter = data::Filter::Compare("split", format::FilterOp::kEq, parquet::Value::String(split));
  data::LoaderOptions l;
  l.batch_size = 7;
  l.shuffle.enabled = false;
  l.num_threads = 0;
  l.images["image"].channels = channels;
  data::Loader loader(data::OpenTable(table, t), l);
  std::vector<std::pair<int64_t, double>> out;
  while (auto batch = loader.Next()) {
    const at::Tensor images = batch->at("image");
    EXPECT_EQ(images.dim(), 4);
    EXPECT_EQ(images.size(1), channels);
    for (int64_t i = 0; i < batch->size(); ++i) {
      out.emplace_back(batch->at("label")[i].item<int64_t>(), images[i].to(at::kFloat).mean().item<double>());
    }
  }
  return out;
}

TEST(ResizeGreyTest, KeepsFlatImagesFlatAndCornersInPlace) {
  const std::vector<uint8_t> flat(28 * 28, 77);
  for (uint8_t v : ResizeGrey(flat.data(), 28, 28, 64)) ASSERT_EQ(v, 77);
  const std::vector<uint8_t> two = {0, 200, 100, 40};  // 2x2
  const std::vector<uint8_t> big = ResizeGrey(two.data(), 2, 2, 4);
  EXPECT_EQ(big[0], 0);
  EXPECT_EQ(big[3], 200);
  EXPECT_EQ(big[12], 100);
  EXPECT_EQ(big[15], 40);
  EXPECT_EQ(big[1], 50);  // a quarter of the way from 0 to 200
}

TEST(EncodeGreyJpegTest, WritesAJpegAndRejectsBadArguments) {
  const std::vector<uint8_t> px(64 * 64, 128);
  const std::string jpeg = EncodeGreyJpeg(px.data(), 64, 64, 90);
  ASSERT_GT(jpeg.size(), 100u);
  EXPECT_EQ(static_cast<unsigned char>(jpeg[0]), 0xff);
  EXPECT_EQ(static_cast<unsigned char>(jpeg[1]), 0xd8);
  EXPECT_THROW_WITH(EncodeGreyJpeg(px.data(), 64, 64, 0), InvalidArgument, "quality must be in [1, 100], got 0");
  EXPECT_THROW_WITH(EncodeGreyJpeg(px.data(), 0, 64, 90), InvalidArgument, "bad size 0x64");
}

TEST(BuildTableTest, FashionMnistBecomesThreeSplitsOfGreyJpegs) {
  testing::TempDir dir;
  WriteFakeFashionMnist(dir.Join("fm"), 200, 50);
  TableBuildOptions options;
  options.fashion_mnist_dir = dir.Join("fm");
  options.val_fraction = 0.2;
  options.rows_per_file = 64;
  options.row_group_rows = 16;
  const std::string table = dir.Join("out/flowers");
  const TableInfo info = BuildTable(table, options);
  EXPECT_EQ(info.source, "fashion-mnist");
  EXPECT_EQ(info.channels, 1);
  ASSERT_EQ(info.classes.size(), 10u);
  EXPECT_EQ(info.classes[0], "T-shirt_top");
  EXPECT_EQ(info.train_rows + info.val_rows, 200);
  EXPECT_EQ(info.test_rows, 50);
  EXPECT_GT(info.val_rows, 20);  // about 40
  EXPECT_LT(info.val_rows, 60);
  EXPECT_FALSE(LocalFileSystem().Exists(table + ".building-" + std::to_string(::getpid())));

  std::map<std::string, int64_t> expected = {
      {"train", info.train_rows}, {"val", info.val_rows}, {"test", info.test_rows}};
  for (const auto& [split, rows] : expected) {
    const auto samples = ReadSplit(table, split, 1);
    ASSERT_EQ(static_cast<int64_t>(samples.size()), rows) << split;
    std::set<int64_t> labels;
    for (const auto& [label, mean] : samples) {
      labels.insert(label);
      // 64x64 upscale of a flat image, JPEG-encoded: the grey level survives to within rounding.
      EXPECT_NEAR(mean, 20.0 * label, 2.0) << split;
    }
    EXPECT_EQ(labels.size(), 10u) << split;
  }
  // Rows are shuffled at build time: the first training rows are not label 0, 1, 2, ... in source order.
  const auto train = ReadSplit(table, "train", 1);
  int in_order = 0;
  for (int i = 0; i < 10; ++i) in_order += train[i].first == i;
  EXPECT_LT(in_order, 10);
  // Decoded as RGB, a grey image has three equal channels.
  EXPECT_NEAR(ReadSplit(table, "test", 3)[0].second, 20.0 * ReadSplit(table, "test", 3)[0].first, 2.0);

  EXPECT_THROW_WITH(BuildTable(table, options), InvalidArgument, table, "already exists");
}

TEST(BuildTableTest, ImageFolderKeepsTheBytesAndNamesTheClasses) {
  testing::TempDir dir;
  const std::map<std::string, int> classes = {{"daisy", 40}, {"rose", 120}, {"tulip", 200}};
  std::set<std::string> originals;
  for (const auto& [name, level] : classes) {
    LocalFileSystem().CreateDirs(dir.Join("photos/" + name));
    for (int i = 0; i < 20; ++i) {
      std::vector<uint8_t> px(48 * 32, static_cast<uint8_t>(level + i));  // not square
      const std::string jpeg = EncodeGreyJpeg(px.data(), 48, 32, 95);
      originals.insert(jpeg);
      LocalFileSystem().WriteAtomically(dir.Join("photos/" + name + "/" + std::to_string(i) + ".JPG"), jpeg);
    }
    LocalFileSystem().WriteAtomically(dir.Join("photos/" + name + "/notes.txt"), "not an image");
  }
  TableBuildOptions options;
  options.images_dir = dir.Join("photos");
  options.val_fraction = 0.2;
  options.test_fraction = 0.2;
  const TableInfo info = BuildTable(dir.Join("t"), options);
  EXPECT_EQ(info.source, "images:" + dir.Join("photos"));
  EXPECT_EQ(info.classes, (std::vector<std::string>{"daisy", "rose", "tulip"}));
  EXPECT_EQ(info.channels, 3);
  EXPECT_EQ(info.train_rows + info.val_rows + info.test_rows, 60);
  EXPECT_GT(info.train_rows, info.val_rows);
  for (const char* split : {"train", "val", "test"}) {
    for (const auto& [label, mean] : ReadSplit(dir.Join("t"), split, 3)) {
      const int level = std::next(classes.begin(), label)->second;
      EXPECT_GE(mean, level - 2.0) << split;
      EXPECT_LE(mean, level + 21.0) << split;
    }
  }
}

TEST(BuildTableTest, BadSourcesFailWithClearMessagesAndLeaveNothingBehind) {
  testing::TempDir dir;
  TableBuildOptions fm;
  fm.fashion_mnist_dir = dir.Join("nothing");
  EXPECT_THROW_WITH(BuildTable(dir.Join("a"), fm), InvalidArgument,
                    dir.Join("nothing/train-images-idx3-ubyte.gz"), "apt-get install dataset-fashion-mnist");
  EXPECT_FALSE(LocalFileSystem().Exists(dir.Join("a")));
  EXPECT_EQ(LocalFileSystem().List(dir.path()).size(), 0u) << "no staging directory left";

  LocalFileSystem().CreateDirs(dir.Join("one/only"));
  TableBuildOptions folder;
  folder.images_dir = dir.Join("one");
  EXPECT_THROW_WITH(BuildTable(dir.Join("b"), folder), InvalidArgument, "expected at least 2 class sub-folders",
                    "found 1");

  LocalFileSystem().CreateDirs(dir.Join("few/x"));
  LocalFileSystem().CreateDirs(dir.Join("few/y"));
  const std::vector<uint8_t> px(16 * 16, 9);
  LocalFileSystem().WriteAtomically(dir.Join("few/x/1.jpg"), EncodeGreyJpeg(px.data(), 16, 16, 90));
  folder.images_dir = dir.Join("few");
  EXPECT_THROW_WITH(BuildTable(dir.Join("c"), folder), InvalidArgument, "split would be empty");

  LocalFileSystem().WriteAtomically(dir.Join("few/y/2.jpg"), "not really a jpeg");
  folder.val_fraction = 0;
  folder.test_fraction = 0;
  EXPECT_THROW_WITH(BuildTable(dir.Join("d"), folder), InvalidArgument, "val split would be empty");
  EXPECT_FALSE(LocalFileSystem().Exists(dir.Join("d")));

  EXPECT_EQ(ReadTableInfo(dir.Join("nope")), std::nullopt);
}

}  // namespace
}  // namespace lakerun::examples::flowers
