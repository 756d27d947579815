#include "lakerun/train/lr_monitor.h"

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>

#include "lakerun/base/error.h"
#include "lakerun/train/lr_scheduler.h"

namespace lakerun::train {
namespace {

std::optional<double> WeightDecay(torch::optim::Optimizer& optimizer, size_t group) {
  auto& options = optimizer.param_groups()[group].options();
  if (auto* o = dynamic_cast<torch::optim::SGDOptions*>(&options)) return o->weight_decay();
  if (auto* o = dynamic_cast<torch::optim::AdamOptions*>(&options)) return o->weight_decay();
  if (auto* o = dynamic_cast<torch::optim::AdamWOptions*>(&options)) return o->weight_decay();
  if (auto* o = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) return o->weight_decay();
  if (auto* o = dynamic_cast<torch::optim::AdagradOptions*>(&options)) return o->weight_decay();
  return std::nullopt;
}

// Lightning's _check_duplicates_and_update_name: the per-group keys of one optimizer.
std::vector<std::string> GroupNames(torch::optim::Optimizer& optimizer, const std::string& name, bool named_config,
                                    std::map<std::string, int>& seen_types) {
  const std::string cls = OptimizerClassName(optimizer);
  if (!named_config) ++seen_types[cls];
  std::string prefixed = name;
  if (auto it = seen_types.find(cls); it != seen_types.end() && it->second > 1) {
    prefixed += "-" + std::to_string(it->second - 1);
  }
  const size_t groups = optimizer.param_groups().size();
  std::vector<std::string> out;
  for (size_t g = 0; g < groups; ++g) out.push_back(groups > 1 ? prefixed + "/pg" + std::to_string(g + 1) : prefixed);
  return out;
}

}  // namespace

LearningRateMonitor::LearningRateMonitor(LearningRateMonitorOptions options) : options_(std::move(options)) {}

MetricMap LearningRateMonitor::ExtractStats(const TrainerState& state, std::optional<Interval> interval) const {
  MetricMap out;
  if (state.optimizers == nullptr) return out;
  auto add = [&](torch::optim::Optimizer& opt, const std::vector<std::string>& names) {
    for (size_t g = 0; g < names.size(); ++g) {
      out[names[g]] = static_cast<float>(GetLearningRate(opt, g));
      if (options_.log_momentum) out[names[g] + "-momentum"] = static_cast<float>(GetMomentum(opt, g).value_or(0.0));
      if (options_.log_weight_decay) {
        out[names[g] + "-weight_decay"] = static_cast<float>(WeightDecay(opt, g).value_or(0.0));
      }
    }
  };
  std::map<std::string, int> seen_types;
  std::vector<const torch::optim::Optimizer*> seen;
  if (state.lr_scheduler_configs != nullptr) {
    for (const auto& c : *state.lr_scheduler_configs) {
      torch::optim::Optimizer& opt = c.scheduler->optimizer();
      seen.push_back(&opt);
      const bool named = !c.name.empty();
      const auto names = GroupNames(opt, named ? c.name : "lr-" + OptimizerClassName(opt), named, seen_types);
      if (!interval.has_value() || *interval == c.interval) add(opt, names);
    }
  }
  for (const auto& opt : *state.optimizers) {
    if (std::find(seen.begin(), seen.end(), opt.get()) != seen.end()) continue;
    seen.push_back(opt.get());
    add(*opt, GroupNames(*opt, "lr-" + OptimizerClassName(*opt), false, seen_types));
  }
  return out;
}

void LearningRateMonitor::OnTrainBatchStart(TrainerState& state) {
  const bool due = (state.global_step + 1) % state.log_every_n_steps == 0 || state.should_stop;
  if (!due || options_.logging_interval == Interval::kEpoch || !state.log_metrics) return;
  const MetricMap stats =
      ExtractStats(state, options_.logging_interval.has_value() ? std::nullopt : std::optional(Interval::kStep));
  if (!stats.empty()) state.log_metrics(stats);
}

void LearningRateMonitor::OnTrainEpochStart(TrainerState& state) {
  if (options_.logging_interval == Interval::kStep || !state.log_metrics) return;
  const MetricMap stats =
      ExtractStats(state, options_.logging_interval.has_value() ? std::nullopt : std::optional(Interval::kEpoch));
  if (!stats.empty()) state.log_metrics(stats);
}

}  // namespace lakerun::train
