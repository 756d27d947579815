// The Trainer's LR scheduler stepping, validation scheduling, stopping limits, DataModule, progress bar and tracking.
#include <torch/torch.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <sstream>

#include "lakerun/base/error.h"
#include "lakerun/track/report.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/lr_monitor.h"
#include "lakerun/train/lr_schedulers.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"
#include "train/progress.h"

namespace lakerun::train {
namespace {

// 40 rows, batches of 8: five batches per epoch.
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

// Records the lr each training step sees, the global step at each validation, and the validation count.
struct Net : Module {
  using MakeSchedulers = std::function<std::vector<LRSchedulerConfig>(std::shared_ptr<torch::optim::SGD>)>;
  explicit Net(MakeSchedulers make = nullptr) : make_(std::move(make)) {
    torch::manual_seed(3);
    fc = register_module("fc", torch::nn::Linear(4, 1));
  }
  at::Tensor TrainingStep(const Batch& b, int64_t) override {
    lrs.push_back(GetLearningRate(*sgd, 0));
    at::Tensor loss = torch::mse_loss(fc(b.at("x")), b.at("y"));
    Log("loss", loss);
    return loss;
  }
  void ValidationStep(const Batch& b, int64_t i) override {
    if (i == 0) val_at_batches.push_back(trained_batches());
    Log("val_loss", val_loss_override.value_or(torch::mse_loss(fc(b.at("x")), b.at("y")).item<float>()));
  }
  Optimizers ConfigureOptimizers() override {
    sgd = std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    Optimizers out{sgd};
    if (make_) out.lr_schedulers = make_(sgd);
    return out;
  }
  int64_t trained_batches() const { return static_cast<int64_t>(lrs.size()); }
  torch::nn::Linear fc{nullptr};
  std::shared_ptr<torch::optim::SGD> sgd;
  std::vector<double> lrs;
  std::vector<int64_t> val_at_batches;
  std::optional<float> val_loss_override;
  MakeSchedulers make_;
};

TrainerOptions Quiet() {
  TrainerOptions o;
  o.distributed = false;
  o.num_sanity_val_steps = 0;
  o.progress_every_n_steps = 0;
  return o;
}

TEST(TrainerSchedulerTest, StepIntervalSchedulersStepAfterEveryOptimizerStepWithFrequency) {
  Data data;
  Net net([](auto sgd) {
    LRSchedulerConfig config;
    config.scheduler = std::make_shared<StepLR>(sgd, StepLROptions{1, 0.5});
    config.interval = Interval::kStep;
    config.frequency = 2;
    return std::vector<LRSchedulerConfig>{config};
  });
  TrainerOptions o = Quiet();
  o.max_epochs = 2;
  Trainer t(o);
  auto train = data.Train();
  t.Fit(net, train);
  // frequency counts batches within the epoch (Lightning's batch_idx + 1): steps after batches 2 and 4 of each epoch.
  EXPECT_EQ(net.lrs, (std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.00625}));
}

TEST(TrainerSchedulerTest, AccumulatingBatchesDoNotStepSchedulers) {
  Data data;
  Net net([](auto sgd) {
    LRSchedulerConfig config;
    config.scheduler = std::make_shared<StepLR>(sgd, StepLROptions{1, 0.5});
    config.interval = Interval::kStep;
    return std::vector<LRSchedulerConfig>{config};
  });
  TrainerOptions o = Quiet();
  o.max_epochs = 1;
  o.accumulate_grad_batches = 2;  // optimizer steps after batches 2, 4 and 5
  Trainer t(o);
  auto train = data.Train();
  t.Fit(net, train);
  EXPECT_EQ(net.lrs, (std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.025}));
  EXPECT_EQ(GetLearningRate(*net.sgd, 0), 0.0125);
}

TEST(TrainerSchedulerTest, EpochIntervalSchedulersStepAtEpochEnd) {
  Data data;
  Net net([](auto sgd) {
    LRSchedulerConfig config;
    config.scheduler = std::make_shared<StepLR>(sgd, StepLROptions{1, 0.5});
    return std::vector<LRSchedulerConfig>{config};
  });
  TrainerOptions o = Quiet();
  o.max_epochs = 3;
  o.limit_train_batches = 2;
  Trainer t(o);
  auto train = data.Train();
  t.Fit(net, train);
  EXPECT_EQ(net.lrs, (std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.025, 0.025}));
}

