// Full optimizer state from ShardedDataParallel: gathered into the user's optimizer on one rank in DDP's layout, and
// checkpoints that DDP and every ZeRO level resume from each other.
#include <lakerun/dist/sharded.h>

#include <lakerun/base/error.h>

#include "dist/optimizer_state.h"
#include "dist/rank_threads.h"
#include "dist/sharded_test_model.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using testing::ExpectSameState;
using testing::Opt;
using testing::OptimizerStateIn;
using testing::Parallel;
using testing::Phase;
using testing::RunRanks;
using testing::ShardNet;
using testing::SmallBuckets;
using testing::TrainCase;
using testing::TrainOnRanks;
using testing::TrainResult;

class ShardedCheckpointTest : public ::testing::TestWithParam<Opt> {};

TEST_P(ShardedCheckpointTest, GatheredStateIsDdpsStateInDdpsLayout) {
  const TrainCase c = SmallBuckets(3, GetParam());
  std::string ddp_ckpt, zero1_ckpt, zero2_ckpt, zero3_ckpt;
  Phase save;
  save.save = &ddp_ckpt;
  TrainOnRanks(c, Parallel::kDdp, save);
  save.save = &zero1_ckpt;
  TrainOnRanks(c, Parallel::kZero1, save);
  save.save = &zero2_ckpt;
  TrainOnRanks(c, Parallel::kZero2, save);
  save.save = &zero3_ckpt;
  TrainOnRanks(c, Parallel::kZero3, save);
  const auto want = OptimizerStateIn(ddp_ckpt, c.opt);
  ExpectSameState(OptimizerStateIn(zero1_ckpt, c.opt), want, "zero1");
  ExpectSameState(OptimizerStateIn(zero2_ckpt, c.opt), want, "zero2");
  ExpectSameState(OptimizerStateIn(zero3_ckpt, c.opt), want, "zero3");
  // Same size: the same tensors under the same keys (only the addresses naming parameters differ in content).
  EXPECT_EQ(zero2_ckpt.size(), ddp_ckpt.size());
  // Level 3's parameters are views of one buffer per unit, which the archive stores once per unit: fewer records,
  // the same tensors.
  ShardNet from_ddp, from_zero3;
  auto opt = testing::MakeOpt(c.opt, from_ddp);
  testing::LoadCheckpoint(ddp_ckpt, from_ddp, *opt);
  testing::LoadCheckpoint(zero3_ckpt, from_zero3, *opt);
  for (const auto& item : from_ddp.named_parameters()) {
    EXPECT_TRUE(at::equal(item.value(), from_zero3.named_parameters()[item.key()])) << item.key();
  }
}

TEST_P(ShardedCheckpointTest, DdpAndEveryLevelResumeEachOthersCheckpoints) {
  const TrainCase c = SmallBuckets(2, GetParam());
  const std::vector<TrainResult> straight = TrainOnRanks(c, Parallel::kDdp);
  for (Parallel first : {Parallel::kDdp, Parallel::kZero1, Parallel::kZero2, Parallel::kZero3}) {
    std::string ckpt;
    Phase head;
    head.end_step = 3;
    head.save = &ckpt;
    TrainOnRanks(c, first, head);
    for (Parallel second : {Parallel::kDdp, Parallel::kZero1, Parallel::kZero2, Parallel::kZero3}) {
      if (first == Parallel::kDdp && second == Parallel::kDdp) continue;
      Phase tail;
      tail.first_step = 3;
      tail.load = &ckpt;
      const std::vector<TrainResult> resumed = TrainOnRanks(c, second, tail);
      for (int r = 0; r < c.world; ++r) {
        for (std::size_t i = 0; i < straight[r].params.size(); ++i) {
          EXPECT_TRUE(at::equal(resumed[r].params[i], straight[r].params[i]))
              << Name(first) << " -> " << Name(second) << " rank " << r << " parameter " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, ShardedCheckpointTest,
                         ::testing::Values(Opt::kSgd, Opt::kAdam, Opt::kRmsprop, Opt::kAdagrad),
                         [](const auto& info) { return std::string(testing::Name(info.param)); });

TEST(ShardedCheckpointTest, OnlyTheRootHoldsTheGatheredStateAndOnlyWhileItLives) {
  RunRanks(2, [](Context& ctx) {
    auto net = std::make_shared<ShardNet>();
    auto opt = testing::MakeOpt(Opt::kAdam, *net);
    ShardedDataParallel sdp(ctx, net, {opt});
    {
      auto before = sdp.GatherOptimizerState(1);
      EXPECT_TRUE(opt->state().empty()) << "nothing to gather before the first step";
    }
    net->forward(at::randn({4, 6})).sum().backward();
    sdp.Step();
    EXPECT_TRUE(opt->state().empty()) << "the user's optimizer holds no state of its own";
    {
      auto gathered = sdp.GatherOptimizerState(1);
      EXPECT_EQ(opt->state().size(), ctx.rank() == 1 ? net->parameters().size() : 0u);
    }
    EXPECT_TRUE(opt->state().empty());
    EXPECT_THROW_WITH(sdp.GatherOptimizerState(2), InvalidArgument, "root=2");
  });
}

}  // namespace
}  // namespace lakerun::dist
