#include "lakerun/train/lr_monitor.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include "lakerun/base/error.h"
#include "lakerun/train/lr_schedulers.h"
#include "lakerun/train/trainer.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::train {
namespace {

at::Tensor Param() { return torch::zeros({1}, torch::requires_grad()); }

std::shared_ptr<torch::optim::Adam> TwoGroupAdam() {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<at::Tensor>{Param()}, std::make_unique<torch::optim::AdamOptions>(0.01));
  groups.emplace_back(std::vector<at::Tensor>{Param()}, std::make_unique<torch::optim::AdamOptions>(0.02));
  return std::make_shared<torch::optim::Adam>(std::move(groups), torch::optim::AdamOptions(0.01));
}

TEST(LearningRateMonitorTest, NamesFollowLightning) {
  auto sgd1 = std::make_shared<torch::optim::SGD>(std::vector<at::Tensor>{Param()},
                                                  torch::optim::SGDOptions(0.1).momentum(0.9));
  auto sgd2 = std::make_shared<torch::optim::SGD>(std::vector<at::Tensor>{Param()}, torch::optim::SGDOptions(0.2));
  auto adam = TwoGroupAdam();
  auto named = std::make_shared<torch::optim::SGD>(std::vector<at::Tensor>{Param()}, torch::optim::SGDOptions(0.3));
  Optimizers opts{sgd1, sgd2, adam, named};
  LRSchedulerConfig per_step;
  per_step.scheduler = std::make_shared<StepLR>(sgd1, StepLROptions{});
  per_step.interval = Interval::kStep;
  LRSchedulerConfig with_name;
  with_name.scheduler = std::make_shared<StepLR>(named, StepLROptions{});
  with_name.name = "my-lr";
  std::vector<LRSchedulerConfig> configs = {per_step, with_name};
  TrainerState state;
  state.optimizers = &opts;
  state.lr_scheduler_configs = &configs;
  LearningRateMonitorOptions with_momentum;
  with_momentum.log_momentum = true;
  LearningRateMonitor monitor(with_momentum);
  const MetricMap any = monitor.ExtractStats(state, std::nullopt);
  EXPECT_EQ(any, (MetricMap{{"lr-SGD", 0.1f}, {"lr-SGD-momentum", 0.9f}, {"my-lr", 0.3f}, {"my-lr-momentum", 0.0f},
                            {"lr-SGD-1", 0.2f}, {"lr-SGD-1-momentum", 0.0f}, {"lr-Adam/pg1", 0.01f},
                            {"lr-Adam/pg1-momentum", 0.9f}, {"lr-Adam/pg2", 0.02f},
                            {"lr-Adam/pg2-momentum", 0.9f}}));
  // kStep: the step-interval scheduler and the optimizers without one, not the epoch-interval "my-lr".
  const MetricMap step = LearningRateMonitor().ExtractStats(state, Interval::kStep);
  EXPECT_EQ(step, (MetricMap{{"lr-SGD", 0.1f}, {"lr-SGD-1", 0.2f}, {"lr-Adam/pg1", 0.01f}, {"lr-Adam/pg2", 0.02f}}));
  EXPECT_THROW_WITH(ParseInterval("logging_interval", "batch"), ConfigError, "logging_interval", "'batch'",
                    "step, epoch");
}

TEST(LearningRateMonitorTest, LogsThroughTheTrainerAtEpochStartAndAtDueSteps) {
  struct Net : Module {
    Net() { fc = register_module("fc", torch::nn::Linear(2, 1)); }
    at::Tensor TrainingStep(const Batch& b, int64_t) override { return fc(b.at("x")).pow(2).mean(); }
    Optimizers ConfigureOptimizers() override {
      auto sgd = std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.1));
      Optimizers out{sgd};
      LRSchedulerConfig config;
      config.scheduler = std::make_shared<StepLR>(sgd, StepLROptions{1, 0.5});
      out.lr_schedulers.push_back(config);
      return out;
    }
    torch::nn::Linear fc{nullptr};
  };
  // Records what reached the loggers at each epoch start.
  struct Spy : Callback {
    std::string state_key() const override { return "Spy"; }
    void OnTrainEpochStart(TrainerState& s) override {}
    void OnTrainBatchEnd(TrainerState& s) override { seen.push_back(s.callback_metrics.at("lr-SGD")); }
    std::vector<float> seen;
  };
  Net net;
  TensorBatchSource train({{"x", torch::ones({4, 2})}}, 2);
  auto spy = std::make_shared<Spy>();
  TrainerOptions o;
  o.max_epochs = 3;
  o.distributed = false;
  o.progress_every_n_steps = 0;
  Trainer t(o, {std::make_shared<LearningRateMonitor>(), spy});
  t.Fit(net, train);
  EXPECT_EQ(spy->seen, (std::vector<float>{0.1f, 0.1f, 0.05f, 0.05f, 0.025f, 0.025f}));
  EXPECT_EQ(t.logged_metrics().at("lr-SGD"), 0.025f);
}

}  // namespace
}  // namespace lakerun::train
