#include "lakerun/data/loader.h"

#include <ATen/ATen.h>
#include <png.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

// A table whose "id" column holds the row index, "x" a [2, 3] float block derived from it, "pixels" 4 bytes.
std::shared_ptr<MemoryRowSource> Table(int64_t rows, uint64_t unit_rows, const std::string& name = "table") {
  MemoryRowSource::Column id{{"id", ElementType::kInt64, {}}, std::vector<uint8_t>(rows * 8), {}};
  MemoryRowSource::Column x{{"x", ElementType::kFloat32, {2, 3}}, std::vector<uint8_t>(rows * 24), {}};
  MemoryRowSource::Column px{{"pixels", ElementType::kUInt8, {4}}, std::vector<uint8_t>(rows * 4), {}};
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(id.bytes.data() + i * 8, &i, 8);
    for (int k = 0; k < 6; ++k) {
      const float v = static_cast<float>(i) + 0.5f * k;
      std::memcpy(x.bytes.data() + i * 24 + k * 4, &v, 4);
    }
    for (int k = 0; k < 4; ++k) px.bytes[i * 4 + k] = static_cast<uint8_t>(i + k);
  }
  return std::make_shared<MemoryRowSource>(std::vector<MemoryRowSource::Column>{id, x, px}, unit_rows, name);
}

// All batches of one epoch on one rank, checking each batch's tensors against its sample ids.
std::vector<std::vector<int64_t>> Drain(Loader& loader) {
  std::vector<std::vector<int64_t>> batches;
  while (auto batch = loader.Next()) {
    const at::Tensor& id = batch->at("id");
    EXPECT_TRUE(at::equal(id, batch->sample_ids));
    const at::Tensor& x = batch->at("x");
    EXPECT_EQ(x.sizes(), (at::IntArrayRef{batch->size(), 2, 3}));
    if (batch->size() > 0) {
      EXPECT_TRUE(at::allclose(x.select(1, 1).select(1, 2), id.to(at::kFloat) + 2.5f));
      EXPECT_TRUE(at::equal(batch->at("pixels").select(1, 3), (id + 3).remainder(256).to(at::kByte)));
    }
    batches.emplace_back(id.data_ptr<int64_t>(), id.data_ptr<int64_t>() + id.numel());
  }
  return batches;
}

TEST(LoaderTest, EveryRankYieldsTheSameBatchesAndCoverageIsExact) {
  for (int64_t rows : {0, 1, 3, 7, 100}) {
    for (uint64_t unit_rows : {1, 3, 1000}) {
      auto source = Table(rows, unit_rows);
      for (int64_t world = 1; world <= 8; ++world) {
        for (RemainderPolicy policy : {RemainderPolicy::kPad, RemainderPolicy::kDrop}) {
          for (int64_t batch_size : {1, 4, 32}) {
            for (bool drop_last : {false, true}) {
              SCOPED_TRACE(testing::Message() << "rows=" << rows << " unit_rows=" << unit_rows << " world=" << world
                                              << " " << ToString(policy) << " batch=" << batch_size
                                              << " drop_last=" << drop_last);
              std::map<int64_t, int> counts;
              size_t expected_batches = SIZE_MAX;
              for (int64_t rank = 0; rank < world; ++rank) {
                LoaderOptions o;
                o.batch_size = batch_size;
                o.rank = rank;
                o.world_size = world;
                o.remainder = policy;
                o.drop_last = drop_last;
                o.num_threads = rank % 2;  // inline and pooled decoding give the same batches
                o.shuffle = {true, 2, 2};
                Loader loader(source, o);
                const auto batches = Drain(loader);
                ASSERT_EQ(batches.size(), loader.batches_per_epoch());
                if (expected_batches == SIZE_MAX) expected_batches = batches.size();
                ASSERT_EQ(batches.size(), expected_batches);
                for (const auto& b : batches) {
                  for (int64_t id : b) ++counts[id];
                }
              }
              if (policy == RemainderPolicy::kDrop && !drop_last) {
                ASSERT_EQ(counts.size(), static_cast<size_t>(rows - rows % world));
                for (const auto& [id, c] : counts) ASSERT_EQ(c, 1) << id;
              }
              if (policy == RemainderPolicy::kPad && !drop_last) {
                ASSERT_EQ(counts.size(), static_cast<size_t>(rows));
              }
            }
          }
        }
      }
    }
  }
}

