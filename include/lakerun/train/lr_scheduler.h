// Learning-rate schedulers with PyTorch 1.13's formulas, and Lightning's scheduler configuration.
//
//   auto sgd = std::make_shared<torch::optim::SGD>(parameters(), 0.1);
//   Optimizers out{sgd};
//   StepLROptions step;
//   step.step_size = 30;
//   LRSchedulerConfig config;
//   config.scheduler = std::make_shared<StepLR>(sgd, step);
//   config.interval = Interval::kEpoch;
//   out.lr_schedulers.push_back(config);
//   return out;                                                   // from Module::ConfigureOptimizers()
//
// A scheduler writes the learning rate of every param group of its optimizer. As in PyTorch, constructing one takes
// its initial step (last_epoch 0), and Step() uses the recursive ("chainable") form of get_lr(), so the values match
// `torch.optim.lr_scheduler` bit for bit when stepped without an epoch argument. base_lrs are the groups' learning
// rates at construction (PyTorch reads a group's `initial_lr`, which libtorch param groups do not have).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/train/callback.h"

namespace torch::optim {
class Optimizer;
}

namespace lakerun::train {

/// The learning rate of param group `group` of `optimizer`, and its setter.
double GetLearningRate(const torch::optim::Optimizer& optimizer, size_t group);
void SetLearningRate(torch::optim::Optimizer& optimizer, size_t group, double lr);
/// The momentum of a param group (`momentum`, or `betas[0]` for Adam/AdamW), nullopt for an optimizer without one.
std::optional<double> GetMomentum(const torch::optim::Optimizer& optimizer, size_t group);
/// The optimizer's class name as PyTorch spells it ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS"),
/// "Optimizer" for any other.
std::string OptimizerClassName(const torch::optim::Optimizer& optimizer);

/// Base class of every scheduler.
class LRScheduler {
 public:
  /// Throws InvalidArgument for a null optimizer.
  explicit LRScheduler(std::shared_ptr<torch::optim::Optimizer> optimizer);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances one interval. `metric` is read only by schedulers that monitor one (ReduceLROnPlateau), which throw
  /// InvalidArgument without it.
  virtual void Step(std::optional<double> metric = std::nullopt) = 0;
  /// Whether Step() needs the monitored metric (Lightning's `reduce_on_plateau`).
  virtual bool monitors_metric() const { return false; }
  /// PyTorch's class name ("StepLR"), used in messages.
  virtual std::string class_name() const = 0;

  /// Everything needed to continue the schedule (what PyTorch's state_dict() holds, lambdas excepted).
  virtual StateDict state_dict() const;
  /// Restores state_dict() and writes last_lr() into the optimizer's groups. Throws CorruptDataError naming the
  /// key that is missing or whose group count differs.
  virtual void load_state_dict(const StateDict& state);

  /// Multiplies every learning rate it sets (base lrs, the last lrs and the optimizer's groups) by `factor`
  /// (TrainerOptions::scale_lr).
  virtual void ScaleLearningRates(double factor);

  /// The learning rates the last step set, one per param group (PyTorch's get_last_lr()).
  const std::vector<double>& last_lr() const { return last_lr_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  torch::optim::Optimizer& optimizer() const { return *optimizer_; }
  const std::shared_ptr<torch::optim::Optimizer>& shared_optimizer() const { return optimizer_; }

 protected:
  size_t num_groups() const;
  double group_lr(size_t group) const;
  void ApplyLrs(const std::vector<double>& lrs);

  std::shared_ptr<torch::optim::Optimizer> optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
};

/// PyTorch's _LRScheduler: Step() increments last_epoch and applies ComputeLrs(). Subclasses call InitialStep() at
/// the end of their constructor (PyTorch's _initial_step()).
class EpochLRScheduler : public LRScheduler {
 public:
  using LRScheduler::LRScheduler;
  void Step(std::optional<double> metric = std::nullopt) override;

 protected:
  void InitialStep() { Step(); }
  /// The chainable get_lr() at last_epoch_ (already incremented).
  virtual std::vector<double> ComputeLrs() = 0;
};

/// Lightning's lr scheduler config (the dict `configure_optimizers` may return), keys in its order.
struct LRSchedulerConfig {
  std::shared_ptr<LRScheduler> scheduler = nullptr;
  /// kEpoch: at the end of each training epoch; kStep: after each optimizer step.
  Interval interval = Interval::kEpoch;
  /// Steps the scheduler every `frequency` epochs or batches.
  int64_t frequency = 1;
  /// The callback metric a monitoring scheduler (ReduceLROnPlateau) reads; required for one.
  std::string monitor = "";
  /// A missing monitor is an error (naming it and the available metrics); false: a warning, the step is skipped.
  bool strict = true;
  /// The LearningRateMonitor key for it ("" -> lr-<OptimizerClass>).
  std::string name = "";
};

/// Throws ConfigError naming scheduler `index` for a null scheduler, a bad frequency, or a monitoring scheduler
/// without a monitor.
void ValidateLRSchedulerConfig(const LRSchedulerConfig& config, size_t index);

}  // namespace lakerun::train
