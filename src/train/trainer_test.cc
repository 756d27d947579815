#include "lakerun/train/trainer.h"

#include <torch/torch.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/lr_schedulers.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/scoped_env.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::train {
namespace {

struct Regression : Module {
  explicit Regression(double lr = 0.05) : lr_(lr) {
    fc = register_module("fc", torch::nn::Linear(4, 1));
  }
  at::Tensor TrainingStep(const Batch& b, int64_t) override {
    at::Tensor loss = torch::mse_loss(fc(b.at("x")), b.at("y"));
    Log("loss", loss);
    ++train_calls;
    return loss;
  }
  void ValidationStep(const Batch& b, int64_t) override {
    Log("val_loss", torch::mse_loss(fc(b.at("x")), b.at("y")));
    ++val_calls;
  }
  Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(lr_).momentum(0.9))};
  }
  torch::nn::Linear fc{nullptr};
  double lr_;
  int train_calls = 0;
  int val_calls = 0;
};

struct Data {
  Data() {
    torch::manual_seed(7);
    x = torch::randn({40, 4});
    y = x.matmul(torch::tensor({1.0f, -2.0f, 0.5f, 3.0f}).unsqueeze(1)) + 0.1f * torch::randn({40, 1});
  }
  TensorBatchSource Train() { return TensorBatchSource({{"x", x}, {"y", y}}, 8, /*shuffle_seed=*/11); }
  TensorBatchSource Val() { return TensorBatchSource({{"x", x.slice(0, 0, 16)}, {"y", y.slice(0, 0, 16)}}, 8); }
  at::Tensor x, y;
};

std::unique_ptr<Regression> NewModel() {
  torch::manual_seed(3);
  return std::make_unique<Regression>();
}

// Fits `model` on the train and val data under a Trainer whose ModelCheckpoint keeps last.ckpt in `dir`, resuming
// from `ckpt_path` when given. Returns the global step reached.
int64_t FitSavingLast(Data& data, Module& model, int max_epochs, uint64_t seed, const std::string& dir,
                      const std::string& ckpt_path = "") {
  TrainerOptions o;
  o.max_epochs = max_epochs;
  o.seed = seed;
  o.default_root_dir = dir;
  ModelCheckpointOptions c;
  c.save_last = true;
  Trainer t(o, {std::make_shared<ModelCheckpoint>(c)});
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(model, train, &val, ckpt_path);
  return t.global_step();
}

TEST(TrainerTest, ResumingFromLastGivesBitwiseIdenticalWeights) {
  Data data;
  testing::TempDir straight_dir, resumed_dir;
  auto straight = NewModel();
  EXPECT_EQ(FitSavingLast(data, *straight, 4, 5, straight_dir.path()), 20);
  auto first = NewModel();
  EXPECT_EQ(FitSavingLast(data, *first, 2, 5, resumed_dir.path()), 10);
  torch::manual_seed(99);  // a different fresh model: everything must come from the checkpoint
  auto second = std::make_unique<Regression>();
  // seed 1234: the checkpoint's RNG state wins
  EXPECT_EQ(FitSavingLast(data, *second, 4, 1234, resumed_dir.path(), "last"), 20);
  EXPECT_EQ(second->train_calls, 10);  // only the remaining two epochs ran
  EXPECT_TRUE(torch::equal(second->fc->weight, straight->fc->weight));
  EXPECT_TRUE(torch::equal(second->fc->bias, straight->fc->bias));
}

// Regression with a step-interval StepLR and an epoch-interval CosineAnnealingLR on the same optimizer.
struct Scheduled : Regression {
  Optimizers ConfigureOptimizers() override {
    auto sgd = std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(lr_).momentum(0.9));
    Optimizers out{sgd};
    LRSchedulerConfig per_step;
    per_step.scheduler = std::make_shared<StepLR>(sgd, StepLROptions{/*step_size=*/3, /*gamma=*/0.7});
    per_step.interval = Interval::kStep;
    out.lr_schedulers.push_back(per_step);
    LRSchedulerConfig per_epoch;
    per_epoch.scheduler = std::make_shared<CosineAnnealingLR>(sgd, CosineAnnealingLROptions{/*t_max=*/3});
    out.lr_schedulers.push_back(per_epoch);
    sgd_ = sgd;
    return out;
  }
  std::shared_ptr<torch::optim::SGD> sgd_;
};