// The global order (ranks' batches concatenated in rank order) depends only on (seed, epoch): not on the number of
// threads, ranks or units.
TEST(LoaderTest, GlobalOrderIsTheSameForAnyThreadsWorldSizeAndLayout) {
  const int64_t rows = 960;
  std::vector<int64_t> reference;
  for (uint64_t unit_rows : {7, 100, 960}) {
    auto source = Table(rows, unit_rows);
    for (size_t threads : {0, 1, 3}) {
      for (int64_t world : {1, 2, 3, 8}) {
        std::vector<int64_t> order;
        for (int64_t rank = 0; rank < world; ++rank) {
          LoaderOptions o;
          o.batch_size = 10;
          o.rank = rank;
          o.world_size = world;
          o.num_threads = threads;
          o.prefetch_batches = 3;
          o.seed = 1234;
          o.shuffle = {true, 16, 4};
          Loader loader(source, o);
          loader.SetEpoch(5);
          for (const auto& b : Drain(loader)) order.insert(order.end(), b.begin(), b.end());
        }
        if (reference.empty()) {
          reference = order;
          const auto global = GlobalOrder(rows, 1234, 5, {true, 16, 4}).Materialize();
          ASSERT_TRUE(std::equal(reference.begin(), reference.end(), global.begin()));
        }
        ASSERT_EQ(order, reference) << "units of " << unit_rows << ", " << threads << " threads, world " << world;
      }
    }
  }
}

TEST(LoaderTest, EpochsDifferAndRepeat) {
  auto source = Table(200, 50);
  LoaderOptions o;
  o.batch_size = 50;
  Loader loader(source, o);
  const auto e0 = Drain(loader);
  loader.SetEpoch(1);
  const auto e1 = Drain(loader);
  loader.SetEpoch(0);
  EXPECT_EQ(Drain(loader), e0);
  EXPECT_NE(e0, e1);
}

TEST(LoaderTest, ResumeMidEpochYieldsExactlyTheRest) {
  auto source = Table(1000, 64);
  for (int64_t world : {1, 3}) {
    for (int64_t rank = 0; rank < world; ++rank) {
      LoaderOptions o;
      o.batch_size = 16;
      o.rank = rank;
      o.world_size = world;
      o.seed = 9;
      o.shuffle = {true, 32, 2};
      Loader full(source, o);
      full.SetEpoch(2);
      const auto all = Drain(full);
      for (size_t cut : {size_t{0}, size_t{1}, all.size() / 2, all.size()}) {
        Loader first(source, o);
        first.SetEpoch(2);
        for (size_t i = 0; i < cut; ++i) ASSERT_TRUE(first.Next().has_value());
        const auto saved = LoaderState::FromMap(first.state_dict().ToMap());
        EXPECT_EQ(saved.samples_yielded, std::min<uint64_t>(cut * 16, full.samples_per_epoch()));
        Loader resumed(source, o);
        resumed.load_state_dict(saved);
        const auto rest = Drain(resumed);
        ASSERT_EQ(rest, std::vector<std::vector<int64_t>>(all.begin() + cut, all.end())) << "cut " << cut;
        // Batch indices continue where the interrupted epoch stopped.
        Loader again(source, o);
        again.load_state_dict(saved);
        if (auto next = again.Next()) {
          EXPECT_EQ(next->index, cut) << "cut " << cut;
        }
      }
    }
  }
}

TEST(LoaderTest, ElasticResumeOnAnotherWorldSizeYieldsTheRemainingSamples) {
  auto source = Table(999, 100);
  std::multiset<int64_t> yielded;
  std::vector<LoaderState> states;
  for (int64_t rank = 0; rank < 4; ++rank) {
    LoaderOptions o;
    o.batch_size = 10;
    o.rank = rank;
    o.world_size = 4;
    o.remainder = RemainderPolicy::kDrop;
    Loader loader(source, o);
    for (int i = 0; i < 7; ++i) {
      auto b = loader.Next();
      for (int64_t k = 0; k < b->size(); ++k) yielded.insert(b->sample_ids[k].item<int64_t>());
    }
    states.push_back(loader.state_dict());
  }
  std::multiset<int64_t> rest;
  for (int64_t rank = 0; rank < 2; ++rank) {
    LoaderOptions o;
    o.batch_size = 10;
    o.rank = rank;
    o.world_size = 2;
    o.remainder = RemainderPolicy::kDrop;
    Loader loader(source, o);
    loader.load_state_dict(states[0]);
    for (const auto& b : Drain(loader)) rest.insert(b.begin(), b.end());
  }
  // 999 drop on 4 ranks: 249 per rank, 70 yielded; the remaining 4 * 179 = 716 split evenly over 2 ranks.
  EXPECT_EQ(rest.size(), 716u);
  for (int64_t id : rest) EXPECT_EQ(yielded.count(id), 0u) << id;
  std::set<int64_t> all(yielded.begin(), yielded.end());
  all.insert(rest.begin(), rest.end());
  EXPECT_EQ(all.size(), 996u);
}

