// The formulas are transcribed from torch/optim/lr_scheduler.py (PyTorch 1.13): recursive get_lr(), Python's
// floating-point operation order kept so the results are bitwise equal.
#include "lakerun/train/lr_schedulers.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>

#include "lakerun/base/error.h"

namespace lakerun::train {
namespace {

// Python's a % b for b > 0 (the result takes the sign of b).
int64_t PyMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

}  // namespace

StepLR::StepLR(OptimizerPtr optimizer, StepLROptions options) : EpochLRScheduler(std::move(optimizer)), o_(options) {
  LAKERUN_CHECK_AS(ConfigError, o_.step_size >= 1, "StepLR: step_size must be >= 1, got ", o_.step_size);
  InitialStep();
}

std::vector<double> StepLR::ComputeLrs() {
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) {
    const bool keep = last_epoch_ == 0 || last_epoch_ % o_.step_size != 0;
    out.push_back(keep ? group_lr(g) : group_lr(g) * o_.gamma);
  }
  return out;
}

MultiStepLR::MultiStepLR(OptimizerPtr optimizer, MultiStepLROptions options)
    : EpochLRScheduler(std::move(optimizer)), o_(std::move(options)) {
  InitialStep();
}

std::vector<double> MultiStepLR::ComputeLrs() {
  const auto count = std::count(o_.milestones.begin(), o_.milestones.end(), last_epoch_);
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) {
    out.push_back(count == 0 ? group_lr(g) : group_lr(g) * std::pow(o_.gamma, static_cast<double>(count)));
  }
  return out;
}

ExponentialLR::ExponentialLR(OptimizerPtr optimizer, ExponentialLROptions options)
    : EpochLRScheduler(std::move(optimizer)), o_(options) {
  InitialStep();
}

std::vector<double> ExponentialLR::ComputeLrs() {
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) out.push_back(last_epoch_ == 0 ? group_lr(g) : group_lr(g) * o_.gamma);
  return out;
}

CosineAnnealingLR::CosineAnnealingLR(OptimizerPtr optimizer, CosineAnnealingLROptions options)
    : EpochLRScheduler(std::move(optimizer)), o_(options) {
  LAKERUN_CHECK_AS(ConfigError, o_.t_max >= 1, "CosineAnnealingLR: t_max must be >= 1, got ", o_.t_max);
  InitialStep();
}

std::vector<double> CosineAnnealingLR::ComputeLrs() {
  const double t_max = static_cast<double>(o_.t_max);
  const double e = static_cast<double>(last_epoch_);
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) {
    const double lr = group_lr(g);
    const double base = base_lrs_[g];
    if (last_epoch_ == 0) {
      out.push_back(lr);
    } else if (step_count_ == 1 && last_epoch_ > 0) {
      out.push_back(o_.eta_min + (base - o_.eta_min) * (1 + std::cos(e * M_PI / t_max)) / 2);
    } else if (PyMod(last_epoch_ - 1 - o_.t_max, 2 * o_.t_max) == 0) {
      out.push_back(lr + (base - o_.eta_min) * (1 - std::cos(M_PI / t_max)) / 2);
    } else {
      out.push_back((1 + std::cos(M_PI * e / t_max)) / (1 + std::cos(M_PI * (e - 1) / t_max)) * (lr - o_.eta_min) +
                    o_.eta_min);
    }
  }
  return out;
}

LambdaLR::LambdaLR(OptimizerPtr optimizer, LrLambda lr_lambda) : EpochLRScheduler(std::move(optimizer)) {
  LAKERUN_CHECK_AS(ConfigError, lr_lambda != nullptr, "LambdaLR: lr_lambda is empty");
  lambdas_.assign(num_groups(), lr_lambda);
  InitialStep();
}

LambdaLR::LambdaLR(OptimizerPtr optimizer, std::vector<LrLambda> lr_lambdas)
    : EpochLRScheduler(std::move(optimizer)), lambdas_(std::move(lr_lambdas)) {
  LAKERUN_CHECK_AS(ConfigError, lambdas_.size() == num_groups(), "LambdaLR: expected ", num_groups(),
                   " lr_lambdas, but got ", lambdas_.size());
  for (size_t i = 0; i < lambdas_.size(); ++i) {
    LAKERUN_CHECK_AS(ConfigError, lambdas_[i] != nullptr, "LambdaLR: lr_lambda ", i, " is empty");
  }
  InitialStep();
}

