#include "lakerun/train/lr_scheduler.h"

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/lbfgs.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <string>

#include "lakerun/base/error.h"

namespace lakerun::train {
namespace {

torch::optim::OptimizerParamGroup& Group(torch::optim::Optimizer& optimizer, size_t group) {
  LAKERUN_CHECK_AS(InvalidArgument, group < optimizer.param_groups().size(), "param group ", group,
                   " out of range: the optimizer has ", optimizer.param_groups().size());
  return optimizer.param_groups()[group];
}

// A per-group table {"0": v0, "1": v1, ...} and back.
std::map<std::string, double> ToTable(const std::vector<double>& values) {
  std::map<std::string, double> out;
  for (size_t i = 0; i < values.size(); ++i) out[std::to_string(i)] = values[i];
  return out;
}

std::vector<double> FromTable(const StateDict& state, const std::string& key, size_t groups) {
  const auto& table = state.GetTable(key);
  LAKERUN_CHECK_AS(CorruptDataError, table.size() == groups, "scheduler state '", key, "' holds ", table.size(),
                   " param groups, the optimizer has ", groups);
  std::vector<double> out(groups);
  for (size_t i = 0; i < groups; ++i) {
    auto it = table.find(std::to_string(i));
    LAKERUN_CHECK_AS(CorruptDataError, it != table.end(), "scheduler state '", key, "' lacks param group ", i);
    out[i] = it->second;
  }
  return out;
}

}  // namespace

double GetLearningRate(const torch::optim::Optimizer& optimizer, size_t group) {
  return Group(const_cast<torch::optim::Optimizer&>(optimizer), group).options().get_lr();
}

void SetLearningRate(torch::optim::Optimizer& optimizer, size_t group, double lr) {
  Group(optimizer, group).options().set_lr(lr);
}

std::optional<double> GetMomentum(const torch::optim::Optimizer& optimizer, size_t group) {
  auto& options = Group(const_cast<torch::optim::Optimizer&>(optimizer), group).options();
  if (auto* o = dynamic_cast<torch::optim::SGDOptions*>(&options)) return o->momentum();
  if (auto* o = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) return o->momentum();
  if (auto* o = dynamic_cast<torch::optim::AdamOptions*>(&options)) return std::get<0>(o->betas());
  if (auto* o = dynamic_cast<torch::optim::AdamWOptions*>(&options)) return std::get<0>(o->betas());
  return std::nullopt;
}

std::string OptimizerClassName(const torch::optim::Optimizer& optimizer) {
  const auto* p = &optimizer;
  if (dynamic_cast<const torch::optim::SGD*>(p)) return "SGD";
  if (dynamic_cast<const torch::optim::Adam*>(p)) return "Adam";
  if (dynamic_cast<const torch::optim::AdamW*>(p)) return "AdamW";
  if (dynamic_cast<const torch::optim::RMSprop*>(p)) return "RMSprop";
  if (dynamic_cast<const torch::optim::Adagrad*>(p)) return "Adagrad";
  if (dynamic_cast<const torch::optim::LBFGS*>(p)) return "LBFGS";
  return "Optimizer";
}

// ---------------------------------------------------------------------------------------------------------------
// LRScheduler

LRScheduler::LRScheduler(std::shared_ptr<torch::optim::Optimizer> optimizer) : optimizer_(std::move(optimizer)) {
  LAKERUN_CHECK_AS(InvalidArgument, optimizer_ != nullptr, "LR scheduler: the optimizer is null");
  for (size_t g = 0; g < num_groups(); ++g) base_lrs_.push_back(group_lr(g));
}

size_t LRScheduler::num_groups() const { return optimizer_->param_groups().size(); }

double LRScheduler::group_lr(size_t group) const { return GetLearningRate(*optimizer_, group); }

void LRScheduler::ApplyLrs(const std::vector<double>& lrs) {
  LAKERUN_INTERNAL_ASSERT(lrs.size() == num_groups(), "one lr per param group");
  for (size_t g = 0; g < lrs.size(); ++g) SetLearningRate(*optimizer_, g, lrs[g]);
  last_lr_.clear();
  for (size_t g = 0; g < num_groups(); ++g) last_lr_.push_back(group_lr(g));
}

StateDict LRScheduler::state_dict() const {
  StateDict s;
  s.Set("class", class_name());
  s.Set("last_epoch", last_epoch_);
  s.Set("_step_count", step_count_);
  s.Set("base_lrs", ToTable(base_lrs_));
  s.Set("_last_lr", ToTable(last_lr_));
  return s;
}

void LRScheduler::load_state_dict(const StateDict& state) {
  LAKERUN_CHECK_AS(CorruptDataError, state.GetString("class") == class_name(), "scheduler state of a ",
                   state.GetString("class"), " loaded into a ", class_name());
  last_epoch_ = state.GetInt("last_epoch");
  step_count_ = state.GetInt("_step_count");
  base_lrs_ = FromTable(state, "base_lrs", num_groups());
  last_lr_ = state.Has("_last_lr") && !state.GetTable("_last_lr").empty() ? FromTable(state, "_last_lr", num_groups())
                                                                          : std::vector<double>{};
  // The optimizer's own state (restored separately) holds the lrs too; writing them here keeps the two in step
  // when only the scheduler is restored.
  for (size_t g = 0; g < last_lr_.size(); ++g) SetLearningRate(*optimizer_, g, last_lr_[g]);
}

void LRScheduler::ScaleLearningRates(double factor) {
  for (double& lr : base_lrs_) lr *= factor;
  for (double& lr : last_lr_) lr *= factor;
  for (size_t g = 0; g < num_groups(); ++g) SetLearningRate(*optimizer_, g, group_lr(g) * factor);
}

void EpochLRScheduler::Step(std::optional<double> /*metric*/) {
  ++step_count_;
  ++last_epoch_;
  ApplyLrs(ComputeLrs());
}

void ValidateLRSchedulerConfig(const LRSchedulerConfig& config, size_t index) {
  LAKERUN_CHECK_AS(ConfigError, config.scheduler != nullptr, "lr scheduler ", index, " is null");
  LAKERUN_CHECK_AS(ConfigError, config.frequency >= 1, "lr scheduler ", index, " (", config.scheduler->class_name(),
                   "): frequency must be >= 1, got ", config.frequency);
  LAKERUN_CHECK_AS(ConfigError, !config.scheduler->monitors_metric() || !config.monitor.empty(),
                   "lr scheduler ", index, ": `ConfigureOptimizers` must include a monitor when a ",
                   config.scheduler->class_name(), " scheduler is used (LRSchedulerConfig::monitor)");
}

}  // namespace lakerun::train
