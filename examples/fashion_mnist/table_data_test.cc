// The Delta tables read through lakerun::data::Loader give exactly the tensors dataset.h reads from the IDX files,
// so the Trainer example trains on the same numbers as the hand-written loop.
#include "table_data.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <vector>

#include "dataset.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"
#include "table_setup.h"

namespace lakerun::examples {
namespace {

const char* const kIdxDir = "/usr/share/datasets/fashion-mnist";

TableSetupOptions Tables(const std::string& table, const std::string& idx_dir = kIdxDir) {
  TableSetupOptions options;
  options.table = table;
  options.idx_dir = idx_dir;
  return options;
}

FashionMnistLoaderSettings Settings(int64_t batch_size, uint64_t seed, bool shuffle) {
  FashionMnistLoaderSettings settings;
  settings.batch_size = batch_size;
  settings.seed = seed;
  settings.shuffle = shuffle;
  return settings;
}

struct Drained {
  at::Tensor images;  // [N, 1, 28, 28]
  at::Tensor labels;
  at::Tensor ids;  // rows of the source
};

// Every batch of one epoch of `world_size` loaders (ranks 0..world_size-1), concatenated rank after rank.
Drained Drain(const std::shared_ptr<const data::RowSource>& source, FashionMnistLoaderSettings settings,
              int64_t world_size) {
  std::vector<at::Tensor> images, labels, ids;
  for (int64_t rank = 0; rank < world_size; ++rank) {
    settings.rank = rank;
    settings.world_size = world_size;
    data::Loader loader(source, FashionMnistLoaderOptions(settings));
    loader.SetEpoch(1);
    while (auto batch = loader.Next()) {
      images.push_back(batch->at("image"));
      labels.push_back(batch->at("label"));
      ids.push_back(batch->sample_ids);
    }
  }
  return {at::cat(images), at::cat(labels), at::cat(ids)};
}

class FashionMnistTableTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    train::LocalRankSync sync;
    const TableSetupResult setup =
        EnsureFashionMnistTables(Tables(dir_->Join("fmnist")), sync);
    imported_ = setup.imported;
    idx_ = new FashionMnist(LoadFashionMnist(FashionMnistOptions()));
  }
  static void TearDownTestSuite() {
    delete idx_;
    delete dir_;
  }
  static testing::TempDir* dir_;
  static FashionMnist* idx_;
  static std::vector<std::string> imported_;
};
testing::TempDir* FashionMnistTableTest::dir_ = nullptr;
FashionMnist* FashionMnistTableTest::idx_ = nullptr;
std::vector<std::string> FashionMnistTableTest::imported_;

TEST_F(FashionMnistTableTest, ImportsBothSplitsOnceAsDeltaTables) {
  EXPECT_EQ(imported_, (std::vector<std::string>{"train", "test"}));
  EXPECT_TRUE(SplitPresent(dir_->Join("fmnist"), "train"));
  EXPECT_TRUE(SplitPresent(dir_->Join("fmnist"), "test"));
  // No staging directories left behind.
  for (const FileInfo& f : LocalFileSystem().List(dir_->Join("fmnist"))) {
    EXPECT_TRUE(f.name == "train" || f.name == "test") << f.name;
  }
  train::LocalRankSync sync;
  EXPECT_TRUE(EnsureFashionMnistTables(Tables(dir_->Join("fmnist")), sync).imported.empty());
}

