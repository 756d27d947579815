// LearningRateMonitor: logs the learning rate (and optionally the momentum) of every optimizer's param groups
// (Lightning 2.6's callback, reference trainer.md §5).
//
//   Trainer t({.max_epochs = 3, .run = &run}, {std::make_shared<LearningRateMonitor>(LearningRateMonitorOptions{
//                                                  .logging_interval = "step", .log_momentum = true})});
//   -> lr-SGD, lr-SGD-momentum (one group); lr-Adam/pg1, lr-Adam/pg2 (two groups); lr-SGD-1 for a second SGD
//
// Keys: the scheduler config's `name` or lr-<OptimizerClass>; a second, third... optimizer of the same class gets
// -1, -2...; several param groups get /pg1, /pg2...; -momentum (momentum, or Adam's beta1) with log_momentum;
// -weight_decay with log_weight_decay. logging_interval "" (None) follows each scheduler's interval; optimizers
// without a scheduler are logged at every logging point. Step logging happens at train batch start when the step
// metrics are due (log_every_n_steps, or should_stop), epoch logging at train epoch start; both at the step axis
// value global_step, through TrainerState::log_metrics (the run on rank 0, logged and callback metrics).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lakerun/train/callback.h"

namespace lakerun::train {

struct LearningRateMonitorOptions {
  /// "" (None: each scheduler's interval), "step" or "epoch".
  std::string logging_interval = "";
  bool log_momentum = false;
  bool log_weight_decay = false;
};

class LearningRateMonitor : public Callback {
 public:
  /// Throws ConfigError for a logging_interval other than "", "step" or "epoch".
  explicit LearningRateMonitor(LearningRateMonitorOptions options = {});

  std::string state_key() const override { return "LearningRateMonitor"; }
  void OnTrainBatchStart(TrainerState& state) override;
  void OnTrainEpochStart(TrainerState& state) override;

  /// The values for `interval` ("step", "epoch" or "any") of the running fit's optimizers, by key.
  MetricMap ExtractStats(const TrainerState& state, const std::string& interval) const;

 private:
  LearningRateMonitorOptions options_;
};

}  // namespace lakerun::train
