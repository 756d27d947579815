// Learning-rate scaling for data-parallel training (opt-in): with N ranks the global batch is N times larger and
// an epoch has N times fewer steps, so a learning rate tuned for one process is usually scaled up.
//
//   double lr = lakerun::dist::ScaleLearningRate(0.001, ctx.world_size());                    // linear: 0.002 at 2
//   double lr = lakerun::dist::ScaleLearningRate(0.001, ctx.world_size(), LrScaling::kSqrt);
#pragma once

namespace lakerun::dist {

enum class LrScaling {
  kNone,    ///< base_lr
  kLinear,  ///< base_lr * world_size (Goyal et al., Horovod's guide)
  kSqrt,    ///< base_lr * sqrt(world_size)
};

/// Throws InvalidArgument for world_size < 1 or a negative / non-finite base_lr.
double ScaleLearningRate(double base_lr, int world_size, LrScaling rule = LrScaling::kLinear);

}  // namespace lakerun::dist
