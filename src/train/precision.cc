#include "train/precision.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/Context.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "lakerun/base/error.h"
#include "train/autocast_compat.h"

namespace lakerun::train {

// ---------------------------------------------------------------------------------------------------------------
// GradScaler

GradScaler::GradScaler(GradScalerOptions options) : o_(options), scale_(static_cast<float>(options.init_scale)) {
  LAKERUN_CHECK_AS(ConfigError, o_.growth_factor > 1.0, "GradScaler: growth_factor must be > 1, got ",
                   o_.growth_factor);
  LAKERUN_CHECK_AS(ConfigError, o_.backoff_factor < 1.0, "GradScaler: backoff_factor must be < 1, got ",
                   o_.backoff_factor);
  LAKERUN_CHECK_AS(ConfigError, o_.growth_interval >= 1, "GradScaler: growth_interval must be >= 1, got ",
                   o_.growth_interval);
}

at::Tensor GradScaler::Scale(const at::Tensor& loss) const { return loss * scale_; }

void GradScaler::Unscale(torch::optim::Optimizer& optimizer) {
  for (const auto& [opt, inf] : unscaled_) {
    if (opt == &optimizer) return;  // already unscaled in this step
  }
  // PyTorch computes the reciprocal in float64 and multiplies the float gradients by it as a float32 tensor.
  const float inv_scale = static_cast<float>(1.0 / static_cast<double>(scale_));
  // CUDA gradients go through PyTorch's fused check-and-unscale kernel, one launch per (device, dtype) as
  // torch.amp.GradScaler groups them; others are checked one by one. Either way the findings stay on their device
  // until one read per group at the end: a GPU is synchronized once per optimizer step, not once per parameter.
  std::map<std::pair<c10::DeviceIndex, at::ScalarType>, std::vector<at::Tensor>> cuda_grads;
  std::vector<at::Tensor> findings;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      at::Tensor g = p.mutable_grad();
      if (g.is_cuda()) {
        cuda_grads[{g.device().index(), g.scalar_type()}].push_back(g);
      } else {
        findings.push_back(at::logical_not(at::isfinite(g).all()));
        g.mul_(inv_scale);
      }
    }
  }
  for (auto& [key, grads] : cuda_grads) {
    const auto options = at::TensorOptions().dtype(at::kFloat).device(c10::Device(c10::kCUDA, key.first));
    at::Tensor found = at::zeros({1}, options);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found, at::full({1}, inv_scale, options));
    findings.push_back(found);
  }
  bool found_inf = false;
  for (const at::Tensor& f : findings) found_inf = found_inf || f.item<float>() != 0.0f;
  unscaled_.emplace_back(&optimizer, found_inf);
}

bool GradScaler::Step(torch::optim::Optimizer& optimizer) {
  Unscale(optimizer);
  for (const auto& [opt, inf] : unscaled_) {
    if (opt == &optimizer && inf) return false;
  }
  optimizer.step();
  return true;
}

void GradScaler::Update() {
  const bool found_inf =
      std::any_of(unscaled_.begin(), unscaled_.end(), [](const auto& e) { return e.second; });
  unscaled_.clear();
  // at::_amp_update_scale_'s rule.
  if (found_inf) {
    scale_ = static_cast<float>(scale_ * o_.backoff_factor);
    growth_tracker_ = 0;
  } else if (growth_tracker_ + 1 == o_.growth_interval) {
    scale_ = static_cast<float>(scale_ * o_.growth_factor);
    growth_tracker_ = 0;
  } else {
    ++growth_tracker_;
  }
}

StateDict GradScaler::state_dict() const {
  StateDict s;
  s.Set("scale", static_cast<double>(scale_));
  s.Set("growth_factor", o_.growth_factor);
  s.Set("backoff_factor", o_.backoff_factor);
  s.Set("growth_interval", o_.growth_interval);
  s.Set("_growth_tracker", growth_tracker_);
  return s;
}

void GradScaler::load_state_dict(const StateDict& state) {
  scale_ = static_cast<float>(state.GetDouble("scale"));
  o_.growth_factor = state.GetDouble("growth_factor");
  o_.backoff_factor = state.GetDouble("backoff_factor");
  o_.growth_interval = state.GetInt("growth_interval");
  growth_tracker_ = state.GetInt("_growth_tracker");
}

// ---------------------------------------------------------------------------------------------------------------
// PrecisionPlugin

PrecisionPlugin::PrecisionPlugin(Precision precision, c10::DeviceType device)
    : precision_(precision), device_(device) {
  switch (precision) {
    case Precision::k32True:
      break;
    case Precision::kBf16Mixed:
      dtype_ = at::kBFloat16;
      break;
    case Precision::k16Mixed:
      LAKERUN_CHECK_AS(ConfigError, at::hasCUDA(), "Trainer: precision='16-mixed' needs CUDA, which this build or "
                       "machine lacks; use precision='bf16-mixed' or '32-true'");
      LAKERUN_CHECK_AS(ConfigError, device == c10::kCUDA, "Trainer: precision='16-mixed' needs the trainer on CUDA, "
                       "but it runs on ", c10::DeviceTypeName(device, /*lower_case=*/true),
                       " (TrainerOptions::accelerator); use precision='bf16-mixed' or '32-true'");
      dtype_ = at::kHalf;
      scaler_ = std::make_unique<GradScaler>();
      break;
  }
}

PrecisionPlugin::~PrecisionPlugin() = default;

PrecisionPlugin::AutocastScope::AutocastScope(const PrecisionPlugin& p) {
  if (!p.mixed()) return;
  active_ = true;
  device_ = p.device_;
  prev_enabled_ = compat::AutocastEnabled(device_);
  prev_dtype_ = compat::AutocastDtype(device_);
  compat::SetAutocastDtype(device_, p.dtype_);
  compat::SetAutocastEnabled(device_, true);
  at::autocast::increment_nesting();
}

PrecisionPlugin::AutocastScope::~AutocastScope() {
  if (!active_) return;
  // As torch.autocast.__exit__: the cast cache goes when the outermost region ends.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::SetAutocastEnabled(device_, prev_enabled_);
  compat::SetAutocastDtype(device_, prev_dtype_);
}

at::Tensor PrecisionPlugin::ScaleLoss(const at::Tensor& loss) const { return scaler_ ? scaler_->Scale(loss) : loss; }

void PrecisionPlugin::Unscale(torch::optim::Optimizer& optimizer) {
  if (scaler_) scaler_->Unscale(optimizer);
}

bool PrecisionPlugin::Step(torch::optim::Optimizer& optimizer) {
  if (scaler_) return scaler_->Step(optimizer);
  optimizer.step();
  return true;
}

void PrecisionPlugin::AfterStep() {
  if (scaler_) scaler_->Update();
}

}  // namespace lakerun::train
