// What Module::log() records, and how it becomes step and epoch metrics (Lightning 2.6 `self.log`, reference §4).
//
//   LoggedMetrics m;
//   m.Log(LogHook::kTrainingStep, "loss", 0.5f, {}, /*batch_size=*/32);   // on_step by default
//   LogOptions synced;
//   synced.sync_dist = true;
//   m.Log(LogHook::kValidationStep, "val_loss", 0.7f, synced, 16);     // on_epoch by default
//   MetricMap step = m.EndStep();     // this step's values for loggers
//   MetricMap epoch = m.EndEpoch();   // batch-size-weighted means (reduced across ranks with sync_dist)
//   m.callback_metrics();             // the latest value of every key, what EarlyStopping/ModelCheckpoint read
//
// Keys: on_step only -> `name`; on_epoch only -> `name`; both -> `name_step` and `name_epoch` for loggers, plus the
// bare `name` in callback metrics. Epoch `mean` is Σ v·bs / Σ bs in float32 (the sums are all-reduced first with
// sync_dist); `sum`, `max`, `min` likewise. Without sync_dist every rank keeps its own values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "lakerun/train/callback.h"

namespace lakerun::train {

enum class ReduceFx { kMean, kSum, kMax, kMin };

/// Where log() was called from; decides the on_step / on_epoch defaults.
enum class LogHook { kTrainingStep, kValidationStep, kTestStep, kEpochEnd };

/// Lightning's self.log arguments, in its order (C++20 designated initializers may follow its keywords).
struct LogOptions {
  bool prog_bar = false;
  /// Send to loggers (false: only callback metrics and the progress bar see it).
  bool logger = true;
  /// nullopt: the hook's default (training_step: step only; validation/test steps and epoch ends: epoch only).
  std::optional<bool> on_step{};
  std::optional<bool> on_epoch{};
  ReduceFx reduce_fx = ReduceFx::kMean;
  /// Reduce across ranks (step values at once, epoch sums at epoch end).
  bool sync_dist = false;
  /// nullopt: the batch size the Trainer inferred.
  std::optional<int64_t> batch_size{};
};

/// How metric values are reduced across ranks.
class MetricSync {
 public:
  virtual ~MetricSync() = default;
  virtual int world_size() const = 0;
  /// `value` reduced over all ranks; kMean divides the sum by the world size.
  virtual double Reduce(double value, ReduceFx op) = 0;
};

/// A single process: values are returned unchanged.
class LocalMetricSync final : public MetricSync {
 public:
  int world_size() const override { return 1; }
  double Reduce(double value, ReduceFx op) override { return value; }
};

/// All-reduces over a lakerun::dist context (bounded by ctx.timeout()). `ctx` must outlive the result.
std::unique_ptr<MetricSync> NewDistMetricSync(dist::Context& ctx);

class LoggedMetrics {
 public:
  /// `sync` may be nullptr (one process); it must outlive this object.
  explicit LoggedMetrics(MetricSync* sync = nullptr) : sync_(sync) {}

  /// Records one value. Throws InvalidArgument naming the metric for on_step=on_epoch=false, on_step at an epoch
  /// end, a non-positive batch size, or a reduce_fx that differs from earlier calls in the same epoch.
  void Log(LogHook hook, const std::string& name, float value, const LogOptions& options,
           int64_t inferred_batch_size);

  /// Ends a step: returns its logger metrics (`name` or `name_step`) and forgets them.
  MetricMap EndStep();
  /// Ends an epoch: reduces every on_epoch metric (across ranks with sync_dist), returns the logger metrics
  /// (`name` or `name_epoch`) and starts a new epoch.
  MetricMap EndEpoch();

  const MetricMap& callback_metrics() const { return callback_metrics_; }
  const MetricMap& progress_bar_metrics() const { return progress_bar_metrics_; }
  /// Forgets everything (after the sanity check: its metrics are discarded).
  void Reset();

 private:
  struct Accumulator {
    ReduceFx fx = ReduceFx::kMean;
    bool sync_dist = false;
    bool both = false;  // on_step and on_epoch
    bool prog_bar = false;
    bool logger = true;
    float value = 0.0f;       // mean: Σ v·bs in float32; sum/max/min: the running result
    int64_t batch_sizes = 0;  // Σ bs (mean)
    bool any = false;
  };
  double SyncValue(double v, ReduceFx op) const;

  MetricSync* sync_;
  std::map<std::string, Accumulator> epoch_;
  MetricMap step_logger_;
  MetricMap callback_metrics_;
  MetricMap progress_bar_metrics_;
};

}  // namespace lakerun::train
