#include "lakerun/train/early_stopping.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "dist/rank_threads.h"
#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::train {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Feeds one value per check through the validation-end hook (the check_on_train_epoch_end=false path).
struct Harness {
  explicit Harness(EarlyStoppingOptions o) : stop([&] {
    o.check_on_train_epoch_end = false;
    return o;
  }()) {
    stop.Setup(state);
  }
  bool Check(float value) {
    state.callback_metrics[stop_monitor()] = value;
    stop.OnValidationEnd(state);
    ++state.current_epoch;
    return state.should_stop;
  }
  std::string stop_monitor() const { return "val_loss"; }
  EarlyStopping stop;
  TrainerState state;
};

EarlyStoppingOptions Reference() {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.min_delta = 0.01;
  o.patience = 10;
  o.stopping_threshold = 0.55;
  return o;
}

TEST(EarlyStoppingTest, WorkedExampleFromTheReference) {
  Harness h(Reference());
  EXPECT_FALSE(h.Check(0.80f));  // first finite value always improves on +inf
  EXPECT_EQ(h.stop.best_score(), 0.80f);
  EXPECT_EQ(h.stop.wait_count(), 0);

  EXPECT_FALSE(h.Check(0.795f));  // 0.805 >= 0.80: no improvement
  EXPECT_EQ(h.stop.best_score(), 0.80f);
  EXPECT_EQ(h.stop.wait_count(), 1);

  EXPECT_FALSE(h.Check(0.789f));  // 0.799 < 0.80: improvement
  EXPECT_EQ(h.stop.best_score(), 0.789f);
  EXPECT_EQ(h.stop.wait_count(), 0);

  h.state.current_epoch = 7;
  EXPECT_TRUE(h.Check(0.5499f));  // below the stopping threshold: stop now
  EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kStoppingThreshold);
  EXPECT_EQ(h.stop.best_score(), 0.789f);  // not updated
  EXPECT_EQ(h.stop.wait_count(), 0);
  EXPECT_EQ(h.stop.stopped_epoch(), 7);
  EXPECT_THAT(h.stop.stopping_reason_message(), ::testing::HasSubstr("Stopping threshold reached: val_loss"));
}

TEST(EarlyStoppingTest, MinDeltaIsStoredNegatedInMinModeAndKeptInMaxMode) {
  EXPECT_EQ(EarlyStopping(Reference()).signed_min_delta(), -0.01f);
  EarlyStoppingOptions o = Reference();
  o.mode = MonitorMode::kMax;
  EXPECT_EQ(EarlyStopping(o).signed_min_delta(), 0.01f);
}

TEST(EarlyStoppingTest, ImprovementOfExactlyMinDeltaDoesNotCount) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.min_delta = 0.25;  // exactly representable: the test is about the strict inequality, not rounding
  o.patience = 5;
  Harness h(o);
  h.Check(1.0f);
  EXPECT_FALSE(h.Check(0.75f));  // 0.75 + 0.25 == 1.0, not < 1.0
  EXPECT_EQ(h.stop.wait_count(), 1);
  EXPECT_EQ(h.stop.best_score(), 1.0f);
  EXPECT_FALSE(h.Check(0.5f));
  EXPECT_EQ(h.stop.wait_count(), 0);
  EXPECT_EQ(h.stop.best_score(), 0.5f);
}

TEST(EarlyStoppingTest, ComparesInFloat32LikeLightningTensors) {
  // 0.79f + 0.01f rounds in float32; the decision must be the one float32 arithmetic gives.
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.min_delta = 0.01;
  o.patience = 5;
  Harness h(o);
  h.Check(0.8f);
  const bool f32_improves = (0.79f - (-0.01f)) < 0.8f;
  h.Check(0.79f);
  EXPECT_EQ(h.stop.wait_count(), f32_improves ? 0 : 1);
}

TEST(EarlyStoppingTest, NegativeMinDeltaInMinModeIsNotNormalised) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.min_delta = -0.5;  // stored +0.5: current - 0.5 < best, so a worse value by < 0.5 "improves"
  o.patience = 2;
  Harness h(o);
  h.Check(1.0f);
  EXPECT_FALSE(h.Check(1.25f));
  EXPECT_EQ(h.stop.best_score(), 1.25f);
  EXPECT_EQ(h.stop.wait_count(), 0);
}

