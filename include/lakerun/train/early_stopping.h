// EarlyStopping: stop fitting when a monitored metric stops improving (PyTorch Lightning 2.6 semantics).
//
//   EarlyStoppingOptions options;
//   options.monitor = "val_loss";
//   options.min_delta = 0.01;
//   options.patience = 10;
//   options.stopping_threshold = 0.55;
//   EarlyStopping stop(options);
//
// Per check, first match wins (docs/trainer.md):
//   1. check_finite and the value is NaN/Inf              -> stop (kNonFiniteMetric)
//   2. stopping_threshold reached (strict)                -> stop now, best/wait untouched (kStoppingThreshold)
//   3. divergence_threshold passed (strict)               -> stop (kDivergenceThreshold)
//   4. monitor_op(current - min_delta, best)              -> best = current, wait = 0
//   5. otherwise wait += 1; wait >= patience              -> stop (kPatienceExhausted)
// min_delta is stored with Lightning's sign (negated in min mode), so an improvement of exactly min_delta does not
// count. Arithmetic is float32. The stop decision is OR-reduced over ranks: if any rank wants to stop, all stop.
#pragma once

#include <optional>
#include <string>

#include "lakerun/train/callback.h"

namespace lakerun::train {

enum class StoppingReason : int { kNotStopped = 0, kStoppingThreshold = 1, kDivergenceThreshold = 2,
                                  kPatienceExhausted = 3, kNonFiniteMetric = 4 };

/// Lightning's EarlyStopping arguments, in its order (C++20 designated initializers may follow Lightning's keywords).
struct EarlyStoppingOptions {
  std::string monitor{};
  double min_delta = 0.0;
  int64_t patience = 3;
  bool verbose = false;
  MonitorMode mode = MonitorMode::kMin;
  /// A monitor missing from the metrics is an error (listing the available keys); false: the check is skipped.
  bool strict = true;
  bool check_finite = true;
  std::optional<double> stopping_threshold{};
  std::optional<double> divergence_threshold{};
  /// nullopt: decided in Setup() (true when validation runs every epoch, at the end of the train epoch).
  std::optional<bool> check_on_train_epoch_end{};
};

class EarlyStopping : public Callback {
 public:
  /// Throws ConfigError for an empty monitor or a negative patience.
  explicit EarlyStopping(EarlyStoppingOptions options);

  std::string state_key() const override;
  std::string monitor() const override { return options_.monitor; }
  MonitorMode mode() const override { return options_.mode; }
  /// {wait_count, stopped_epoch, best_score, patience, stopping_reason, stopping_reason_message}
  StateDict state_dict() const override;
  /// Restores the state, patience included (the checkpoint's patience wins over the constructor's).
  void load_state_dict(const StateDict& state) override;

  void Setup(TrainerState& state) override;
  void OnTrainEpochEnd(TrainerState& state) override;
  void OnValidationEnd(TrainerState& state) override;

  /// One check against state.callback_metrics, regardless of the hook (what both hooks run when due).
  void RunCheck(TrainerState& state);

  float best_score() const { return best_score_; }
  int64_t wait_count() const { return wait_count_; }
  int64_t patience() const { return patience_; }
  int64_t stopped_epoch() const { return stopped_epoch_; }
  StoppingReason stopping_reason() const { return stopping_reason_; }
  const std::string& stopping_reason_message() const { return stopping_reason_message_; }
  /// The value Setup() resolved (or the option); nullopt before Setup() when the option is unset.
  std::optional<bool> check_on_train_epoch_end() const { return check_on_train_epoch_end_; }
  /// min_delta as stored (negative in min mode).
  float signed_min_delta() const { return min_delta_; }

 private:
  bool MonitorOp(float a, float b) const { return max_mode_ ? a > b : a < b; }
  bool ShouldSkip(const TrainerState& state) const;
  // Evaluates one value; returns whether this rank wants to stop and sets reason/message.
  bool Evaluate(float current);

  EarlyStoppingOptions options_;
  bool max_mode_ = false;
  float min_delta_ = 0.0f;
  int64_t patience_ = 0;
  std::optional<bool> check_on_train_epoch_end_;
  float best_score_;
  int64_t wait_count_ = 0;
  int64_t stopped_epoch_ = 0;
  StoppingReason stopping_reason_ = StoppingReason::kNotStopped;
  std::string stopping_reason_message_;
};

}  // namespace lakerun::train