TEST(LoaderTest, StateOfAnotherTableOrSeedIsRejected) {
  auto source = Table(100, 10);
  Loader loader(source, {});
  LoaderState state = loader.state_dict();
  state.num_samples = 99;
  EXPECT_THROW_WITH(loader.load_state_dict(state), InvalidArgument, "rank 0 of 1", "99 rows");
  state = loader.state_dict();
  state.seed = 5;
  EXPECT_THROW_WITH(loader.load_state_dict(state), InvalidArgument, "seed 5");
}

TEST(LoaderTest, CorruptUnitReachesTheConsumerWithRankAndFileAndDoesNotHang) {
  for (size_t threads : {0, 2}) {
    auto source = Table(400, 50, "part-0.parquet");
    source->FailUnit(3);
    LoaderOptions o;
    o.batch_size = 25;
    o.rank = 2;
    o.world_size = 4;
    o.num_threads = threads;
    o.shuffle.enabled = false;  // rank 2 reads rows 200-299: units 4 and 5 only
    o.timeout = std::chrono::seconds(20);
    {
      Loader loader(source, o);
      EXPECT_EQ(Drain(loader).size(), 4u);
    }
    o.rank = 1;  // rows 100-199: unit 3 is the second one
    Loader loader(source, o);
    ASSERT_TRUE(loader.Next().has_value());
    ASSERT_TRUE(loader.Next().has_value());
    EXPECT_THROW_WITH(loader.Next(), CorruptDataError, "rank 1 of 4", "batch 2", "part-0.parquet unit 3");
    EXPECT_THROW_WITH(loader.Next(), CorruptDataError, "part-0.parquet unit 3");  // stays failed, never hangs
    loader.SetEpoch(1);  // a new epoch starts clean (and fails again on the same unit when it gets there)
  }
}

TEST(LoaderTest, TransformsRunOnEveryBatch) {
  auto source = Table(64, 16);
  LoaderOptions o;
  o.batch_size = 8;
  o.transforms.push_back([](Batch& b) { b.tensors["x2"] = b.tensors.at("x") * 2; });
  Loader loader(source, o);
  int batches = 0;
  while (auto b = loader.Next()) {
    EXPECT_TRUE(at::allclose(b->at("x2"), b->at("x") * 2));
    ++batches;
  }
  EXPECT_EQ(batches, 8);
}

// Batch tensors come from memory the loader recycles; one kept past the loader stays intact (its memory is not
// freed with the loader, which the churn below would otherwise overwrite; ASan builds see any use after free).
TEST(LoaderTest, ABatchKeptPastTheLoaderStaysIntact) {
  auto source = Table(400, 100);
  std::optional<Batch> kept;
  int batches = 0;
  {
    LoaderOptions o;
    o.batch_size = 10;
    o.num_threads = 1;
    Loader loader(source, o);
    for (int epoch = 0; epoch < 2; ++epoch) {
      loader.SetEpoch(epoch);
      while (auto b = loader.Next()) {
        ++batches;
        if (!kept) kept = std::move(b);
      }
    }
  }
  EXPECT_EQ(batches, 80);
  std::vector<std::vector<uint8_t>> churn;
  for (int i = 0; i < 256; ++i) churn.emplace_back(240 + i % 64, static_cast<uint8_t>(0xA5));
  for (int64_t i = 0; i < kept->size(); ++i) {
    const int64_t id = kept->sample_ids[i].item<int64_t>();
    EXPECT_EQ(kept->at("id")[i].item<int64_t>(), id);
    EXPECT_FLOAT_EQ(kept->at("x")[i][1][2].item<float>(), static_cast<float>(id) + 2.5f);
  }
}