TEST(EarlyStoppingTest, PatienceCountsChecksAndStopsWhenExhausted) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.patience = 3;
  Harness h(o);
  EXPECT_FALSE(h.Check(1.0f));
  EXPECT_FALSE(h.Check(1.0f));  // equal is not better
  EXPECT_FALSE(h.Check(2.0f));
  EXPECT_EQ(h.stop.wait_count(), 2);
  EXPECT_TRUE(h.Check(1.5f));
  EXPECT_EQ(h.stop.wait_count(), 3);
  EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kPatienceExhausted);
  EXPECT_EQ(h.stop.stopped_epoch(), 3);
  EXPECT_THAT(h.stop.stopping_reason_message(), ::testing::HasSubstr("did not improve in the last 3 records"));
}

TEST(EarlyStoppingTest, PatienceZeroStopsOnTheFirstNonImprovement) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.patience = 0;
  Harness h(o);
  EXPECT_FALSE(h.Check(1.0f));
  EXPECT_TRUE(h.Check(1.0f));
}

TEST(EarlyStoppingTest, NonFiniteValuesStopWithCheckFinite) {
  for (float bad : {kNan, kInf, -kInf}) {
    Harness h(Reference());
    h.Check(0.9f);
    EXPECT_TRUE(h.Check(bad)) << bad;
    EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kNonFiniteMetric);
    EXPECT_EQ(h.stop.best_score(), 0.9f);
    EXPECT_THAT(h.stop.stopping_reason_message(), ::testing::HasSubstr("is not finite"));
  }
}

TEST(EarlyStoppingTest, NonFiniteWithoutCheckFiniteFollowsTheComparisons) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.patience = 2;
  o.check_finite = false;
  Harness h(o);
  h.Check(1.0f);
  EXPECT_FALSE(h.Check(kNan));  // NaN compares false: a non-improvement
  EXPECT_EQ(h.stop.wait_count(), 1);
  EXPECT_FALSE(h.Check(-kInf));  // -inf < 1: an improvement in min mode
  EXPECT_EQ(h.stop.best_score(), -kInf);
}

TEST(EarlyStoppingTest, NonFiniteIsCheckedBeforeThresholds) {
  EarlyStoppingOptions o = Reference();
  o.divergence_threshold = 5.0;
  Harness h(o);
  EXPECT_TRUE(h.Check(kInf));  // would also pass the divergence threshold
  EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kNonFiniteMetric);
}

TEST(EarlyStoppingTest, DivergenceThresholdIsStrict) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.patience = 100;
  o.divergence_threshold = 2.0;
  Harness h(o);
  EXPECT_FALSE(h.Check(1.0f));
  EXPECT_FALSE(h.Check(2.0f));  // equal: not diverged
  EXPECT_EQ(h.stop.wait_count(), 1);
  EXPECT_TRUE(h.Check(2.5f));
  EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kDivergenceThreshold);
  EXPECT_EQ(h.stop.wait_count(), 1);  // not counted
}

TEST(EarlyStoppingTest, StoppingThresholdIsStrict) {
  Harness h(Reference());
  EXPECT_FALSE(h.Check(0.55f));  // equal to the threshold: an ordinary improvement
  EXPECT_EQ(h.stop.best_score(), 0.55f);
  EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kNotStopped);
}

TEST(EarlyStoppingTest, MaxModeMirrorsEveryComparison) {
  EarlyStoppingOptions o;
  o.monitor = "val_loss";  // the harness logs under this key
  o.mode = MonitorMode::kMax;
  o.min_delta = 0.25;
  o.patience = 2;
  o.stopping_threshold = 0.99;
  o.divergence_threshold = 0.1;
  Harness h(o);
  EXPECT_FALSE(h.Check(0.5f));
  EXPECT_EQ(h.stop.best_score(), 0.5f);
  EXPECT_FALSE(h.Check(0.75f));  // 0.75 - 0.25 == 0.5: not strictly better
  EXPECT_EQ(h.stop.wait_count(), 1);
  EXPECT_FALSE(h.Check(0.875f));
  EXPECT_EQ(h.stop.best_score(), 0.875f);
  EXPECT_TRUE(h.Check(0.05f));  // below the divergence threshold in max mode
  EXPECT_EQ(h.stop.stopping_reason(), StoppingReason::kDivergenceThreshold);

  Harness top(o);
  EXPECT_TRUE(top.Check(0.995f));
  EXPECT_EQ(top.stop.stopping_reason(), StoppingReason::kStoppingThreshold);
}

