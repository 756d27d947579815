// The schedulers of torch.optim.lr_scheduler (PyTorch 1.13) that lakerun provides, with the same arguments and
// formulas (recursive get_lr(), so values match PyTorch's bit for bit):
//
//   StepLR             lr *= gamma every step_size epochs
//   MultiStepLR        lr *= gamma^(count of milestone) at each milestone
//   ExponentialLR      lr *= gamma every epoch
//   CosineAnnealingLR  cosine from the base lr down to eta_min over t_max epochs (and back up, periodically)
//   LambdaLR           lr = base_lr * lambda(epoch)
//   LinearLR           linear warm-up: factor from start_factor to end_factor over total_iters epochs
//   OneCycleLR         1cycle policy (lr and momentum), stepped once per batch
//   ReduceLROnPlateau  lr *= factor once a metric has stopped improving for `patience` epochs
//
// Constructors throw ConfigError naming the option and bad value where PyTorch raises ValueError.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lakerun/train/lr_scheduler.h"

namespace lakerun::train {

using OptimizerPtr = std::shared_ptr<torch::optim::Optimizer>;

struct StepLROptions {
  int64_t step_size = 1;
  double gamma = 0.1;
};
class StepLR final : public EpochLRScheduler {
 public:
  StepLR(OptimizerPtr optimizer, StepLROptions options);
  std::string class_name() const override { return "StepLR"; }

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  StepLROptions o_;
};

struct MultiStepLROptions {
  /// Epochs at which the lr is multiplied by gamma (a repeated milestone multiplies by gamma^count).
  std::vector<int64_t> milestones = {};
  double gamma = 0.1;
};
class MultiStepLR final : public EpochLRScheduler {
 public:
  MultiStepLR(OptimizerPtr optimizer, MultiStepLROptions options);
  std::string class_name() const override { return "MultiStepLR"; }

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  MultiStepLROptions o_;
};

struct ExponentialLROptions {
  double gamma = 0.1;
};
class ExponentialLR final : public EpochLRScheduler {
 public:
  ExponentialLR(OptimizerPtr optimizer, ExponentialLROptions options);
  std::string class_name() const override { return "ExponentialLR"; }

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  ExponentialLROptions o_;
};

struct CosineAnnealingLROptions {
  int64_t t_max = 1;
  double eta_min = 0.0;
};
class CosineAnnealingLR final : public EpochLRScheduler {
 public:
  CosineAnnealingLR(OptimizerPtr optimizer, CosineAnnealingLROptions options);
  std::string class_name() const override { return "CosineAnnealingLR"; }

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  CosineAnnealingLROptions o_;
};

/// The factor applied to base_lr at an epoch.
using LrLambda = std::function<double(int64_t epoch)>;
class LambdaLR final : public EpochLRScheduler {
 public:
  /// One lambda for every group, or one per group.
  LambdaLR(OptimizerPtr optimizer, LrLambda lr_lambda);
  LambdaLR(OptimizerPtr optimizer, std::vector<LrLambda> lr_lambdas);
  std::string class_name() const override { return "LambdaLR"; }

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  std::vector<LrLambda> lambdas_;
};

struct LinearLROptions {
  double start_factor = 1.0 / 3;
  double end_factor = 1.0;
  int64_t total_iters = 5;
};
class LinearLR final : public EpochLRScheduler {
 public:
  LinearLR(OptimizerPtr optimizer, LinearLROptions options);
  std::string class_name() const override { return "LinearLR"; }

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  LinearLROptions o_;
};

struct OneCycleLROptions {
  /// The peak lr (every group).
  double max_lr = 0.1;
  /// Steps in the cycle; 0: epochs * steps_per_epoch.
  int64_t total_steps = 0;
  int64_t epochs = 0;
  int64_t steps_per_epoch = 0;
  double pct_start = 0.3;
  AnnealStrategy anneal_strategy = AnnealStrategy::kCos;
  /// Cycles momentum (or Adam's beta1) inversely to the lr between base_momentum and max_momentum.
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};
class OneCycleLR final : public EpochLRScheduler {
 public:
  /// Throws ConfigError for non-positive step counts, pct_start outside [0, 1], or cycle_momentum with an
  /// optimizer that has no momentum.
  OneCycleLR(OptimizerPtr optimizer, OneCycleLROptions options);
  std::string class_name() const override { return "OneCycleLR"; }
  /// Throws InvalidArgument naming total_steps when stepped past the end of the cycle (as PyTorch).
  void Step(std::optional<double> metric = std::nullopt) override;
  void ScaleLearningRates(double factor) override;

 protected:
  std::vector<double> ComputeLrs() override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;  // 0 initial, 1 max, 2 min
    int start_momentum, end_momentum;  // 0 max_momentum, 1 base_momentum
  };
  double Anneal(double start, double end, double pct) const;
  void SetMomentum(size_t group, double momentum);

  OneCycleLROptions o_;
  int64_t total_steps_ = 0;
  std::vector<Phase> phases_;
  std::vector<double> initial_lr_, max_lr_, min_lr_;
};

struct ReduceLROnPlateauOptions {
  MonitorMode mode = MonitorMode::kMin;
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  ThresholdMode threshold_mode = ThresholdMode::kRel;
  int64_t cooldown = 0;
  double min_lr = 0.0;
  double eps = 1e-8;
};
/// Not an EpochLRScheduler (as in PyTorch): it takes no initial step and Step() needs the metric.
class ReduceLROnPlateau final : public LRScheduler {
 public:
  /// Throws ConfigError for factor >= 1.
  ReduceLROnPlateau(OptimizerPtr optimizer, ReduceLROnPlateauOptions options);
  std::string class_name() const override { return "ReduceLROnPlateau"; }
  bool monitors_metric() const override { return true; }
  void Step(std::optional<double> metric = std::nullopt) override;
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }

 private:
  bool IsBetter(double a, double best) const;

  ReduceLROnPlateauOptions o_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
};

}  // namespace lakerun::train
