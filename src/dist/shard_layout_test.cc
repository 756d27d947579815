// The pieces of sharded data parallel that need no training: chunk layout, reduce-scatter and all-gather on Gloo,
// the optimizer-state parts.
#include "dist/shard_layout.h"

#include <lakerun/base/error.h>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "dist/optimizer_state.h"
#include "dist/rank_threads.h"
#include "dist/shard_collectives.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using testing::RunRanks;

std::vector<at::Tensor> Params(std::initializer_list<int64_t> sizes) {
  std::vector<at::Tensor> out;
  for (int64_t n : sizes) out.push_back(at::zeros({n}));
  return out;
}

TEST(ShardLayoutTest, ChunksSplitEachBucketEquallyAndPadTheLast) {
  // One bucket, reverse order: p2 [0, 7), p1 [7, 10), p0 [10, 15); chunks of 8, one padding element.
  const auto params = Params({5, 3, 7});
  const auto r0 = LayOutShards(params, 2, 0, 1 << 20, 1 << 20);
  ASSERT_EQ(r0.size(), 1u);
  EXPECT_EQ(r0[0].numel, 15);
  EXPECT_EQ(r0[0].chunk_numel, 8);
  EXPECT_EQ(r0[0].padded_numel(2), 16);
  ASSERT_EQ(r0[0].pieces.size(), 2u);
  EXPECT_EQ(r0[0].pieces[0].param, 2u);
  EXPECT_EQ(r0[0].pieces[0].numel, 7);
  EXPECT_EQ(r0[0].pieces[1].param, 1u);
  EXPECT_EQ(r0[0].pieces[1].param_offset, 0);
  EXPECT_EQ(r0[0].pieces[1].chunk_offset, 7);
  EXPECT_EQ(r0[0].pieces[1].numel, 1);
  const auto r1 = LayOutShards(params, 2, 1, 1 << 20, 1 << 20);
  ASSERT_EQ(r1[0].pieces.size(), 2u);
  EXPECT_EQ(r1[0].pieces[0].param, 1u);
  EXPECT_EQ(r1[0].pieces[0].param_offset, 1);
  EXPECT_EQ(r1[0].pieces[0].chunk_offset, 0);
  EXPECT_EQ(r1[0].pieces[0].numel, 2);
  EXPECT_EQ(r1[0].pieces[1].param, 0u);
  EXPECT_EQ(r1[0].pieces[1].chunk_offset, 2);
  EXPECT_EQ(r1[0].pieces[1].numel, 5);
}

TEST(ShardLayoutTest, EveryElementBelongsToExactlyOneRank) {
  const auto params = Params({100, 1, 37, 64, 5, 0, 9});
  for (int world : {1, 2, 3, 4, 7}) {
    std::vector<int64_t> seen(params.size(), 0);
    std::size_t buckets = 0;
    for (int rank = 0; rank < world; ++rank) {
      const auto layout = LayOutShards(params, world, rank, 64, 100);
      buckets = layout.size();
      for (const ShardedBucket& b : layout) {
        for (const ShardPiece& p : b.pieces) {
          EXPECT_GT(p.numel, 0);
          EXPECT_LE(p.chunk_offset + p.numel, b.chunk_numel);
          seen[p.param] += p.numel;
        }
      }
    }
    EXPECT_GT(buckets, 2u);
    for (std::size_t i = 0; i < params.size(); ++i) EXPECT_EQ(seen[i], params[i].numel()) << "world " << world;
  }
}

TEST(ShardLayoutTest, BadRankIsAnError) {
  EXPECT_THROW_WITH(LayOutShards(Params({3}), 2, 2, 64, 64), InvalidArgument, "rank 2", "world of 2");
}

class ShardCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(ShardCollectivesTest, ReduceScatterSumsInRankOrderAndAllGatherConcatenates) {
  const int world = GetParam();
  RunRanks(world, [world](Context& ctx) {
    const int64_t n = 5;
    at::Tensor input = at::arange(world * n, at::kDouble) * (ctx.rank() + 1);
    at::Tensor mine = at::empty({n}, at::kDouble);
    PendingShardOp op = StartReduceScatter(ctx, input, mine);
    op.Wait();
    const double factor = world * (world + 1) / 2.0;  // sum of (rank + 1)
    EXPECT_TRUE(at::equal(mine, at::arange(ctx.rank() * n, (ctx.rank() + 1) * n, at::kDouble) * factor));

    at::Tensor whole = at::empty({world * n}, at::kFloat);
    StartAllGather(ctx, at::full({n}, static_cast<float>(ctx.rank())), whole).Wait();
    for (int r = 0; r < world; ++r) EXPECT_TRUE(at::equal(whole.narrow(0, r * n, n), at::full({n}, float(r))));
    EXPECT_THROW_WITH(StartAllGather(ctx, at::zeros({3}), at::zeros({world * 3 + 1})), InvalidArgument,
                      "the whole", "times the chunk");
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShardCollectivesTest, ::testing::Values(1, 2, 3));

TEST(OptimizerStateTest, PartsRoundTripAndFieldsFollowTheOptions) {
  at::Tensor p = at::ones({4}).requires_grad_(true);
  torch::optim::Adam adam({p}, torch::optim::AdamOptions(0.1).amsgrad(true));
  p.mutable_grad() = at::ones({4});
  adam.step();
  ASSERT_EQ(KindOf(adam), OptimizerKind::kAdam);
  const auto& state = *adam.state().at(StateKey(p));  // the key torch::optim uses
  StateParts parts = Decompose(OptimizerKind::kAdam, state);
  EXPECT_EQ(parts.step, 1);
  ASSERT_EQ(parts.tensors.size(), 3u);
  EXPECT_EQ(parts.tensors[2].first, "max_exp_avg_sq");
  auto back = Compose(OptimizerKind::kAdam, parts);
  EXPECT_TRUE(at::equal(Decompose(OptimizerKind::kAdam, *back).tensors[0].second, parts.tensors[0].second));
  EXPECT_EQ(StateTensorNames(OptimizerKind::kAdam, torch::optim::AdamOptions()),
            (std::vector<std::string>{"exp_avg", "exp_avg_sq"}));
  EXPECT_EQ(StateTensorNames(OptimizerKind::kSgd, torch::optim::SGDOptions(0.1)), std::vector<std::string>{});
  EXPECT_FALSE(KeepsStepCount(OptimizerKind::kSgd));
  EXPECT_THROW_WITH(Compose(OptimizerKind::kSgd, {std::nullopt, {{"exp_avg", at::ones({1})}}}), InvalidArgument,
                    "no field 'exp_avg'");
}

}  // namespace
}  // namespace lakerun::dist
