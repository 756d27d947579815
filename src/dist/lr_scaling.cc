#include <lakerun/dist/lr_scaling.h>

#include <lakerun/base/error.h>

#include <cmath>

namespace lakerun::dist {

double ScaleLearningRate(double base_lr, int world_size, LrScaling rule) {
  LAKERUN_CHECK(world_size >= 1, "ScaleLearningRate: world_size must be at least 1, got ", world_size);
  LAKERUN_CHECK(std::isfinite(base_lr) && base_lr >= 0, "ScaleLearningRate: base_lr must be finite and >= 0, got ",
                base_lr);
  switch (rule) {
    case LrScaling::kNone: return base_lr;
    case LrScaling::kLinear: return base_lr * world_size;
    case LrScaling::kSqrt: return base_lr * std::sqrt(static_cast<double>(world_size));
  }
  return base_lr;
}

}  // namespace lakerun::dist
