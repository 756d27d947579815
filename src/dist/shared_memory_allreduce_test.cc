#include "dist/shared_memory_allreduce.h"

#include <lakerun/base/error.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <dirent.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "dist/rank_threads.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using testing::RunRanks;

// Rank r's contribution to buffer i in round k: values whose float sums depend on the order of addition.
at::Tensor Contribution(const SharedBufferSpec& spec, int rank, int round, std::size_t i) {
  // Its own generator: ranks are threads, and the global one would interleave their draws.
  at::Generator gen = at::detail::createCPUGenerator(1000 * round + 10 * rank + i);
  return at::randn({spec.numel}, gen, at::TensorOptions().dtype(spec.dtype)).mul(std::pow(10.0, rank % 3));
}

// ((c0 + c1) + c2) + ...: the order every chunk is summed in.
at::Tensor RankOrderSum(const SharedBufferSpec& spec, int world, int round, std::size_t i) {
  at::Tensor sum = Contribution(spec, 0, round, i);
  for (int r = 1; r < world; ++r) sum = sum + Contribution(spec, r, round, i);
  return sum;
}

class SharedMemoryAllReduceTest : public ::testing::TestWithParam<int> {};

TEST_P(SharedMemoryAllReduceTest, EveryRankGetsTheRankOrderSumBitwise) {
  const int world = GetParam();
  // Smaller than one chunk per rank, not a multiple of a cache line, large, and double.
  const std::vector<SharedBufferSpec> specs{
      {at::kFloat, 1}, {at::kFloat, 37}, {at::kFloat, 100003}, {at::kDouble, 1000}};
  constexpr int kRounds = 3;
  // got[rank][round][buffer]
  std::vector<std::vector<std::vector<at::Tensor>>> got(world);
  RunRanks(world, [&](Context& ctx) {
    std::string why_not;
    auto ar = SharedMemoryAllReduce::Create(ctx, specs, &why_not);
    ASSERT_NE(ar, nullptr) << why_not;
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t i = 0; i < specs.size(); ++i) {
        ar->input(i).copy_(Contribution(specs[i], ctx.rank(), round, i));
        ar->Start(i);
      }
      got[ctx.rank()].emplace_back(specs.size());
      // All in flight at once, finished in an order of their own (the same on every rank).
      for (std::size_t n = 0; n < specs.size(); ++n) {
        std::size_t i = (n + 2) % specs.size();
        ar->Finish(i);
        got[ctx.rank()][round][i] = ar->sum(i).clone();
      }
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      at::Tensor want = RankOrderSum(specs[i], world, round, i);
      for (int r = 0; r < world; ++r) {
        EXPECT_TRUE(at::equal(got[r][round][i], want))
            << "rank " << r << " round " << round << " buffer " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, SharedMemoryAllReduceTest, ::testing::Values(2, 3, 4));

// Names in /dev/shm of segments this process made.
int SegmentsOfThisProcess() {
  const std::string prefix = "lakerun-allreduce-" + std::to_string(getpid()) + "-";
  int found = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir)) found += std::string(entry->d_name).rfind(prefix, 0) == 0;
    closedir(dir);
  }
  return found;
}

TEST(SharedMemoryAllReduceSetUpTest, SegmentLeavesNoNameBehind) {
  RunRanks(2, [](Context& ctx) {
    auto ar = SharedMemoryAllReduce::Create(ctx, {{at::kFloat, 4096}}, nullptr);
    ASSERT_NE(ar, nullptr);
    EXPECT_GE(ar->segment_bytes(), 3u * 4096 * sizeof(float));
    if (ctx.rank() == 0) {
      EXPECT_EQ(SegmentsOfThisProcess(), 0);
    }
  });
}

TEST(SharedMemoryAllReduceSetUpTest, NoSegmentExistsWhileARankIsLate) {
  // A rank still loading its data must not find rank 0 holding a segment (which a crash would leak) meanwhile.
  RunRanks(2, [](Context& ctx) {
    if (ctx.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      EXPECT_EQ(SegmentsOfThisProcess(), 0) << "rank 0 created its segment before every rank arrived";
    }
    EXPECT_NE(SharedMemoryAllReduce::Create(ctx, {{at::kFloat, 1 << 20}}, nullptr), nullptr);
  });
}

TEST(SharedMemoryAllReduceSetUpTest, RanksOnSeveralHostsFallBackTogether) {
  RunRanks(
      4,
      [](Context& ctx) {
        std::string why_not;
        EXPECT_EQ(SharedMemoryAllReduce::Create(ctx, {{at::kFloat, 16}}, &why_not), nullptr);
        EXPECT_THAT(why_not, ::testing::HasSubstr("several hosts (2 of 4 on this one)"));
      },
      std::chrono::seconds(20), /*ranks_per_host=*/2);
}

TEST(SharedMemoryAllReduceSetUpTest, DifferentBuffersAcrossRanksIsAnErrorOnEveryRank) {
  std::vector<std::string> errors(2);
  RunRanks(2, [&](Context& ctx) {
    try {
      SharedMemoryAllReduce::Create(ctx, {{at::kFloat, ctx.rank() == 0 ? 16 : 17}}, nullptr);
    } catch (const DistError& e) {
      errors[ctx.rank()] = e.what();
    }
  });
  for (const std::string& e : errors) {
    EXPECT_THAT(e, ::testing::HasSubstr("rank 1's buffers (Float[17]) differ from rank 0's (Float[16])"));
  }
}

TEST(SharedMemoryAllReduceTimeoutTest, RankThatNeverArrivesIsNamed) {
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  std::vector<std::string> errors(3);
  RunRanks(
      3,
      [&](Context& ctx) {
        auto ar = SharedMemoryAllReduce::Create(ctx, {{at::kFloat, 64}}, nullptr);
        ASSERT_NE(ar, nullptr);
        if (ctx.rank() == 2) {
          done.wait_for(std::chrono::seconds(20));  // alive, but never contributes
          return;
        }
        ar->Start(0);
        try {
          ar->Finish(0);
        } catch (const CommTimeout& e) {
          errors[ctx.rank()] = e.what();
        }
        if (ctx.rank() == 0) finished.set_value();
      },
      std::chrono::milliseconds(1000));
  EXPECT_THAT(errors[0], ::testing::HasSubstr("rank 0 of 3: DDP gradient all_reduce through shared memory"));
  EXPECT_THAT(errors[0], ::testing::HasSubstr("timed out after 1000 ms waiting for rank(s) 2"));
  EXPECT_THAT(errors[1], ::testing::HasSubstr("waiting for rank(s) 2"));
}

}  // namespace
}  // namespace lakerun::dist
