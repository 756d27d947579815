#include "lakerun/train/logged_metrics.h"

#include <algorithm>

#include "lakerun/base/error.h"
#include "lakerun/dist/collectives.h"
#include "lakerun/dist/init.h"

namespace lakerun::train {
namespace {

const char* HookName(LogHook hook) {
  switch (hook) {
    case LogHook::kTrainingStep: return "training_step";
    case LogHook::kValidationStep: return "validation_step";
    case LogHook::kTestStep: return "test_step";
    default: return "an epoch-end hook";
  }
}

const char* FxName(ReduceFx fx) {
  switch (fx) {
    case ReduceFx::kMean: return "mean";
    case ReduceFx::kSum: return "sum";
    case ReduceFx::kMax: return "max";
    default: return "min";
  }
}

class DistMetricSync final : public MetricSync {
 public:
  explicit DistMetricSync(dist::Context& ctx) : ctx_(ctx) {}
  int world_size() const override { return ctx_.world_size(); }
  double Reduce(double value, ReduceFx op) override {
    dist::ReduceOp d = op == ReduceFx::kMean  ? dist::ReduceOp::kMean
                       : op == ReduceFx::kSum ? dist::ReduceOp::kSum
                       : op == ReduceFx::kMax ? dist::ReduceOp::kMax
                                              : dist::ReduceOp::kMin;
    return dist::AllReduceDouble(ctx_, value, d);
  }

 private:
  dist::Context& ctx_;
};

}  // namespace

std::unique_ptr<MetricSync> NewDistMetricSync(dist::Context& ctx) { return std::make_unique<DistMetricSync>(ctx); }

double LoggedMetrics::SyncValue(double v, ReduceFx op) const {
  if (sync_ == nullptr || sync_->world_size() <= 1) return v;
  return sync_->Reduce(v, op);
}

void LoggedMetrics::Log(LogHook hook, const std::string& name, float value, const LogOptions& options,
                        int64_t inferred_batch_size) {
  const bool step_hook = hook == LogHook::kTrainingStep;
  const bool on_step = options.on_step.value_or(step_hook);
  const bool on_epoch = options.on_epoch.value_or(!step_hook);
  LAKERUN_CHECK(on_step || on_epoch, "log('", name, "') in ", HookName(hook),
                ": on_step=false and on_epoch=false would log nothing");
  LAKERUN_CHECK(!(on_step && hook == LogHook::kEpochEnd), "log('", name,
                "') in an epoch-end hook: on_step=true is not allowed there");
  const int64_t bs = options.batch_size.value_or(inferred_batch_size);
  LAKERUN_CHECK(bs > 0, "log('", name, "') in ", HookName(hook), ": batch_size must be positive, got ", bs);
  const bool both = on_step && on_epoch;

  if (on_step) {
    // Step values are reduced at once with sync_dist (reduce_fx across ranks).
    const float v = options.sync_dist ? static_cast<float>(SyncValue(value, options.reduce_fx)) : value;
    if (options.logger) step_logger_[both ? name + "_step" : name] = v;
    callback_metrics_[name] = v;
    if (both) callback_metrics_[name + "_step"] = v;
    if (options.prog_bar) progress_bar_metrics_[both ? name + "_step" : name] = v;
  }
  if (on_epoch) {
    auto [it, fresh] = epoch_.try_emplace(name);
    Accumulator& a = it->second;
    if (fresh) {
      a.fx = options.reduce_fx;
    } else {
      LAKERUN_CHECK(a.fx == options.reduce_fx, "log('", name, "') in ", HookName(hook), ": reduce_fx '",
                    FxName(options.reduce_fx), "' differs from '", FxName(a.fx), "' used earlier this epoch");
    }
    a.sync_dist = options.sync_dist;
    a.both = both;
    a.prog_bar = options.prog_bar;
    a.logger = options.logger;
    switch (a.fx) {
      case ReduceFx::kMean:
        a.value += value * static_cast<float>(bs);  // float32, as Lightning's `value.mean() * batch_size`
        a.batch_sizes += bs;
        break;
      case ReduceFx::kSum: a.value = a.any ? a.value + value : value; break;
      case ReduceFx::kMax: a.value = a.any ? std::max(a.value, value) : value; break;
      case ReduceFx::kMin: a.value = a.any ? std::min(a.value, value) : value; break;
    }
    a.any = true;
  }
}

MetricMap LoggedMetrics::EndStep() {
  MetricMap out;
  out.swap(step_logger_);
  return out;
}

MetricMap LoggedMetrics::EndEpoch() {
  MetricMap out;
  // std::map iterates keys in the same order on every rank, so the all-reduces pair up.
  for (auto& [name, a] : epoch_) {
    float v = a.value;
    if (a.fx == ReduceFx::kMean) {
      float sum = a.value;
      double count = static_cast<double>(a.batch_sizes);
      if (a.sync_dist) {
        sum = static_cast<float>(SyncValue(sum, ReduceFx::kSum));
        count = SyncValue(count, ReduceFx::kSum);
      }
      v = sum / static_cast<float>(count);
    } else if (a.sync_dist) {
      v = static_cast<float>(SyncValue(v, a.fx));
    }
    const std::string key = a.both ? name + "_epoch" : name;
    if (a.logger) out[key] = v;
    callback_metrics_[name] = v;
    if (a.both) callback_metrics_[key] = v;
    if (a.prog_bar) progress_bar_metrics_[key] = v;
  }
  epoch_.clear();
  return out;
}

void LoggedMetrics::Reset() {
  epoch_.clear();
  step_logger_.clear();
  callback_metrics_.clear();
  progress_bar_metrics_.clear();
}

}  // namespace lakerun::train