TEST(TrainerSchedulerTest, ReduceLROnPlateauReadsTheMonitoredValidationMetric) {
  Data data;
  Net net([](auto sgd) {
    ReduceLROnPlateauOptions options;
    options.factor = 0.5;
    options.patience = 0;
    LRSchedulerConfig config;
    config.scheduler = std::make_shared<ReduceLROnPlateau>(sgd, options);
    config.monitor = "val_loss";
    return std::vector<LRSchedulerConfig>{config};
  });
  net.val_loss_override = 1.0f;  // never improves after the first epoch
  TrainerOptions o = Quiet();
  o.max_epochs = 3;
  o.limit_train_batches = 1;
  Trainer t(o);
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(net, train, &val);
  EXPECT_EQ(net.lrs, (std::vector<double>{0.1, 0.1, 0.05}));
  EXPECT_EQ(GetLearningRate(*net.sgd, 0), 0.025);
}

TEST(TrainerSchedulerTest, AMissingMonitorIsAnErrorNamingItWhenStrict) {
  Data data;
  auto make = [](bool strict) {
    return [strict](auto sgd) {
      ReduceLROnPlateauOptions options;
      options.patience = 0;
      LRSchedulerConfig config;
      config.scheduler = std::make_shared<ReduceLROnPlateau>(sgd, options);
      config.monitor = "val_acc";
      config.strict = strict;
      return std::vector<LRSchedulerConfig>{config};
    };
  };
  TrainerOptions o = Quiet();
  o.max_epochs = 2;
  o.limit_train_batches = 1;
  auto train = data.Train();
  Net strict(make(true));
  Trainer t(o);
  EXPECT_THROW_WITH(t.Fit(strict, train), ConfigError, "'val_acc'", "not available", "'loss'");
  Net lenient(make(false));
  Trainer t2(o);
  t2.Fit(lenient, train);
  EXPECT_EQ(lenient.lrs, (std::vector<double>{0.1, 0.1}));
  Net unmonitored([](auto sgd) {
    LRSchedulerConfig config;
    config.scheduler = std::make_shared<ReduceLROnPlateau>(sgd, ReduceLROnPlateauOptions{});
    return std::vector<LRSchedulerConfig>{config};
  });
  Trainer t3(o);
  EXPECT_THROW_WITH(t3.Fit(unmonitored, train), ConfigError, "must include a monitor");
}

TEST(TrainerValidationTest, FractionalValCheckIntervalValidatesInsideTheEpoch) {
  Data data;
  Net net;
  TrainerOptions o = Quiet();
  o.max_epochs = 2;
  o.val_check_interval = 0.5;  // int(5 * 0.5) = every 2 batches: after batches 2 and 4 (not 5)
  Trainer t(o);
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(net, train, &val);
  EXPECT_EQ(net.val_at_batches, (std::vector<int64_t>{2, 4, 7, 9}));
}

TEST(TrainerValidationTest, IntegerValCheckIntervalCountsAcrossEpochsWithoutAnEpochSchedule) {
  Data data;
  Net net;
  TrainerOptions o = Quiet();
  o.max_epochs = 3;
  o.val_check_interval = 7;
  o.check_val_every_n_epoch = 0;  // None
  Trainer t(o);
  auto train = data.Train();
  auto val = data.Val();
  t.Fit(net, train, &val);
  EXPECT_EQ(net.val_at_batches, (std::vector<int64_t>{7, 14}));

  TrainerOptions bad = Quiet();
  bad.val_check_interval = 7;  // more than the 5 batches of an epoch, with an epoch schedule
  Trainer tb(bad);
  Net other;
  EXPECT_THROW_WITH(tb.Fit(other, train, &val), ConfigError, "val_check_interval (7)", "(5)");
  TrainerOptions fraction = Quiet();
  fraction.check_val_every_n_epoch = 0;
  EXPECT_THROW_WITH(Trainer{fraction}, ConfigError, "val_check_interval should be an integer");
  fraction.check_val_every_n_epoch = 1;
  fraction.val_check_interval = 1.5;
  EXPECT_THROW_WITH(Trainer{fraction}, ConfigError, "val_check_interval", "1.5");
}

TEST(TrainerStoppingTest, MinStepsOutlastsAnEarlyStopAndMaxTimeStopsAtABatchBoundary) {
  Data data;
  struct Stopper : Callback {
    std::string state_key() const override { return "Stopper"; }
    void OnTrainBatchEnd(TrainerState& s) override { s.should_stop = true; }
  };
  Net net;
  TrainerOptions o = Quiet();
  o.max_epochs = 5;
  o.min_steps = 7;
  Trainer t(o, {std::make_shared<Stopper>()});
  auto train = data.Train();
  t.Fit(net, train);
  EXPECT_EQ(t.global_step(), 7);
  EXPECT_EQ(net.trained_batches(), 7);

  Net timed;
  TrainerOptions m = Quiet();
  m.max_epochs = 5;
  m.max_time = std::chrono::milliseconds(0);  // spent at once: the first batch is the last
  Trainer tm(m);
  tm.Fit(timed, train);
  EXPECT_EQ(tm.global_step(), 1);
  EXPECT_TRUE(tm.state().should_stop);
}