// Row i: a (6 + i % 3) x (7 + i % 2) grey PNG whose pixels are 10 * i + x; row `corrupt` holds bad bytes.
std::shared_ptr<MemoryRowSource> PngTable(int64_t rows, int64_t corrupt) {
  MemoryRowSource::Column id{{"id", ElementType::kInt64, {}}, std::vector<uint8_t>(rows * 8), {}};
  MemoryRowSource::Column png{{"png", ElementType::kBinary, {}}, {}, {0}};
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(id.bytes.data() + i * 8, &i, 8);
    const int h = 6 + i % 3, w = 7 + i % 2;
    std::vector<uint8_t> px(h * w);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) px[y * w + x] = static_cast<uint8_t>(10 * i + x);
    }
    png_image image;
    std::memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
    image.width = w;
    image.height = h;
    image.format = PNG_FORMAT_GRAY;
    png_alloc_size_t size = 0;
    png_image_write_to_memory(&image, nullptr, &size, 0, px.data(), 0, nullptr);
    std::vector<uint8_t> bytes(size);
    png_image_write_to_memory(&image, bytes.data(), &size, 0, px.data(), 0, nullptr);
    bytes.resize(size);
    if (i == corrupt) bytes.assign({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 1, 2, 3});
    png.bytes.insert(png.bytes.end(), bytes.begin(), bytes.end());
    png.offsets.push_back(static_cast<int64_t>(png.bytes.size()));
  }
  return std::make_shared<MemoryRowSource>(std::vector<MemoryRowSource::Column>{id, png}, 4, "images");
}

TEST(LoaderTest, ImageColumnsBecomeAugmentedNchwTensorsReproducibly) {
  auto source = PngTable(12, -1);
  LoaderOptions o;
  o.batch_size = 5;
  ImageOptions io;
  io.channels = 3;
  io.crop_height = 4;
  io.crop_width = 4;
  io.random_crop = true;
  io.flip_probability = 0.5f;
  io.to_float = true;
  io.mean = {0.5f};
  io.std = {0.25f};
  o.images["png"] = io;
  std::map<int64_t, at::Tensor> first;
  for (size_t threads : {0, 2}) {
    o.num_threads = threads;
    Loader loader(source, o);
    int flips = 0;
    while (auto b = loader.Next()) {
      const at::Tensor& img = b->at("png");
      ASSERT_EQ(img.scalar_type(), at::kFloat);
      ASSERT_EQ(img.sizes(), (at::IntArrayRef{b->size(), 3, 4, 4}));
      for (int64_t k = 0; k < b->size(); ++k) {
        const int64_t id = b->sample_ids[k].item<int64_t>();
        const at::Tensor sample = img[k];
        EXPECT_TRUE(at::equal(sample[0], sample[2]));  // grey expanded to RGB
        // Pixels are 10 * id + x, normalised: neighbouring columns differ by +-1 / 255 / 0.25.
        const float step = (sample[0][0][1] - sample[0][0][0]).item<float>();
        EXPECT_NEAR(std::abs(step), 1.0f / 255 / 0.25f, 1e-4);
        flips += step < 0;
        if (threads == 0) {
          first[id] = sample.clone();
        } else {
          EXPECT_TRUE(at::equal(first.at(id), sample)) << "row " << id;  // same augmentation on any thread count
        }
      }
    }
    EXPECT_GT(flips, 0);
    EXPECT_LT(flips, 12);
  }
}

TEST(LoaderTest, CorruptImageNamesRankUnitAndRow) {
  auto source = PngTable(8, 6);
  LoaderOptions o;
  o.batch_size = 8;
  o.rank = 0;
  o.world_size = 1;
  ImageOptions io;
  io.channels = 1;
  io.crop_height = io.crop_width = 4;
  o.images["png"] = io;
  Loader loader(source, o);
  EXPECT_THROW_WITH(loader.Next(), CorruptDataError, "rank 0 of 1", "images unit 1", "row 6", "bad PNG");
}