TEST(TrainerTest, ResumingWithLrSchedulersGivesBitwiseIdenticalWeightsAndLrs) {
  Data data;
  testing::TempDir straight_dir, resumed_dir;
  torch::manual_seed(3);
  Scheduled straight;
  EXPECT_EQ(FitSavingLast(data, straight, 4, 5, straight_dir.path()), 20);
  torch::manual_seed(3);
  Scheduled first;
  EXPECT_EQ(FitSavingLast(data, first, 2, 5, resumed_dir.path()), 10);
  torch::manual_seed(99);
  Scheduled second;
  EXPECT_EQ(FitSavingLast(data, second, 4, 1234, resumed_dir.path(), "last"), 20);
  EXPECT_EQ(second.train_calls, 10);
  EXPECT_EQ(GetLearningRate(*second.sgd_, 0), GetLearningRate(*straight.sgd_, 0));
  EXPECT_NE(GetLearningRate(*second.sgd_, 0), 0.05);  // the schedule moved it
  EXPECT_TRUE(torch::equal(second.fc->weight, straight.fc->weight));
  EXPECT_TRUE(torch::equal(second.fc->bias, straight.fc->bias));
}

TEST(TrainerTest, ValidationMetricsReachCallbacksAndEarlyStoppingEndsTheFit) {
  Data data;
  testing::TempDir dir;
  torch::manual_seed(3);
  Regression model(0.01);  // a smaller step than the default, so val_loss falls steadily
  TrainerOptions o;
  o.max_epochs = 50;
  o.default_root_dir = dir.path();
  EarlyStoppingOptions e;
  e.monitor = "val_loss";
  e.patience = 50;
  e.stopping_threshold = 0.5;
  auto stop = std::make_shared<EarlyStopping>(e);
  Trainer t(o, {stop});
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(model, train, &val);
  EXPECT_TRUE(t.state().should_stop);
  EXPECT_EQ(stop->stopping_reason(), StoppingReason::kStoppingThreshold);
  EXPECT_LT(t.callback_metrics().at("val_loss"), 0.5f);
  EXPECT_LT(t.current_epoch(), 49);
  EXPECT_EQ(stop->stopped_epoch(), t.current_epoch());
  EXPECT_EQ(t.callback_metrics().count("loss"), 1u);
}

TEST(TrainerTest, AccumulationStepsOnGroupsAndTheEpochsLastBatch) {
  Data data;
  auto model = NewModel();
  TrainerOptions o;
  o.max_epochs = 2;
  o.accumulate_grad_batches = 2;  // 5 batches per epoch -> steps after batches 2, 4, 5
  o.num_sanity_val_steps = 0;
  Trainer t(o);
  auto train = data.Train();
  t.Fit(*model, train);
  EXPECT_EQ(t.global_step(), 6);
  EXPECT_EQ(model->train_calls, 10);
}

TEST(TrainerTest, LimitsMaxStepsSanityCheckAndFastDevRun) {
  Data data;
  auto model = NewModel();
  TrainerOptions o;
  o.max_epochs = 3;
  o.limit_train_batches = 2;
  o.limit_val_batches = 1;
  o.num_sanity_val_steps = 1;
  Trainer t(o);
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(*model, train, &val);
  EXPECT_EQ(t.global_step(), 6);
  EXPECT_EQ(model->val_calls, 1 + 3);  // sanity check + one batch per epoch

  auto capped = NewModel();
  TrainerOptions m;
  m.max_steps = 7;
  m.num_sanity_val_steps = 0;
  Trainer ts(m);
  ts.Fit(*capped, train);
  EXPECT_EQ(ts.global_step(), 7);

  testing::TempDir dir;
  auto quick = NewModel();
  TrainerOptions f;
  f.fast_dev_run = 2;
  f.default_root_dir = dir.path();
  Trainer tf(f, {std::make_shared<ModelCheckpoint>(ModelCheckpointOptions{})});
  tf.Fit(*quick, train, &val);
  EXPECT_EQ(tf.global_step(), 2);
  EXPECT_FALSE(LocalFileSystem().Exists(dir.Join("checkpoints")));  // no checkpoints under fast_dev_run
}

TEST(TrainerTest, GradientClippingByValueBoundsEveryGradient) {
  Data data;
  struct Probe : Regression {
    at::Tensor TrainingStep(const Batch& b, int64_t i) override { return Regression::TrainingStep(b, i) * 1000.0; }
  };
  torch::manual_seed(3);
  Probe model;
  TrainerOptions o;
  o.max_epochs = 1;
  o.limit_train_batches = 1;
  o.gradient_clip_val = 0.01;
  o.gradient_clip_algorithm = GradientClipAlgorithm::kValue;
  Trainer t(o);
  auto train = data.Train();
  t.Fit(model, train);
  for (const auto& p : model.parameters()) EXPECT_LE(p.grad().abs().max().item<float>(), 0.01f);
}