TEST(TrainerDataModuleTest, FitValidateAndTestThroughADataModule) {
  struct Dm : DataModule {
    Data data;
    TensorBatchSource train = data.Train(), val = data.Val(), test = data.Val();
    std::vector<std::string> calls;
    void PrepareData() override { calls.push_back("prepare"); }
    void Setup(TrainerFn stage) override { calls.push_back(std::string("setup:") + ToString(stage)); }
    void Teardown(TrainerFn stage) override { calls.push_back(std::string("teardown:") + ToString(stage)); }
    BatchSource* TrainSource() override { return &train; }
    BatchSource* ValSource() override { return &val; }
    BatchSource* TestSource() override { return stage_test ? &test : nullptr; }
    bool stage_test = true;
  };
  struct Tested : Net {
    void TestStep(const Batch& b, int64_t) override { Log("test_loss", torch::mse_loss(fc(b.at("x")), b.at("y"))); ++tests; }
    int tests = 0;
  };
  Dm dm;
  Tested net;
  TrainerOptions o = Quiet();
  o.max_epochs = 1;
  o.limit_test_batches = 1;
  Trainer t(o);
  t.Fit(net, dm);
  EXPECT_EQ(net.val_at_batches.size(), 1u);
  EXPECT_EQ(t.Validate(net, dm).count("val_loss"), 1u);
  EXPECT_EQ(t.Test(net, dm).count("test_loss"), 1u);
  EXPECT_EQ(net.tests, 1);  // limit_test_batches
  EXPECT_EQ(dm.calls, (std::vector<std::string>{"prepare", "setup:fit", "teardown:fit", "prepare", "setup:validate",
                                                "teardown:validate", "prepare", "setup:test", "teardown:test"}));
  dm.stage_test = false;
  EXPECT_THROW_WITH(t.Test(net, dm), ConfigError, "no test source");
}

TEST(TrainerEvaluationTest, CkptPathLoadsTheCheckpointsWeightsBeforeThePass) {
  Data data;
  Net net;
  TrainerOptions o = Quiet();
  o.max_epochs = 1;
  testing::TempDir dir;
  Trainer trainer(o);
  auto train = data.Train();
  trainer.Fit(net, train);
  const std::string path = dir.Join("a.ckpt");
  trainer.SaveCheckpoint(path);
  const at::Tensor saved = net.fc->weight.clone();
  {
    torch::NoGradGuard no_grad;
    net.fc->weight.zero_();
  }
  auto val = data.Val();
  trainer.Test(net, val);  // no checkpoint: the weights stay as they are
  EXPECT_TRUE(net.fc->weight.eq(0).all().item<bool>());
  trainer.Test(net, val, path);
  EXPECT_TRUE(torch::equal(net.fc->weight, saved));
  {
    torch::NoGradGuard no_grad;
    net.fc->weight.zero_();
  }
  trainer.Validate(net, val, path);
  EXPECT_TRUE(torch::equal(net.fc->weight, saved));
  EXPECT_THROW_WITH(trainer.Validate(net, val, dir.Join("missing.ckpt")), ConfigError, "Validate", "missing.ckpt");
  EXPECT_THROW_WITH(trainer.Test(net, val, "best"), ConfigError, "best", "no ModelCheckpoint");
}

TEST(TrainerProgressTest, TheBarRewritesOneLinePerEpoch) {
  Data data;
  Net net;
  std::ostringstream out;
  TrainerOptions o = Quiet();
  o.max_epochs = 2;
  o.limit_train_batches = 2;
  o.progress_every_n_steps = 1;
  o.progress_style = ProgressStyle::kBar;
  o.progress_stream = &out;
  Trainer t(o);
  auto train = data.Train();
  t.Fit(net, train);
  const std::string s = out.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 2);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\r'), 6);  // two batches + the final state, per epoch
  EXPECT_NE(s.find("\rEpoch 0/2:  50%|#####     | 1/2 ["), std::string::npos) << s;
  EXPECT_NE(s.find("\rEpoch 1/2: 100%|##########| 2/2 ["), std::string::npos) << s;
  EXPECT_NE(s.find(" it/s]"), std::string::npos);
  EXPECT_THROW_WITH(ParseProgressStyle("progress_style", "fancy"), ConfigError, "progress_style", "'fancy'",
                    "auto, bar, lines");
}