TEST(EarlyStoppingTest, StrictMissingMonitorNamesTheAvailableKeys) {
  EarlyStopping stop(Reference());
  TrainerState state;
  stop.Setup(state);
  state.current_epoch = 4;
  state.callback_metrics = {{"train_loss", 1.0f}, {"val_acc", 0.5f}};
  EXPECT_THROW_WITH(stop.OnTrainEpochEnd(state), ConfigError, "'val_loss'", "'train_loss', 'val_acc'", "epoch 4");
}

TEST(EarlyStoppingTest, NonStrictMissingMonitorSkipsTheCheck) {
  EarlyStoppingOptions o = Reference();
  o.strict = false;
  Harness h(o);
  h.state.callback_metrics["other"] = 1.0f;
  h.stop.OnValidationEnd(h.state);
  EXPECT_FALSE(h.state.should_stop);
  EXPECT_EQ(h.stop.wait_count(), 0);
  EXPECT_EQ(h.stop.best_score(), kInf);
}

TEST(EarlyStoppingTest, BadOptionsAreConfigErrors) {
  EXPECT_THROW_WITH(ParseMonitorMode("mode", "minimum"), ConfigError, "mode: 'minimum' is not one of min, max");
  EXPECT_THROW_WITH(ParseMonitorMode("mode", "maxx"), ConfigError, "did you mean 'max'?");
  EarlyStoppingOptions o = Reference();
  o.monitor = "";
  EXPECT_THROW_WITH(EarlyStopping{o}, ConfigError, "monitor");
  o = Reference();
  o.patience = -1;
  EXPECT_THROW_WITH(EarlyStopping{o}, ConfigError, "patience", "-1");
}

TEST(EarlyStoppingTest, CheckOnTrainEpochEndResolvesFromTheValidationSchedule) {
  struct Case {
    double interval;
    int64_t every;
    bool expect;
  };
  for (const Case& c : {Case{1.0, 1, true}, Case{0.5, 1, false}, Case{1.0, 2, false}}) {
    EarlyStopping stop(Reference());
    TrainerState state;
    state.val_check_interval = c.interval;
    state.check_val_every_n_epoch = c.every;
    stop.Setup(state);
    EXPECT_EQ(stop.check_on_train_epoch_end(), c.expect);
    // Only the resolved hook checks.
    state.callback_metrics["val_loss"] = 0.1f;  // below the threshold
    stop.OnTrainEpochEnd(state);
    EXPECT_EQ(state.should_stop, c.expect);
    stop.OnValidationEnd(state);
    EXPECT_TRUE(state.should_stop);
  }
}

TEST(EarlyStoppingTest, SkippedOutsideFittingDuringSanityCheckAndUnderFastDevRun) {
  EarlyStopping stop(Reference());
  TrainerState state;
  stop.Setup(state);
  state.callback_metrics["val_loss"] = kNan;
  state.sanity_checking = true;
  stop.OnTrainEpochEnd(state);
  state.sanity_checking = false;
  state.fn = TrainerFn::kValidating;
  stop.OnTrainEpochEnd(state);
  state.fn = TrainerFn::kFitting;
  state.fast_dev_run = 1;
  stop.OnTrainEpochEnd(state);
  EXPECT_FALSE(state.should_stop);
  state.fast_dev_run = 0;
  stop.OnTrainEpochEnd(state);
  EXPECT_TRUE(state.should_stop);
}

TEST(EarlyStoppingTest, StateRoundTripsAndPatienceComesFromTheCheckpoint) {
  Harness h(Reference());
  h.Check(0.8f);
  h.Check(0.9f);
  h.Check(0.9f);
  const StateDict saved = StateDict::Decode(h.stop.state_dict().Encode());
  EXPECT_EQ(saved, h.stop.state_dict());

  EarlyStoppingOptions o = Reference();
  o.patience = 3;  // the checkpoint's 10 wins
  EarlyStopping restored(o);
  restored.load_state_dict(saved);
  EXPECT_EQ(restored.patience(), 10);
  EXPECT_EQ(restored.wait_count(), 2);
  EXPECT_EQ(restored.best_score(), 0.8f);
  EXPECT_EQ(restored.state_key(), "EarlyStopping{'monitor': 'val_loss', 'mode': 'min'}");
  EXPECT_EQ(saved.GetInt("stopping_reason"), 0);

  StateDict broken = saved;
  broken.Set("wait_count", std::string("two"));
  EXPECT_THROW_WITH(restored.load_state_dict(broken), CorruptDataError, "wait_count", "string");
}

