#include "lakerun/train/logged_metrics.h"

#include <vector>

#include "dist/rank_threads.h"
#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::train {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(LoggedMetricsTest, HookDefaultsDecideStepOrEpoch) {
  LoggedMetrics m;
  m.Log(LogHook::kTrainingStep, "loss", 2.0f, {}, 4);
  m.Log(LogHook::kValidationStep, "val_loss", 1.0f, {}, 4);
  EXPECT_THAT(m.EndStep(), UnorderedElementsAre(Pair("loss", 2.0f)));
  EXPECT_EQ(m.callback_metrics().count("val_loss"), 0u);  // epoch-only: visible at epoch end
  EXPECT_THAT(m.EndEpoch(), UnorderedElementsAre(Pair("val_loss", 1.0f)));
  EXPECT_EQ(m.callback_metrics().at("val_loss"), 1.0f);
  EXPECT_TRUE(m.EndStep().empty());
}

TEST(LoggedMetricsTest, EpochMeanIsBatchSizeWeightedInFloat32) {
  LoggedMetrics m;
  m.Log(LogHook::kValidationStep, "val_loss", 1.0f, {}, 30);
  m.Log(LogHook::kValidationStep, "val_loss", 0.1f, {}, 10);  // a short last batch weighs less
  const float expected = (1.0f * 30.0f + 0.1f * 10.0f) / 40.0f;
  EXPECT_THAT(m.EndEpoch(), UnorderedElementsAre(Pair("val_loss", expected)));
  EXPECT_EQ(m.callback_metrics().at("val_loss"), expected);
}

TEST(LoggedMetricsTest, BothStepAndEpochGiveSuffixedKeysAndTheBareNameForCallbacks) {
  LoggedMetrics m;
  LogOptions both;
  both.on_step = true;
  both.on_epoch = true;
  both.prog_bar = true;
  m.Log(LogHook::kTrainingStep, "loss", 3.0f, both, 1);
  EXPECT_THAT(m.EndStep(), UnorderedElementsAre(Pair("loss_step", 3.0f)));
  m.Log(LogHook::kTrainingStep, "loss", 1.0f, both, 1);
  m.EndStep();
  EXPECT_THAT(m.EndEpoch(), UnorderedElementsAre(Pair("loss_epoch", 2.0f)));
  EXPECT_EQ(m.callback_metrics().at("loss"), 2.0f);
  EXPECT_EQ(m.callback_metrics().at("loss_step"), 1.0f);
  EXPECT_EQ(m.callback_metrics().at("loss_epoch"), 2.0f);
  EXPECT_EQ(m.progress_bar_metrics().at("loss_epoch"), 2.0f);
}

TEST(LoggedMetricsTest, SumMaxMinAndExplicitBatchSize) {
  LoggedMetrics m;
  LogOptions sum, max, min, bs;
  sum.reduce_fx = ReduceFx::kSum;
  max.reduce_fx = ReduceFx::kMax;
  min.reduce_fx = ReduceFx::kMin;
  bs.batch_size = 3;
  for (float v : {1.0f, 4.0f, 2.0f}) {
    m.Log(LogHook::kValidationStep, "s", v, sum, 1);
    m.Log(LogHook::kValidationStep, "hi", v, max, 1);
    m.Log(LogHook::kValidationStep, "lo", v, min, 1);
  }
  m.Log(LogHook::kValidationStep, "w", 1.0f, bs, 1);  // batch_size 3 overrides the inferred 1
  m.Log(LogHook::kValidationStep, "w", 5.0f, {}, 1);
  EXPECT_THAT(m.EndEpoch(), UnorderedElementsAre(Pair("s", 7.0f), Pair("hi", 4.0f), Pair("lo", 1.0f),
                                                 Pair("w", 2.0f)));
}

TEST(LoggedMetricsTest, LoggerFalseStillReachesCallbacks) {
  LoggedMetrics m;
  LogOptions hidden;
  hidden.logger = false;
  m.Log(LogHook::kValidationStep, "val_acc", 0.5f, hidden, 2);
  EXPECT_TRUE(m.EndEpoch().empty());
  EXPECT_EQ(m.callback_metrics().at("val_acc"), 0.5f);
  m.Reset();
  EXPECT_TRUE(m.callback_metrics().empty());
}

TEST(LoggedMetricsTest, BadCallsNameTheMetric) {
  LoggedMetrics m;
  LogOptions none;
  none.on_step = false;
  none.on_epoch = false;
  EXPECT_THROW_WITH(m.Log(LogHook::kTrainingStep, "loss", 1.0f, none, 1), InvalidArgument, "'loss'", "on_step");
  LogOptions step;
  step.on_step = true;
  EXPECT_THROW_WITH(m.Log(LogHook::kEpochEnd, "acc", 1.0f, step, 1), InvalidArgument, "'acc'", "epoch-end");
  EXPECT_THROW_WITH(m.Log(LogHook::kValidationStep, "v", 1.0f, {}, 0), InvalidArgument, "'v'", "batch_size", "0");
  m.Log(LogHook::kValidationStep, "v", 1.0f, {}, 1);
  LogOptions max;
  max.reduce_fx = ReduceFx::kMax;
  EXPECT_THROW_WITH(m.Log(LogHook::kValidationStep, "v", 1.0f, max, 1), InvalidArgument, "'v'", "'max'", "'mean'");
}

TEST(LoggedMetricsTest, SyncDistGivesTheGlobalWeightedMeanOnEveryRank) {
  std::vector<float> synced(2), local(2), step(2);
  dist::testing::RunRanks(2, [&](dist::Context& ctx) {
    auto sync = NewDistMetricSync(ctx);
    LoggedMetrics m(sync.get());
    LogOptions s;
    s.sync_dist = true;
    const int r = ctx.rank();
    // rank 0: two batches of 10 at 1.0; rank 1: one batch of 20 at 4.0 -> (20*1 + 20*4) / 40 = 2.5
    if (r == 0) {
      m.Log(LogHook::kValidationStep, "val_loss", 1.0f, s, 10);
      m.Log(LogHook::kValidationStep, "val_loss", 1.0f, s, 10);
      m.Log(LogHook::kValidationStep, "own", 1.0f, {}, 10);
    } else {
      m.Log(LogHook::kValidationStep, "val_loss", 4.0f, s, 20);
      m.Log(LogHook::kValidationStep, "own", 4.0f, {}, 20);
    }
    LogOptions st;
    st.sync_dist = true;
    m.Log(LogHook::kTrainingStep, "loss", r == 0 ? 1.0f : 3.0f, st, 1);  // step values: mean across ranks at once
    step[r] = m.EndStep().at("loss");
    m.EndEpoch();
    synced[r] = m.callback_metrics().at("val_loss");
    local[r] = m.callback_metrics().at("own");
  });
  EXPECT_EQ(synced[0], 2.5f);
  EXPECT_EQ(synced[1], 2.5f);
  EXPECT_EQ(local[0], 1.0f);  // without sync_dist each rank keeps its own value
  EXPECT_EQ(local[1], 4.0f);
  EXPECT_EQ(step[0], 2.0f);
  EXPECT_EQ(step[1], 2.0f);
}

}  // namespace
}  // namespace lakerun::train