std::vector<double> LambdaLR::ComputeLrs() {
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) out.push_back(base_lrs_[g] * lambdas_[g](last_epoch_));
  return out;
}

LinearLR::LinearLR(OptimizerPtr optimizer, LinearLROptions options)
    : EpochLRScheduler(std::move(optimizer)), o_(options) {
  LAKERUN_CHECK_AS(ConfigError, o_.start_factor >= 0 && o_.start_factor <= 1,
                   "LinearLR: start_factor must be in [0, 1], got ", o_.start_factor);
  LAKERUN_CHECK_AS(ConfigError, o_.end_factor >= 0 && o_.end_factor <= 1,
                   "LinearLR: end_factor must be in [0, 1], got ", o_.end_factor);
  LAKERUN_CHECK_AS(ConfigError, o_.total_iters >= 1, "LinearLR: total_iters must be >= 1, got ", o_.total_iters);
  InitialStep();
}

std::vector<double> LinearLR::ComputeLrs() {
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) {
    const double lr = group_lr(g);
    if (last_epoch_ == 0) {
      out.push_back(lr * o_.start_factor);
    } else if (last_epoch_ > o_.total_iters) {
      out.push_back(lr);
    } else {
      out.push_back(lr * (1. + (o_.end_factor - o_.start_factor) /
                                   (static_cast<double>(o_.total_iters) * o_.start_factor +
                                    static_cast<double>(last_epoch_ - 1) * (o_.end_factor - o_.start_factor))));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// OneCycleLR

OneCycleLR::OneCycleLR(OptimizerPtr optimizer, OneCycleLROptions options)
    : EpochLRScheduler(std::move(optimizer)), o_(std::move(options)) {
  if (o_.total_steps > 0) {
    total_steps_ = o_.total_steps;
  } else {
    LAKERUN_CHECK_AS(ConfigError, o_.total_steps == 0, "OneCycleLR: total_steps must be positive, got ",
                     o_.total_steps);
    LAKERUN_CHECK_AS(ConfigError, o_.epochs > 0, "OneCycleLR: set total_steps or epochs and steps_per_epoch; epochs "
                     "must be positive, got ", o_.epochs);
    LAKERUN_CHECK_AS(ConfigError, o_.steps_per_epoch > 0, "OneCycleLR: steps_per_epoch must be positive, got ",
                     o_.steps_per_epoch);
    total_steps_ = o_.epochs * o_.steps_per_epoch;
  }
  LAKERUN_CHECK_AS(ConfigError, o_.pct_start >= 0 && o_.pct_start <= 1,
                   "OneCycleLR: pct_start must be a float in [0, 1], got ", o_.pct_start);
  const double total = static_cast<double>(total_steps_);
  if (o_.three_phase) {
    phases_ = {{o_.pct_start * total - 1, 0, 1, 0, 1},
               {2 * o_.pct_start * total - 2, 1, 0, 1, 0},
               {total - 1, 0, 2, 0, 0}};
  } else {
    phases_ = {{o_.pct_start * total - 1, 0, 1, 0, 1}, {total - 1, 1, 2, 1, 0}};
  }
  for (size_t g = 0; g < num_groups(); ++g) {
    initial_lr_.push_back(o_.max_lr / o_.div_factor);
    max_lr_.push_back(o_.max_lr);
    min_lr_.push_back(initial_lr_.back() / o_.final_div_factor);
  }
  base_lrs_ = initial_lr_;
  if (o_.cycle_momentum) {
    LAKERUN_CHECK_AS(ConfigError, GetMomentum(*optimizer_, 0).has_value(), "OneCycleLR: the ",
                     OptimizerClassName(*optimizer_), " optimizer must support momentum with cycle_momentum");
    for (size_t g = 0; g < num_groups(); ++g) SetMomentum(g, o_.max_momentum);
  }
  InitialStep();
}

double OneCycleLR::Anneal(double start, double end, double pct) const {
  if (o_.anneal_strategy == AnnealStrategy::kCos) {
    const double cos_out = std::cos(M_PI * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

void OneCycleLR::SetMomentum(size_t group, double momentum) {
  auto& options = optimizer_->param_groups()[group].options();
  if (auto* o = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
    o->momentum(momentum);
  } else if (auto* o = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) {
    o->momentum(momentum);
  } else if (auto* o = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
    o->betas(std::make_tuple(momentum, std::get<1>(o->betas())));
  } else if (auto* o = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
    o->betas(std::make_tuple(momentum, std::get<1>(o->betas())));
  }
}

void OneCycleLR::Step(std::optional<double> metric) {
  LAKERUN_CHECK_AS(InvalidArgument, last_epoch_ + 1 <= total_steps_, "OneCycleLR: tried to step ", last_epoch_ + 2,
                   " times; total_steps is ", total_steps_);
  EpochLRScheduler::Step(metric);
}

void OneCycleLR::ScaleLearningRates(double factor) {
  EpochLRScheduler::ScaleLearningRates(factor);
  for (auto* v : {&initial_lr_, &max_lr_, &min_lr_}) {
    for (double& lr : *v) lr *= factor;
  }
}

std::vector<double> OneCycleLR::ComputeLrs() {
  const double step = static_cast<double>(last_epoch_);
  std::vector<double> out;
  for (size_t g = 0; g < num_groups(); ++g) {
    const double lrs[3] = {initial_lr_[g], max_lr_[g], min_lr_[g]};
    const double momenta[2] = {o_.max_momentum, o_.base_momentum};
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& p = phases_[i];
      if (step <= p.end_step || i + 1 == phases_.size()) {
        const double pct = (step - start_step) / (p.end_step - start_step);
        out.push_back(Anneal(lrs[p.start_lr], lrs[p.end_lr], pct));
        if (o_.cycle_momentum) SetMomentum(g, Anneal(momenta[p.start_momentum], momenta[p.end_momentum], pct));
        break;
      }
      start_step = p.end_step;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// ReduceLROnPlateau

ReduceLROnPlateau::ReduceLROnPlateau(OptimizerPtr optimizer, ReduceLROnPlateauOptions options)
    : LRScheduler(std::move(optimizer)), o_(std::move(options)) {
  LAKERUN_CHECK_AS(ConfigError, o_.factor < 1.0, "ReduceLROnPlateau: factor must be < 1.0, got ", o_.factor);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  best_ = o_.mode == MonitorMode::kMin ? kInf : -kInf;
  last_epoch_ = 0;
}

bool ReduceLROnPlateau::IsBetter(double a, double best) const {
  const bool relative = o_.threshold_mode == ThresholdMode::kRel;
  if (o_.mode == MonitorMode::kMin && relative) return a < best * (1. - o_.threshold);
  if (o_.mode == MonitorMode::kMin) return a < best - o_.threshold;
  if (relative) return a > best * (o_.threshold + 1.);
  return a > best + o_.threshold;
}

void ReduceLROnPlateau::Step(std::optional<double> metric) {
  LAKERUN_CHECK_AS(InvalidArgument, metric.has_value(), "ReduceLROnPlateau::Step needs the monitored metric");
  const double current = *metric;
  ++last_epoch_;
  if (IsBetter(current, best_)) {
    best_ = current;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > o_.patience) {
    for (size_t g = 0; g < num_groups(); ++g) {
      const double old_lr = group_lr(g);
      const double new_lr = std::max(old_lr * o_.factor, o_.min_lr);
      if (old_lr - new_lr > o_.eps) SetLearningRate(*optimizer_, g, new_lr);
    }
    cooldown_counter_ = o_.cooldown;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (size_t g = 0; g < num_groups(); ++g) last_lr_.push_back(group_lr(g));
}

StateDict ReduceLROnPlateau::state_dict() const {
  StateDict s = LRScheduler::state_dict();
  s.Set("best", best_);
  s.Set("num_bad_epochs", num_bad_epochs_);
  s.Set("cooldown_counter", cooldown_counter_);
  return s;
}

void ReduceLROnPlateau::load_state_dict(const StateDict& state) {
  LRScheduler::load_state_dict(state);
  best_ = state.GetDouble("best");
  num_bad_epochs_ = state.GetInt("num_bad_epochs");
  cooldown_counter_ = state.GetInt("cooldown_counter");
}

}  // namespace lakerun::train