// Ranks as threads that meet at every decision: the OR / AND of their votes (bounded waits).
class ThreadRanks {
 public:
  explicit ThreadRanks(int world) : world_(world) {}
  class Member : public RankSync {
   public:
    Member(ThreadRanks& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int world_size() const override { return g_.world_; }
    bool Any(bool d) override { return g_.Meet(d) > 0; }
    bool All(bool d) override { return g_.Meet(d) == g_.world_; }
    void Barrier() override { g_.Meet(false); }

   private:
    ThreadRanks& g_;
    int rank_;
  };

 private:
  int Meet(bool vote) {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t round = round_;
    votes_ += vote ? 1 : 0;
    if (++arrived_ == world_) {
      result_ = votes_;
      votes_ = 0;
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
      return result_;
    }
    if (!cv_.wait_for(lock, std::chrono::seconds(20), [&] { return round_ != round; })) {
      throw CommTimeout("ThreadRanks: a rank never arrived");
    }
    return result_;
  }
  const int world_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int votes_ = 0;
  int result_ = 0;
  int64_t round_ = 0;
};

TEST(EarlyStoppingTest, OneRankWantingToStopStopsEveryRankOnTheSameCheck) {
  // Rank 1 sees a worse (unsynced) metric and exhausts its patience on check 3; rank 0 keeps improving.
  const std::vector<std::vector<float>> values = {{1.0f, 0.9f, 0.8f, 0.7f}, {1.0f, 1.0f, 1.0f, 1.0f}};
  ThreadRanks group(2);
  std::vector<int> stopped_at(2, -1);
  std::vector<int64_t> wait(2, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ThreadRanks::Member sync(group, r);
      EarlyStoppingOptions o;
      o.monitor = "val_loss";
      o.patience = 2;
      Harness h(o);
      h.state.sync = &sync;
      for (size_t i = 0; i < values[r].size(); ++i) {
        if (h.Check(values[r][i])) {
          stopped_at[r] = static_cast<int>(i);
          break;
        }
      }
      wait[r] = h.stop.wait_count();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(stopped_at[0], 2);
  EXPECT_EQ(stopped_at[1], 2);
  EXPECT_EQ(wait[0], 0);  // the per-rank state is not synchronised, only the decision
  EXPECT_EQ(wait[1], 2);
}

TEST(EarlyStoppingTest, DistRankSyncOrsTheDecisionOverRealCollectives) {
  std::vector<int> stop(2, -1);
  dist::testing::RunRanks(2, [&](dist::Context& ctx) {
    auto sync = NewDistRankSync(ctx);
    EarlyStopping es(Reference());
    TrainerState state;
    state.sync = sync.get();
    es.Setup(state);
    state.callback_metrics["val_loss"] = ctx.rank() == 1 ? 0.1f : 0.9f;  // only rank 1 crosses the threshold
    es.OnTrainEpochEnd(state);
    stop[ctx.rank()] = state.should_stop ? 1 : 0;
    EXPECT_TRUE(sync->All(true));
    EXPECT_FALSE(sync->All(ctx.rank() == 0));
    EXPECT_EQ(sync->FromRankZero(ctx.rank() == 0), true);
  });
  EXPECT_EQ(stop[0], 1);
  EXPECT_EQ(stop[1], 1);
}

TEST(StateDictTest, EncodeDecodeRoundTripsEveryTypeExactly) {
  StateDict s;
  s.Set("i", int64_t{-42});
  s.Set("d", 0.1);
  s.Set("inf", -std::numeric_limits<double>::infinity());
  s.Set("s", std::string("a b\nc:d"));
  s.Set("empty", std::map<std::string, double>{});
  s.Set("t", std::map<std::string, double>{{"/x/epoch=1 a.ckpt", 0.25}, {"/y", 1e-30}});
  EXPECT_EQ(StateDict::Decode(s.Encode()), s);
  EXPECT_THROW_WITH(StateDict::Decode("q 1:a 3\n"), CorruptDataError, "unknown entry type 'q'");
  EXPECT_THROW_WITH(StateDict::Decode("s 1:a 10:abc\n"), CorruptDataError, "truncated");
}

}  // namespace
}  // namespace lakerun::train