TEST(TrainerTest, ResumingMidEpochRestoresTheLoaderPosition) {
  Data data;
  auto straight = NewModel();
  {
    TrainerOptions o;
    o.max_epochs = 2;
    o.distributed = false;
    Trainer t(o);
    auto train = data.Train();
    t.Fit(*straight, train);
    EXPECT_EQ(t.global_step(), 10);
  }
  testing::TempDir dir;
  ModelCheckpointOptions c;
  c.save_last = true;
  c.every_n_train_steps = 7;  // step 7 = the second batch of epoch 1 (5 batches per epoch)
  {
    auto first = NewModel();
    TrainerOptions o;
    o.max_steps = 7;
    o.distributed = false;
    o.default_root_dir = dir.path();
    Trainer t(o, {std::make_shared<ModelCheckpoint>(c)});
    auto train = data.Train();
    t.Fit(*first, train);
  }
  torch::manual_seed(42);
  Regression second;
  TrainerOptions o;
  o.max_epochs = 2;
  o.distributed = false;
  o.default_root_dir = dir.path();
  Trainer t(o, {std::make_shared<ModelCheckpoint>(c)});
  auto train = data.Train();
  t.Fit(second, train, nullptr, "last");
  EXPECT_EQ(second.train_calls, 3);  // the rest of epoch 1 only
  EXPECT_EQ(t.global_step(), 10);
  EXPECT_TRUE(torch::equal(second.fc->weight, straight->fc->weight));
  EXPECT_TRUE(torch::equal(second.fc->bias, straight->fc->bias));
}

TEST(TrainerTest, MinEpochsOutlastAnEarlyStopAndValidationFollowsItsSchedule) {
  Data data;
  auto model = NewModel();
  TrainerOptions o;
  o.max_epochs = 10;
  o.min_epochs = 4;
  o.check_val_every_n_epoch = 2;
  o.num_sanity_val_steps = 0;
  o.distributed = false;
  EarlyStoppingOptions e;
  e.monitor = "val_loss";
  e.stopping_threshold = 1e9;  // wants to stop at the first check
  auto stop = std::make_shared<EarlyStopping>(e);
  Trainer t(o, {stop});
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(*model, train, &val);
  EXPECT_EQ(stop->check_on_train_epoch_end(), false);  // validation is not every epoch: checked after validation
  EXPECT_EQ(t.current_epoch(), 3);                      // stopped at epoch 1, kept going until min_epochs = 4
  EXPECT_EQ(model->val_calls, 2 * 2);                   // epochs 1 and 3, two batches each
  EXPECT_EQ(t.global_step(), 20);
}

TEST(TrainerTest, MetricsReachTheTrackingRunOnLightningsStepAxis) {
  Data data;
  testing::TempDir dir;
  track::TrackerOptions to;
  to.handle_signals = false;
  to.add_system_tags = false;
  track::Tracker tracker(dir.Join("mlruns"), to);
  track::Run run = tracker.StartRun();
  auto model = NewModel();
  TrainerOptions o;
  o.max_epochs = 2;
  o.num_sanity_val_steps = 0;
  o.distributed = false;
  o.log_every_n_steps = 2;
  o.run = &run;
  Trainer t(o);
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(*model, train, &val);
  run.Flush();
  auto store = track::OpenStore(dir.Join("mlruns"));
  std::vector<int64_t> loss_steps, val_steps;
  for (const auto& m : store->GetMetricHistory(run.run_id(), "loss")) loss_steps.push_back(m.step);
  for (const auto& m : store->GetMetricHistory(run.run_id(), "val_loss")) val_steps.push_back(m.step);
  EXPECT_EQ(loss_steps, (std::vector<int64_t>{1, 3, 5, 7, 9}));  // (steps before + 1) % 2 == 0
  EXPECT_EQ(val_steps, (std::vector<int64_t>{4, 9}));           // the last batch's step of each epoch
  auto epochs = store->GetMetricHistory(run.run_id(), "epoch");
  ASSERT_FALSE(epochs.empty());
  EXPECT_EQ(epochs.back().value, 1.0);
  run.End();
}