TEST(LoaderTest, SmallBatchesArePrefetchedFurtherWithinPrefetchBytes) {
  auto source = Table(2000, 100);
  // A batch of 10 rows: sample ids and id 80 bytes each, x 240, pixels 40: 440 bytes.
  const auto run = [&](size_t prefetch_bytes, size_t* window) {
    LoaderOptions o;
    o.batch_size = 10;
    o.num_threads = 2;
    o.seed = 5;
    o.prefetch_bytes = prefetch_bytes;
    std::atomic<size_t> built{0};
    o.transforms.push_back([&](Batch&) { built.fetch_add(1); });
    Loader loader(source, o);
    EXPECT_EQ(loader.prefetch_window(), 4u);  // nothing measured yet: prefetch_batches
    std::vector<std::vector<int64_t>> batches;
    size_t returned = 0;
    while (auto batch = loader.Next()) {
      ++returned;
      // Batches built but not returned are the ones in flight: never more than the window.
      EXPECT_LE(built.load(), returned + loader.prefetch_window()) << returned;
      const at::Tensor& id = batch->at("id");
      batches.emplace_back(id.data_ptr<int64_t>(), id.data_ptr<int64_t>() + id.numel());
    }
    *window = loader.prefetch_window();
    return batches;
  };
  size_t window = 0;
  const auto exact = run(0, &window);
  EXPECT_EQ(window, 4u);  // 0: exactly prefetch_batches
  ASSERT_EQ(exact.size(), 200u);
  EXPECT_EQ(run(10 * 440, &window), exact);  // the order does not depend on how far ahead batches are built
  EXPECT_EQ(window, 10u);
  EXPECT_EQ(run(100, &window), exact);  // less than a batch: still prefetch_batches
  EXPECT_EQ(window, 4u);
  EXPECT_EQ(run(LoaderOptions{}.prefetch_bytes, &window), exact);
  EXPECT_EQ(window, 64u);  // capped

  // Two threads over a table larger than the cache: row groups are decoded early for every queued batch, so the
  // queue stays at prefetch_batches (one thread decodes only as batches need them: the window may grow). Without
  // decoding threads Next() builds the queue itself: it stays at prefetch_batches too.
  for (size_t threads : {0, 1, 2}) {
    LoaderOptions o;
    o.batch_size = 10;
    o.num_threads = threads;
    o.cache_bytes = 20000;  // units of 100 rows x 44 bytes; the table is 88000 bytes
    Loader loader(source, o);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(loader.Next().has_value());
    EXPECT_EQ(loader.prefetch_window(), threads == 1 ? 64u : 4u) << threads;
  }
}

// Serves `inner`'s units, each after a delay.
class SlowSource : public RowSource {
 public:
  SlowSource(std::shared_ptr<RowSource> inner, std::chrono::milliseconds delay)
      : inner_(std::move(inner)), delay_(delay) {}
  const std::vector<ColumnInfo>& columns() const override { return inner_->columns(); }
  uint64_t num_rows() const override { return inner_->num_rows(); }
  size_t num_units() const override { return inner_->num_units(); }
  uint64_t unit_start(size_t unit) const override { return inner_->unit_start(unit); }
  std::shared_ptr<const UnitData> ReadUnit(size_t unit) const override {
    std::this_thread::sleep_for(delay_);
    return inner_->ReadUnit(unit);
  }
  std::string DescribeUnit(size_t unit) const override { return inner_->DescribeUnit(unit); }

 private:
  std::shared_ptr<RowSource> inner_;
  std::chrono::milliseconds delay_;
};

TEST(LoaderTest, ABatchNotReadyWithinTheTimeoutIsAnErrorAfterOneTimeout) {
  // Next() may first wait for a batch further ahead (when the caller outruns the decoding): the whole wait still
  // ends after one timeout, naming the batch the caller asked for.
  auto source = std::make_shared<SlowSource>(Table(400, 20), std::chrono::milliseconds(600));
  for (size_t threads : {1, 2}) {
    LoaderOptions o;
    o.batch_size = 5;
    o.num_threads = threads;
    o.timeout = std::chrono::milliseconds(200);
    Loader loader(source, o);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW_WITH(loader.Next(), IoError, "rank 0 of 1", "epoch 0 batch 0", "not decoded within 200 ms");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(390)) << threads;  // not two waits
  }
}

TEST(LoaderTest, BadOptionsAreRejectedWithTheRank) {
  auto source = Table(10, 5);
  LoaderOptions o;
  o.rank = 4;
  EXPECT_THROW_WITH(Loader(source, o), ConfigError, "set both rank and world_size, or neither");
  o.world_size = 4;
  EXPECT_THROW_WITH(Loader(source, o), ConfigError, "LoaderOptions::rank 4", "world_size 4");
  o.rank = 1;
  o.batch_size = 0;
  EXPECT_THROW_WITH(Loader(source, o), ConfigError, "rank 1 of 4", "LoaderOptions::batch_size");
  o.batch_size = 1;
  o.images["pixels"] = ImageOptions{};
  EXPECT_THROW_WITH(Loader(source, o), InvalidArgument, "'pixels'", "not binary");
  o.images.clear();
  o.images["nope"] = ImageOptions{};
  EXPECT_THROW_WITH(Loader(source, o), InvalidArgument, "'nope'");
  o.images.clear();
  o.device = c10::Device(c10::kCUDA, 0);
  if (!at::hasCUDA()) EXPECT_THROW_WITH(Loader(source, o), ConfigError, "no CUDA");
}

