#include <lakerun/dist/collectives.h>

#include <lakerun/base/error.h>

#include <ATen/ATen.h>

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <atomic>
#include <cstdlib>
#include <future>

#include "dist/rank_threads.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using testing::RunRanks;

class CollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(CollectivesTest, AllReduceSumMeanMaxMin) {
  int world = GetParam();
  RunRanks(world, [world](Context& ctx) {
    at::Tensor t = at::arange(6, at::kFloat) + ctx.rank();
    AllReduce(ctx, t, ReduceOp::kSum);
    float base = world * (world - 1) / 2.0f;
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(t[i].item<float>(), world * i + base);

    at::Tensor m = at::full({3}, static_cast<double>(ctx.rank() + 1), at::kDouble);
    AllReduce(ctx, m, ReduceOp::kMean);
    EXPECT_DOUBLE_EQ(m[2].item<double>(), (world + 1) / 2.0);

    at::Tensor x = at::tensor({static_cast<int64_t>(ctx.rank()), static_cast<int64_t>(-ctx.rank())});
    AllReduce(ctx, x, ReduceOp::kMax);
    EXPECT_EQ(x[0].item<int64_t>(), world - 1);
    EXPECT_EQ(x[1].item<int64_t>(), 0);
    at::Tensor y = at::tensor({static_cast<int64_t>(ctx.rank())});
    AllReduce(ctx, y, ReduceOp::kMin);
    EXPECT_EQ(y.item<int64_t>(), 0);
  });
}

TEST_P(CollectivesTest, ScalarsAndNonContiguousTensors) {
  int world = GetParam();
  RunRanks(world, [world](Context& ctx) {
    EXPECT_DOUBLE_EQ(AllReduceDouble(ctx, 0.5 * ctx.rank(), ReduceOp::kSum), 0.25 * world * (world - 1));
    EXPECT_DOUBLE_EQ(AllReduceDouble(ctx, ctx.rank(), ReduceOp::kMax), world - 1);
    EXPECT_EQ(AllReduceInt64(ctx, int64_t{1} << 40, ReduceOp::kSum), world * (int64_t{1} << 40));
    // A transposed view is reduced through a dense copy and written back in place.
    at::Tensor base = at::ones({3, 4}, at::kFloat) * (ctx.rank() + 1);
    at::Tensor view = base.t();
    AllReduce(ctx, view, ReduceOp::kSum);
    EXPECT_FLOAT_EQ(base[2][3].item<float>(), world * (world + 1) / 2.0f);
  });
}

TEST_P(CollectivesTest, BroadcastFromAnyRoot) {
  int world = GetParam();
  RunRanks(world, [world](Context& ctx) {
    int root = world - 1;
    at::Tensor t = at::full({5}, static_cast<float>(ctx.rank() * 10), at::kFloat);
    Broadcast(ctx, t, root);
    EXPECT_FLOAT_EQ(t[4].item<float>(), root * 10.0f);
    EXPECT_EQ(BroadcastBytes(ctx, ctx.rank() == 1 ? "from one" : "ignored", 1), "from one");
    EXPECT_THROW_WITH(Broadcast(ctx, t, world), InvalidArgument, "root=" + std::to_string(world));
  });
}

TEST_P(CollectivesTest, AllGatherBytesOfDifferentSizes) {
  int world = GetParam();
  RunRanks(world, [world](Context& ctx) {
    std::string mine(static_cast<std::size_t>(ctx.rank() * 3), static_cast<char>('a' + ctx.rank()));
    mine += '\0';  // binary-safe
    std::vector<std::string> all = AllGatherBytes(ctx, mine);
    ASSERT_EQ(static_cast<int>(all.size()), world);
    for (int r = 0; r < world; ++r) {
      std::string want(static_cast<std::size_t>(r * 3), static_cast<char>('a' + r));
      want += '\0';
      EXPECT_EQ(all[r], want);
    }
  });
}

TEST_P(CollectivesTest, AllGatherOverTheCapFailsOnEveryRankNamingTheSender) {
  int world = GetParam();
  std::atomic<int> failures{0};
  RunRanks(world, [&](Context& ctx) {
    std::string mine = ctx.rank() == 1 ? std::string(200, 'x') : "ok";
    EXPECT_THROW_WITH(AllGatherBytes(ctx, mine, 100), InvalidArgument, "rank 1 sent 200 bytes", "limit of 100");
    ++failures;
    // The group is still usable afterwards.
    Barrier(ctx);
    EXPECT_EQ(AllReduceInt64(ctx, 1), world);
  });
  EXPECT_EQ(failures.load(), world);
}

INSTANTIATE_TEST_SUITE_P(Worlds, CollectivesTest, ::testing::Values(2, 3));

TEST(CollectivesSingleTest, WorldOfOneIsLocal) {
  RunRanks(1, [](Context& ctx) {
    EXPECT_EQ(ctx.backend(), Backend::kNone);
    at::Tensor t = at::ones({2});
    AllReduce(ctx, t, ReduceOp::kMean);
    EXPECT_FLOAT_EQ(t[0].item<float>(), 1.0f);
    Barrier(ctx);
    EXPECT_EQ(AllGatherBytes(ctx, "solo"), std::vector<std::string>{"solo"});
    EXPECT_THROW_WITH(AllGatherBytes(ctx, "toolong", 3), InvalidArgument, "7 bytes", "limit of 3");
  });
}

TEST(InitSingleProcessTest, WithoutALauncherInitIsOneRankAndIdempotent) {
  for (const char* var : {"LAKERUN_LAUNCHER", "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMI_SIZE",
                          "SLURM_PROCID"}) {
    unsetenv(var);
  }
  EXPECT_FALSE(IsInitialized());
  EXPECT_THROW_WITH(CurrentContext(), DistError, "Init() has not been called");
  Context& ctx = Init();
  EXPECT_EQ(&Init(), &ctx);
  EXPECT_EQ(&CurrentContext(), &ctx);
  EXPECT_EQ(ctx.rank(), 0);
  EXPECT_EQ(ctx.world_size(), 1);
  EXPECT_EQ(ctx.launcher(), Launcher::kNone);
  EXPECT_EQ(ctx.backend(), Backend::kNone);
#ifdef USE_C10D_NCCL
  // Backend 'auto' with a GPU: no group at world size 1, but this rank's tensors belong on its GPU.
  EXPECT_EQ(ctx.device().is_cuda(), c10::cuda::device_count() > 0);
#else
  EXPECT_TRUE(ctx.device().is_cpu());
#endif
  EXPECT_EQ(AllReduceDouble(ctx, 2.5, ReduceOp::kMean), 2.5);
  Shutdown();
  EXPECT_FALSE(IsInitialized());
}

TEST(CollectivesErrorTest, PeerThatNeverCallsTimesOut) {
  // Rank 1 stays in the group but skips the collective: rank 0 must fail within the timeout, not hang.
  std::promise<void> rank0_done;
  std::shared_future<void> done = rank0_done.get_future().share();
  EXPECT_THROW_WITH(RunRanks(
                        2,
                        [&](Context& ctx) {
                          if (ctx.rank() == 0) {
                            at::Tensor t = at::ones({4});
                            try {
                              AllReduce(ctx, t);
                            } catch (...) {
                              rank0_done.set_value();
                              throw;
                            }
                            rank0_done.set_value();
                          } else {
                            done.wait_for(std::chrono::seconds(20));
                          }
                        },
                        std::chrono::milliseconds(1500)),
                    CommTimeout, "rank 0 of 2", "all_reduce(sum)");
}

}  // namespace
}  // namespace lakerun::dist