TEST_F(FashionMnistTableTest, ShuffledShardsOfTwoRanksEqualTheIdxTensors) {
  const FashionMnistSources s = OpenFashionMnistSources(FashionMnistSourceOptions{dir_->Join("fmnist"), -1});
  ASSERT_EQ(s.train->num_rows(), 60000u);
  ASSERT_EQ(s.test->num_rows(), 10000u);

  const Drained train = Drain(s.train, Settings(100, 7, true), 2);
  ASSERT_EQ(train.ids.size(0), 60000);
  // Every training row exactly once over the two ranks, in a shuffled order.
  EXPECT_TRUE(std::get<0>(at::sort(train.ids)).equal(at::arange(60000, at::kLong)));
  EXPECT_FALSE(train.ids.equal(at::arange(60000, at::kLong)));
  EXPECT_EQ(train.images.sizes(), (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(train.images.scalar_type(), at::kFloat);
  // Bit-identical to the IDX path (same normalization ops), row for row.
  EXPECT_TRUE(train.images.equal(idx_->train_images.index_select(0, train.ids)));
  EXPECT_TRUE(train.labels.equal(idx_->train_labels.index_select(0, train.ids)));

  // Unshuffled over 3 ranks: rank after rank gives the table's order (10,000 = 3 x 3,334 - 2: the last 2 padded by
  // repeating the first rows).
  const Drained test = Drain(s.test, Settings(1000, 0, false), 3);
  ASSERT_EQ(test.ids.size(0), 10002);
  EXPECT_TRUE(test.ids.slice(0, 0, 10000).equal(at::arange(10000, at::kLong)));
  EXPECT_TRUE(test.ids.slice(0, 10000).equal(at::arange(2, at::kLong)));
  EXPECT_TRUE(test.images.slice(0, 0, 10000).equal(idx_->test_images));
  EXPECT_TRUE(test.labels.slice(0, 0, 10000).equal(idx_->test_labels));
}

TEST(FashionMnistTableSetupTest, MissingIdxFilesNameThePathAndThePackage) {
  testing::TempDir dir;
  train::LocalRankSync sync;
  EXPECT_THROW_WITH(EnsureFashionMnistTables(Tables(dir.Join("t"), dir.Join("no-idx")), sync), IoError,
                    dir.Join("t"), dir.Join("no-idx/train-images-idx3-ubyte.gz"), "dataset-fashion-mnist");
  EXPECT_FALSE(LocalFileSystem().Exists(dir.Join("t/train")));
}

TEST(FashionMnistTableSetupTest, ImportsOnlyTheMissingSplit) {
  testing::TempDir dir;
  train::LocalRankSync sync;
  LocalFileSystem().CreateDirs(dir.Join("t"));
  ASSERT_EQ(EnsureFashionMnistTables(Tables(dir.Join("t")), sync).imported.size(), 2u);
  LocalFileSystem().RemoveAll(dir.Join("t/test"));
  EXPECT_EQ(EnsureFashionMnistTables(Tables(dir.Join("t")), sync).imported,
            (std::vector<std::string>{"test"}));
  EXPECT_TRUE(SplitPresent(dir.Join("t"), "test"));
}

TEST(NormalizeImagesTest, ChecksEveryImageIs784Bytes) {
  auto normalize = NormalizeImages(0.5, 0.25);
  data::Batch batch;
  batch.tensors["image"] = at::full({2 * 784}, 255, at::kByte);
  batch.tensors["image.offsets"] = at::tensor({int64_t{0}, int64_t{784}, int64_t{1568}});
  batch.sample_ids = at::tensor({int64_t{40}, int64_t{41}});
  normalize(batch);
  EXPECT_EQ(batch.at("image").sizes(), (std::vector<int64_t>{2, 1, 28, 28}));
  EXPECT_FLOAT_EQ(batch.at("image").max().item<float>(), 2.0f);
  EXPECT_EQ(batch.tensors.count("image.offsets"), 0u);
  EXPECT_THROW_WITH(normalize(batch), InvalidArgument, "'image' as raw bytes");

  batch.tensors["image"] = at::zeros({784 + 700}, at::kByte);
  batch.tensors["image.offsets"] = at::tensor({int64_t{0}, int64_t{784}, int64_t{1484}});
  EXPECT_THROW_WITH(normalize(batch), CorruptDataError, "table row 41 holds 700 bytes, expected 784");
  EXPECT_THROW_WITH(NormalizeImages(0, 0), InvalidArgument, "std must be positive");
}

}  // namespace
}  // namespace lakerun::examples
