#include "lakerun/train/early_stopping.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"

namespace lakerun::train {
namespace {

std::string Fixed3(float v) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(3);
  out << v;
  return out.str();
}

std::string Plain(double v) {
  std::ostringstream out;
  out.precision(std::numeric_limits<float>::max_digits10);
  out << v;
  return out.str();
}

}  // namespace

EarlyStopping::EarlyStopping(EarlyStoppingOptions options) : options_(std::move(options)) {
  LAKERUN_CHECK_AS(ConfigError, !options_.monitor.empty(), "EarlyStopping: option 'monitor' must name a metric");
  LAKERUN_CHECK_AS(ConfigError, options_.patience >= 0, "EarlyStopping(monitor='", options_.monitor,
                   "'): option 'patience' must be >= 0, got ", options_.patience);
  max_mode_ = options_.mode == MonitorMode::kMax;
  // Lightning: min_delta *= 1 if monitor_op is gt else -1 (the user's sign is kept, not normalised).
  min_delta_ = static_cast<float>(max_mode_ ? options_.min_delta : -options_.min_delta);
  patience_ = options_.patience;
  check_on_train_epoch_end_ = options_.check_on_train_epoch_end;
  best_score_ = max_mode_ ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
}

std::string EarlyStopping::state_key() const {
  return StrCat("EarlyStopping{'monitor': ", PyRepr(options_.monitor), ", 'mode': ", PyRepr(ToString(options_.mode)),
                "}");
}

StateDict EarlyStopping::state_dict() const {
  StateDict s;
  s.Set("wait_count", wait_count_);
  s.Set("stopped_epoch", stopped_epoch_);
  s.Set("best_score", static_cast<double>(best_score_));
  s.Set("patience", patience_);
  s.Set("stopping_reason", static_cast<int64_t>(stopping_reason_));
  s.Set("stopping_reason_message", stopping_reason_message_);
  return s;
}

void EarlyStopping::load_state_dict(const StateDict& state) {
  wait_count_ = state.GetInt("wait_count");
  stopped_epoch_ = state.GetInt("stopped_epoch");
  best_score_ = static_cast<float>(state.GetDouble("best_score"));
  patience_ = state.GetInt("patience");
  // Older checkpoints have no stopping reason.
  if (state.Has("stopping_reason")) {
    const int64_t reason = state.GetInt("stopping_reason");
    LAKERUN_CHECK_AS(CorruptDataError, reason >= 0 && reason <= 4, state_key(),
                     ": checkpointed stopping_reason must be 0..4, got ", reason);
    stopping_reason_ = static_cast<StoppingReason>(reason);
  }
  if (state.Has("stopping_reason_message")) stopping_reason_message_ = state.GetString("stopping_reason_message");
}

void EarlyStopping::Setup(TrainerState& state) {
  if (!check_on_train_epoch_end_.has_value()) {
    check_on_train_epoch_end_ = state.val_check_interval == 1.0 && state.check_val_every_n_epoch == 1;
  }
}

bool EarlyStopping::ShouldSkip(const TrainerState& state) const {
  return state.fn != TrainerFn::kFitting || state.sanity_checking;
}

void EarlyStopping::OnTrainEpochEnd(TrainerState& state) {
  if (!check_on_train_epoch_end_.value_or(false) || ShouldSkip(state)) return;
  RunCheck(state);
}

void EarlyStopping::OnValidationEnd(TrainerState& state) {
  if (check_on_train_epoch_end_.value_or(false) || ShouldSkip(state)) return;
  RunCheck(state);
}

void EarlyStopping::RunCheck(TrainerState& state) {
  if (state.fast_dev_run > 0) return;
  auto it = state.callback_metrics.find(options_.monitor);
  if (it == state.callback_metrics.end()) {
    std::string keys;
    for (const auto& [k, v] : state.callback_metrics) keys += StrCat(keys.empty() ? "" : ", ", "'", k, "'");
    const std::string message =
        StrCat("EarlyStopping conditioned on metric '", options_.monitor, "' which is not available at epoch ",
               state.current_epoch, ", step ", state.global_step, "; available metrics: [", keys,
               "]. Monitor one of them or log '", options_.monitor, "'");
    LAKERUN_CHECK_AS(ConfigError, !options_.strict, message);
    if (options_.verbose) {
      LAKERUN_LOG(Warning) << message;
    }
    return;
  }
  bool should_stop = Evaluate(it->second);
  should_stop = state.Sync().Any(should_stop);
  state.should_stop = state.should_stop || should_stop;
  if (should_stop) stopped_epoch_ = state.current_epoch;
  if (should_stop && options_.verbose && !stopping_reason_message_.empty()) {
    LAKERUN_LOG(Info) << "[rank " << state.Sync().rank() << "] " << stopping_reason_message_;
  }
}

bool EarlyStopping::Evaluate(float current) {
  const std::string& m = options_.monitor;
  const char* order = max_mode_ ? ">" : "<";
  if (options_.check_finite && !std::isfinite(current)) {
    stopping_reason_ = StoppingReason::kNonFiniteMetric;
    stopping_reason_message_ = StrCat("Monitored metric ", m, " = ", Plain(current),
                                      " is not finite. Previous best value was ", Fixed3(best_score_),
                                      ". Signaling Trainer to stop.");
    return true;
  }
  if (options_.stopping_threshold.has_value() &&
      MonitorOp(current, static_cast<float>(*options_.stopping_threshold))) {
    stopping_reason_ = StoppingReason::kStoppingThreshold;
    stopping_reason_message_ = StrCat("Stopping threshold reached: ", m, " = ", Plain(current), " ", order, " ",
                                      Plain(*options_.stopping_threshold), ". Signaling Trainer to stop.");
    return true;
  }
  if (options_.divergence_threshold.has_value() &&
      MonitorOp(-current, -static_cast<float>(*options_.divergence_threshold))) {
    stopping_reason_ = StoppingReason::kDivergenceThreshold;
    stopping_reason_message_ = StrCat("Divergence threshold reached: ", m, " = ", Plain(current), " ", order, " ",
                                      Plain(*options_.divergence_threshold), ". Signaling Trainer to stop.");
    return true;
  }
  // float32 arithmetic, as Lightning's tensors: current - min_delta is rounded to float before comparing.
  const float shifted = current - min_delta_;
  if (MonitorOp(shifted, best_score_)) {
    best_score_ = current;
    wait_count_ = 0;
    return false;
  }
  ++wait_count_;
  if (wait_count_ >= patience_) {
    stopping_reason_ = StoppingReason::kPatienceExhausted;
    stopping_reason_message_ = StrCat("Monitored metric ", m, " did not improve in the last ", wait_count_,
                                      " records. Best score: ", Fixed3(best_score_), ". Signaling Trainer to stop.");
    return true;
  }
  return false;
}

}  // namespace lakerun::train
