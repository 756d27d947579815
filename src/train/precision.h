// Mixed precision for the Trainer (Lightning's precision plugins): "32-true" does nothing; "bf16-mixed" runs the
// forward under autocast to bfloat16 (the CPU switch on CPU, the CUDA one on CUDA); "16-mixed" (CUDA only) autocasts
// to float16 and scales the loss with a dynamic GradScaler.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lakerun/train/callback.h"
#include "lakerun/train/enums.h"

namespace torch::optim {
class Optimizer;
}

namespace lakerun::train {

/// torch.cuda.amp.GradScaler's algorithm written with device-generic at:: ops (so it also runs, and is tested, on
/// CPU tensors). The scale is float32, as PyTorch's.
struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});
  /// loss * scale.
  at::Tensor Scale(const at::Tensor& loss) const;
  /// Divides the gradients of `optimizer` by the scale once per step and records whether any is inf/NaN.
  void Unscale(torch::optim::Optimizer& optimizer);
  /// Unscales if not done yet, then steps unless a gradient was inf/NaN. Returns whether it stepped.
  bool Step(torch::optim::Optimizer& optimizer);
  /// Backs the scale off after inf/NaN, grows it after growth_interval clean steps; forgets this step's findings.
  void Update();

  float scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  /// {scale, growth_factor, backoff_factor, growth_interval, _growth_tracker} as PyTorch's state_dict().
  StateDict state_dict() const;
  void load_state_dict(const StateDict& state);

 private:
  GradScalerOptions o_;
  float scale_;
  int64_t growth_tracker_ = 0;
  // Per optimizer (by address) in the running step: unscaled yet, found inf.
  std::vector<std::pair<const torch::optim::Optimizer*, bool>> unscaled_;
};

class PrecisionPlugin {
 public:
  /// Autocast ("bf16-mixed", "16-mixed") runs on `device`, the Trainer's. Throws ConfigError naming the option for
  /// "16-mixed" without CUDA or on a CPU device.
  PrecisionPlugin(Precision precision, c10::DeviceType device);
  ~PrecisionPlugin();

  /// Autocast for the forward (training / validation / test step) while alive; nothing for "32".
  class AutocastScope {
   public:
    explicit AutocastScope(const PrecisionPlugin& p);
    ~AutocastScope();
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

   private:
    bool active_ = false;
    c10::DeviceType device_ = c10::kCPU;  // where autocast was switched on
    bool prev_enabled_ = false;
    at::ScalarType prev_dtype_ = at::kFloat;
  };

  /// The loss backward() is called on (scaled under "16-mixed").
  at::Tensor ScaleLoss(const at::Tensor& loss) const;
  /// Before clipping: unscales the gradients ("16-mixed").
  void Unscale(torch::optim::Optimizer& optimizer);
  /// Steps the optimizer unless the scaler saw inf/NaN; returns whether it stepped.
  bool Step(torch::optim::Optimizer& optimizer);
  /// After the optimizers of one step: updates the scale.
  void AfterStep();

  Precision precision() const { return precision_; }
  bool mixed() const { return precision_ != Precision::k32True; }
  c10::DeviceType device() const { return device_; }
  /// The scaler ("16-mixed" only), nullptr otherwise.
  GradScaler* scaler() const { return scaler_.get(); }

 private:
  Precision precision_;
  at::ScalarType dtype_ = at::kFloat;
  c10::DeviceType device_;  // where autocast runs: the Trainer's device
  std::unique_ptr<GradScaler> scaler_;
};

}  // namespace lakerun::train