TEST(TrainerTest, ProgressLinesShowProgBarMetricsOnly) {
  Data data;
  struct Shown : Regression {
    at::Tensor TrainingStep(const Batch& b, int64_t i) override {
      at::Tensor loss = Regression::TrainingStep(b, i);
      LogOptions bar;
      bar.prog_bar = true;
      Log("shown", 1.5, bar);
      return loss;
    }
  };
  torch::manual_seed(3);
  Shown model;
  std::ostringstream out;
  TrainerOptions o;
  o.max_epochs = 2;
  o.distributed = false;
  o.progress_every_n_steps = 4;
  o.progress_stream = &out;
  Trainer t(o);
  auto train = data.Train();
  t.Fit(model, train);
  EXPECT_EQ(out.str(),
            "train epoch 0/2 step 4 shown=1.5000\n"
            "end of epoch 0/2 step 5 shown=1.5000\n"
            "train epoch 1/2 step 8 shown=1.5000\n"
            "end of epoch 1/2 step 10 shown=1.5000\n");
}

// The environment `lakerun launch` gives the single rank of job "job-t" in attempt `attempt`, for one scope.
class LaunchedAttempt {
 public:
  explicit LaunchedAttempt(int attempt) {
    const std::map<std::string, std::string> vars = {
        {"LAKERUN_LAUNCHER", "1"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "1"},
        {"LAKERUN_RESTART_COUNT", std::to_string(attempt)}, {"LAKERUN_RUN_ID", "job-t"}};
    for (const auto& [name, value] : vars) env_.Set(name, value);
  }

 private:
  lakerun::testing::ScopedEnv env_;
};

// A checkpoint callback that fails the fit at the end of epoch `epoch`, after the callbacks before it saved: the
// attempt of a job that dies between two checkpoint writes.
struct FailAtEpochEnd : Callback {
  explicit FailAtEpochEnd(int64_t epoch) : epoch(epoch) {}
  std::string state_key() const override { return "FailAtEpochEnd"; }
  bool is_checkpoint_callback() const override { return true; }
  void OnTrainEpochEnd(TrainerState& state) override {
    if (state.current_epoch == epoch) throw std::runtime_error("the attempt dies");
  }
  int64_t epoch;
};

// Every file under `dir`, as "sub/name".
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  for (const char* sub : {"epochs", "steps"}) {
    const std::string path = JoinPath(dir, sub);
    if (!LocalFileSystem().Exists(path)) continue;
    for (const auto& f : LocalFileSystem().List(path)) out.insert(StrCat(sub, "/", f.name));
  }
  return out;
}

// Fits 4 epochs under attempt `attempt` of a launched job with an epoch checkpoint (every epoch kept) and a step
// checkpoint (every 4 steps, with last.ckpt) in `dir`; `fail` adds FailAtEpochEnd between them.
int64_t FitAttempt(Data& data, Module& model, int attempt, const std::string& dir, track::Run* run = nullptr,
                   std::optional<int64_t> fail = std::nullopt, const std::string& ckpt_path = "") {
  LaunchedAttempt env(attempt);
  TrainerOptions o;
  o.max_epochs = 4;
  o.seed = 5;
  o.distributed = false;
  o.progress_every_n_steps = 0;
  o.run = run;
  ModelCheckpointOptions per_epoch;
  per_epoch.dirpath = JoinPath(dir, "epochs");
  per_epoch.filename = "{epoch}";
  per_epoch.save_top_k = -1;
  ModelCheckpointOptions per_steps;
  per_steps.dirpath = JoinPath(dir, "steps");
  per_steps.every_n_train_steps = 4;
  per_steps.save_last = true;
  std::vector<std::shared_ptr<Callback>> callbacks = {std::make_shared<ModelCheckpoint>(per_epoch)};
  if (fail) callbacks.push_back(std::make_shared<FailAtEpochEnd>(*fail));
  callbacks.push_back(std::make_shared<ModelCheckpoint>(per_steps));
  Trainer t(o, callbacks);
  auto train = data.Train();
  t.Fit(model, train, nullptr, ckpt_path);
  return t.global_step();
}