// kAuto: a bar on stderr when it is a terminal, or when `lakerun launch` says its console is one (the rank's stderr
// is then its pipe); plain lines on a caller's stream, and when piped.
TEST(TrainerProgressTest, AutoDrawsTheBarOnTheLaunchersTerminalToo) {
  EXPECT_TRUE(AutoProgressBar(false, true, nullptr));
  EXPECT_TRUE(AutoProgressBar(false, false, "1"));
  EXPECT_FALSE(AutoProgressBar(false, false, "0"));
  EXPECT_FALSE(AutoProgressBar(false, false, nullptr));
  EXPECT_FALSE(AutoProgressBar(true, true, "1"));
  ::setenv(kConsoleIsTerminalVariable, "1", 1);
  Progress on_launchers_terminal(Quiet(), 0);
  ::unsetenv(kConsoleIsTerminalVariable);
  EXPECT_TRUE(on_launchers_terminal.bar());
  EXPECT_EQ(Progress(Quiet(), 0).bar(), ::isatty(STDERR_FILENO) == 1);
}

TEST(TrainerTrackingTest, HyperparametersCheckpointsAndTheFinalModelReachTheRun) {
  struct Hp : Net {
    std::map<std::string, std::string> Hyperparameters() const override { return {{"lr", "0.1"}, {"layers", "1"}}; }
  };
  Data data;
  testing::TempDir dir;
  track::TrackerOptions to;
  to.handle_signals = false;
  to.add_system_tags = false;
  track::Tracker tracker(dir.Join("mlruns"), to);
  track::Run run = tracker.StartRun();
  Hp net;
  TrainerOptions o = Quiet();
  o.max_epochs = 2;
  o.limit_train_batches = 1;
  o.default_root_dir = dir.path();
  o.run = &run;
  o.tracker = &tracker;
  o.log_model_artifact_path = "model";
  ModelCheckpointOptions c;
  c.filename = "{epoch}";
  c.save_top_k = -1;
  c.log_checkpoints_to_run = true;
  Trainer t(o, {std::make_shared<ModelCheckpoint>(c)});
  auto train = data.Train();
  t.Fit(net, train);
  run.Flush();
  auto store = track::OpenStore(dir.Join("mlruns"));
  const auto r = store->GetRun(run.run_id());
  EXPECT_EQ(r.params.at("lr"), "0.1");
  EXPECT_EQ(r.params.at("layers"), "1");
  const std::string artifacts = r.info.artifact_uri;
  FileSystem& fs = LocalFileSystem();
  auto local = [&](const std::string& p) {
    const size_t scheme = artifacts.find("://");
    return JoinPath(scheme == std::string::npos ? artifacts : artifacts.substr(scheme + 3), p);
  };
  EXPECT_TRUE(fs.Exists(local("checkpoints/epoch=0.ckpt"))) << artifacts;
  EXPECT_TRUE(fs.Exists(local("checkpoints/epoch=1.ckpt")));
  EXPECT_TRUE(fs.Exists(local("model/MLmodel")));
  run.End();
  TrainerOptions bad = Quiet();
  bad.log_model_artifact_path = "model";
  EXPECT_THROW_WITH(Trainer{bad}, ConfigError, "log_model_artifact_path", "tracker");
}

// The run records what the fit monitors (the checkpoint callback's monitor before EarlyStopping's), so that
// `lakerun runs list` shows that metric first.
TEST(TrainerTrackingTest, TheMonitoredMetricIsTaggedOnTheRun) {
  Data data;
  testing::TempDir dir;
  track::TrackerOptions to;
  to.handle_signals = false;
  to.add_system_tags = false;
  track::Tracker tracker(dir.Join("mlruns"), to);
  track::Run run = tracker.StartRun();
  Net net;
  TrainerOptions o = Quiet();
  o.max_epochs = 1;
  o.limit_train_batches = 1;
  o.default_root_dir = dir.path();
  o.run = &run;
  EarlyStoppingOptions es;
  es.monitor = "train_loss";
  es.strict = false;
  ModelCheckpointOptions c;
  c.monitor = "val_acc";
  c.mode = MonitorMode::kMax;
  c.save_top_k = 0;
  Trainer t(o, {std::make_shared<EarlyStopping>(es), std::make_shared<ModelCheckpoint>(c)});
  auto train = data.Train();
  t.Fit(net, train);
  run.Flush();
  const auto r = track::OpenStore(dir.Join("mlruns"))->GetRun(run.run_id());
  EXPECT_EQ(r.tags.at(track::kMonitorTag), "val_acc");
  EXPECT_EQ(r.tags.at(track::kMonitorModeTag), "max");
  run.End();
}

}  // namespace
}  // namespace lakerun::train
