// LearningRateMonitor: logs the learning rate (and optionally the momentum) of every optimizer's param groups
// (Lightning 2.6's callback, reference trainer.md §5).
//
//   LearningRateMonitorOptions lr_options;
//   lr_options.logging_interval = Interval::kStep;
//   lr_options.log_momentum = true;
//   TrainerOptions options;
//   options.max_epochs = 3;
//   options.run = &run;
//   Trainer t(options, {std::make_shared<LearningRateMonitor>(lr_options)});
//   -> lr-SGD, lr-SGD-momentum (one group); lr-Adam/pg1, lr-Adam/pg2 (two groups); lr-SGD-1 for a second SGD
//
// Keys: the scheduler config's `name` or lr-<OptimizerClass>; a second, third... optimizer of the same class gets
// -1, -2...; several param groups get /pg1, /pg2...; -momentum (momentum, or Adam's beta1) with log_momentum;
// -weight_decay with log_weight_decay. logging_interval nullopt (None) follows each scheduler's interval; optimizers
// without a scheduler are logged at every logging point. Step logging happens at train batch start when the step
// metrics are due (log_every_n_steps, or should_stop), epoch logging at train epoch start; both at the step axis
// value global_step, through TrainerState::log_metrics (the run on rank 0, logged and callback metrics).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/train/callback.h"

namespace lakerun::train {

struct LearningRateMonitorOptions {
  /// nullopt (Lightning's None): each scheduler's interval; or every step, or every epoch.
  std::optional<Interval> logging_interval{};
  bool log_momentum = false;
  bool log_weight_decay = false;
};

class LearningRateMonitor : public Callback {
 public:
  explicit LearningRateMonitor(LearningRateMonitorOptions options = {});

  std::string state_key() const override { return "LearningRateMonitor"; }
  void OnTrainBatchStart(TrainerState& state) override;
  void OnTrainEpochStart(TrainerState& state) override;

  /// The values of the running fit's optimizers, by key: those whose scheduler steps at `interval` and those
  /// without a scheduler; every one for nullopt.
  MetricMap ExtractStats(const TrainerState& state, std::optional<Interval> interval) const;

 private:
  LearningRateMonitorOptions options_;
};

}  // namespace lakerun::train