// A job `lakerun launch` restarted resumes by itself from the newest checkpoint, and the files the failed attempt
// wrote beyond it are replaced, not kept beside -v1 copies: the directory ends as an uninterrupted run leaves it.
TEST(TrainerTest, ARestartedJobResumesByItselfAndKeepsItsCheckpointsConsistent) {
  Data data;
  testing::TempDir straight_dir, dir;
  auto straight = NewModel();
  EXPECT_EQ(FitAttempt(data, *straight, 0, straight_dir.path()), 20);

  // Attempt 0 dies at the end of epoch 1 (step 10), after epochs/epoch=1.ckpt, while the newest step checkpoint
  // and last.ckpt are of step 8.
  auto first = NewModel();
  EXPECT_THROW(FitAttempt(data, *first, 0, dir.path(), nullptr, 1), std::runtime_error);
  EXPECT_TRUE(LocalFileSystem().Exists(dir.Join("epochs/epoch=1.ckpt")));

  track::TrackerOptions to;
  to.handle_signals = false;
  track::Tracker tracker(dir.Join("mlruns"), to);
  track::Run run = tracker.StartRun();
  torch::manual_seed(99);  // a different fresh model: everything must come from the checkpoint
  auto second = std::make_unique<Regression>();
  ::testing::internal::CaptureStderr();
  const int64_t steps = FitAttempt(data, *second, 1, dir.path(), &run);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(steps, 20);
  EXPECT_EQ(second->train_calls, 20 - 8);
  EXPECT_THAT(log, ::testing::HasSubstr("Trainer: attempt 1 of job job-t (restarted by lakerun launch) resumes from " +
                                        dir.Join("steps/last.ckpt")));
  EXPECT_THAT(log, ::testing::HasSubstr("removing " + dir.Join("epochs/epoch=1.ckpt")));
  EXPECT_TRUE(torch::equal(second->fc->weight, straight->fc->weight));
  EXPECT_EQ(FilesUnder(dir.path()), FilesUnder(straight_dir.path()));
  run.End();
  const auto restarts = tracker.store().GetMetricHistory(run.run_id(), kRestartCountMetric);
  ASSERT_EQ(restarts.size(), 1u);
  EXPECT_EQ(restarts[0].value, 1.0);
  EXPECT_EQ(restarts[0].step, 8);  // the step the attempt resumed from
}

TEST(TrainerTest, ARestartedJobWithoutCheckpointsStartsFreshAndAChosenCheckpointWins) {
  Data data;
  testing::TempDir dir;
  auto model = NewModel();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(FitAttempt(data, *model, 2, dir.path()), 20);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, ::testing::HasSubstr("Trainer: attempt 2 of job job-t (restarted by lakerun launch) starts fresh: "
                                        "no checkpoint yet in " + dir.Join("epochs") + ", " + dir.Join("steps")));
  EXPECT_EQ(model->train_calls, 20);
  // A checkpoint the caller names is resumed from, restart or not.
  auto again = NewModel();
  EXPECT_EQ(FitAttempt(data, *again, 3, dir.path(), nullptr, std::nullopt, dir.Join("epochs/epoch=1.ckpt")), 20);
  EXPECT_EQ(again->train_calls, 10);
}

TEST(TrainerTest, BadOptionsAndCheckpointsAreNamed) {
  TrainerOptions o;
  o.accumulate_grad_batches = 0;
  EXPECT_THROW_WITH(Trainer{o}, ConfigError, "accumulate_grad_batches", "0");
  EXPECT_THROW_WITH(ParseGradientClipAlgorithm("gradient_clip_algorithm", "l3"), ConfigError,
                    "gradient_clip_algorithm", "'l3'", "norm, value");
  o = TrainerOptions{};
  o.max_epochs = -2;
  EXPECT_THROW_WITH(Trainer{o}, ConfigError, "max_epochs", "-2");
  o = TrainerOptions{};
  o.collective_timeout = std::chrono::milliseconds(0);
  EXPECT_THROW_WITH(Trainer{o}, ConfigError, "collective_timeout", "0 ms");
  o = TrainerOptions{};
  EXPECT_THROW_WITH(ParseAccelerator("accelerator", "tpu"), ConfigError, "accelerator", "'tpu'", "auto, cpu, cuda");
  EXPECT_EQ(ParseAccelerator("accelerator", "gpu"), Accelerator::kCuda);  // Lightning's alias
  o.accelerator = Accelerator::kCuda;
  if (!at::hasCUDA()) EXPECT_THROW_WITH(Trainer{o}, ConfigError, "accelerator='cuda'", "CUDA");

  Data data;
  auto model = NewModel();
  auto train = data.Train();
  Trainer t(TrainerOptions{});
  EXPECT_THROW_WITH(t.Fit(*model, train, nullptr, "best"), ConfigError, "best");
  testing::TempDir dir;
  LocalFileSystem().WriteAtomically(dir.Join("junk.ckpt"), "not a checkpoint");
  EXPECT_THROW_WITH(t.Fit(*model, train, nullptr, dir.Join("junk.ckpt")), CorruptDataError, "junk.ckpt");
  EXPECT_THROW_WITH(model->Log("x", 1.0), InvalidArgument, "'x'", "outside");
}

}  // namespace
}  // namespace lakerun::train
