#include <lakerun/dist/distributed_sampler.h>

#include <lakerun/base/error.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include "lakerun_testing/matchers.h"
#include "lakerun_testing/paths.h"

namespace lakerun::dist {
namespace {

// Shuffled (the default) with the given seed.
SamplerOptions Seeded(uint64_t seed, bool drop_last = false) {
  SamplerOptions options;
  options.seed = seed;
  options.drop_last = drop_last;
  return options;
}

// Golden orders produced by PyTorch's own DistributedSampler (testdata/gen_sampler_golden.py).
TEST(DistributedSamplerTest, MatchesPyTorchGoldenOrders) {
  std::ifstream in(lakerun::testing::SourceDir() + "/src/dist/testdata/sampler_golden.json");
  ASSERT_TRUE(in.good());
  nlohmann::json golden = nlohmann::json::parse(in);
  ASSERT_GE(golden["cases"].size(), 10u);
  for (const auto& c : golden["cases"]) {
    int64_t n = c["n"];
    int world = c["world"];
    SamplerOptions options;
    options.seed = c["seed"];
    options.shuffle = c["shuffle"];
    options.drop_last = c["drop_last"];
    for (int rank = 0; rank < world; ++rank) {
      SCOPED_TRACE(c.dump().substr(0, 120) + " rank " + std::to_string(rank));
      DistributedSampler sampler(n, rank, world, options);
      sampler.set_epoch(c["epoch"]);
      std::vector<int64_t> got = sampler.indices();
      EXPECT_EQ(static_cast<int64_t>(got.size()), c["num_samples"].get<int64_t>());
      EXPECT_EQ(sampler.num_samples(), c["num_samples"].get<int64_t>());
      std::vector<int64_t> want = c["ranks"][rank];
      if (c["truncated"]) {
        ASSERT_GE(got.size(), 100u);
        std::vector<int64_t> ends(got.begin(), got.begin() + 50);
        ends.insert(ends.end(), got.end() - 50, got.end());
        got = ends;
      }
      EXPECT_EQ(got, want);
    }
  }
}

TEST(DistributedSamplerTest, EqualCountsPaddingAndCoverage) {
  for (int world : {1, 2, 3, 5, 8}) {
    for (int64_t n : {0, 1, 7, 10, 64, 101}) {
      DistributedSampler probe(n, 0, world);
      std::multiset<int64_t> seen;
      for (int rank = 0; rank < world; ++rank) {
        DistributedSampler s(n, rank, world, Seeded(3));
        s.set_epoch(2);
        std::vector<int64_t> idx = s.indices();
        EXPECT_EQ(static_cast<int64_t>(idx.size()), probe.num_samples()) << "n=" << n << " world=" << world;
        seen.insert(idx.begin(), idx.end());
      }
      // Every sample at least once, the padding exactly num_padding() repeats.
      for (int64_t i = 0; i < n; ++i) EXPECT_GE(seen.count(i), 1u) << "sample " << i << " n=" << n;
      EXPECT_EQ(static_cast<int64_t>(seen.size()), n + probe.num_padding());
      EXPECT_EQ(probe.num_padding(), probe.total_size() - n);
      EXPECT_LT(probe.num_padding(), world);
    }
  }
}

TEST(DistributedSamplerTest, DropLastDropsTheTailAndNeverRepeats) {
  int world = 3;
  int64_t n = 10;
  std::set<int64_t> seen;
  for (int rank = 0; rank < world; ++rank) {
    DistributedSampler s(n, rank, world, Seeded(0, /*drop_last=*/true));
    std::vector<int64_t> idx = s.indices();
    EXPECT_EQ(idx.size(), 3u);
    for (int64_t i : idx) EXPECT_TRUE(seen.insert(i).second) << "repeated sample " << i;
    EXPECT_EQ(s.num_dropped(), 1);
    EXPECT_EQ(s.num_padding(), 0);
  }
  EXPECT_EQ(seen.size(), 9u);
}

TEST(DistributedSamplerTest, OrderIsAPureFunctionOfSeedAndEpoch) {
  DistributedSampler a(1000, 1, 4, Seeded(9)), b(1000, 1, 4, Seeded(9));
  a.set_epoch(3);
  b.set_epoch(1);
  EXPECT_NE(a.indices(), b.indices());
  b.set_epoch(3);
  EXPECT_EQ(a.indices(), b.indices());
  DistributedSampler c(1000, 1, 4, Seeded(10));
  c.set_epoch(3);
  EXPECT_NE(a.indices(), c.indices());
}

TEST(DistributedSamplerTest, NoShuffleIsStrided) {
  SamplerOptions strided;
  strided.shuffle = false;
  DistributedSampler s(7, 1, 3, strided);
  EXPECT_EQ(s.indices(), (std::vector<int64_t>{1, 4, 0}));  // padded with sample 0, 1 after 6
}

TEST(DistributedSamplerTest, RejectsBadRankAndWorld) {
  EXPECT_THROW_WITH(DistributedSampler(10, 3, 3), InvalidArgument, "rank=3", "[0, 3)");
  EXPECT_THROW_WITH(DistributedSampler(10, 0, 0), InvalidArgument, "world_size", "0");
  EXPECT_THROW_WITH(DistributedSampler(-1, 0, 1), InvalidArgument, "dataset_size", "-1");
}

}  // namespace
}  // namespace lakerun::dist