TEST(LoaderTest, CudaBatchesHoldWhatCpuBatchesHold) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto source = Table(1000, 64);
  for (int threads : {0, 2}) {
    SCOPED_TRACE(threads);
    LoaderOptions o;
    o.batch_size = 48;
    o.num_threads = threads;
    o.shuffle = {true, 3, 2};
    Loader on_cpu(source, o);
    o.device = c10::Device(c10::kCUDA, 0);
    Loader on_gpu(source, o);
    int64_t batches = 0;
    for (int epoch = 0; epoch < 2; ++epoch) {
      on_cpu.SetEpoch(epoch);
      on_gpu.SetEpoch(epoch);
      while (auto expected = on_cpu.Next()) {
        auto batch = on_gpu.Next();
        ASSERT_TRUE(batch.has_value());
        EXPECT_TRUE(at::equal(batch->sample_ids, expected->sample_ids));
        for (const char* column : {"id", "x", "pixels"}) {
          const at::Tensor& t = batch->at(column);
          EXPECT_EQ(t.device(), c10::Device(c10::kCUDA, 0)) << column;
          // The copy was issued non-blocking from pinned memory: .cpu() orders after it on the current stream.
          EXPECT_TRUE(at::equal(t.cpu(), expected->at(column))) << column;
        }
        ++batches;
      }
      EXPECT_FALSE(on_gpu.Next().has_value());
    }
    EXPECT_EQ(batches, 2 * 21);
  }
}

}  // namespace
}  // namespace lakerun::data

namespace lakerun::data {
namespace {

// A loader whose options leave rank and world_size unset reads everything until it is given a place, and then
// yields exactly what a loader built with that place does (what a Trainer of several ranks relies on).
TEST(LoaderShardingTest, AdoptRankShardsALoaderThatWasNotGivenOne) {
  auto source = Table(100, 10);
  LoaderOptions o;
  o.batch_size = 8;
  o.seed = 3;
  Loader unset(source, o);
  EXPECT_FALSE(unset.rank_given());
  EXPECT_EQ(unset.world_size(), 1);
  EXPECT_EQ(unset.samples_per_epoch(), 100u);
  ASSERT_TRUE(unset.Next().has_value());  // adopting drops what was in flight and starts the epoch again
  EXPECT_TRUE(unset.AdoptRank(1, 2));
  EXPECT_EQ(unset.rank(), 1);
  EXPECT_EQ(unset.samples_per_epoch(), 50u);
  o.rank = 1;
  o.world_size = 2;
  Loader given(source, o);
  EXPECT_TRUE(given.rank_given());
  EXPECT_EQ(Drain(unset), Drain(given));
  unset.SetEpoch(4);
  given.SetEpoch(4);
  EXPECT_EQ(Drain(unset), Drain(given));
  EXPECT_FALSE(given.AdoptRank(0, 4));  // its own place wins
  EXPECT_EQ(given.world_size(), 2);
  EXPECT_THROW_WITH(unset.AdoptRank(2, 2), ConfigError, "LoaderOptions::rank 2", "world_size 2");
}

// A Loader moves: into a variable, a container or a member, mid-epoch, with its decoding threads running.
TEST(LoaderMoveTest, AMovedLoaderContinuesWhereItWas) {
  auto source = Table(200, 20);
  LoaderOptions o;
  o.batch_size = 16;
  o.num_threads = 2;
  Loader reference(source, o);
  const auto expected = Drain(reference);
  Loader first(source, o);
  std::vector<std::vector<int64_t>> got;
  for (int i = 0; i < 3; ++i) {
    const at::Tensor ids = first.Next()->sample_ids;
    got.emplace_back(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  }
  Loader moved(std::move(first));
  std::vector<Loader> held;
  held.push_back(std::move(moved));
  for (const auto& batch : Drain(held.front())) got.push_back(batch);
  EXPECT_EQ(got, expected);
  // Assigning over a loader with batches in flight stops it first.
  Loader target(source, o);
  ASSERT_TRUE(target.Next().has_value());
  target = Loader(source, o);
  EXPECT_EQ(Drain(target), expected);
}

}  // namespace
}  // namespace lakerun::data
