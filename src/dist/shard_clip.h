// Gradient clipping when each rank holds part of the gradients: the norm over every rank's part, one all-reduce.
#pragma once

#include <lakerun/dist/init.h>

#include <ATen/core/Tensor.h>

#include <vector>

namespace lakerun::dist {

/// Scales `grads` (this rank's part; undefined ones are skipped) so that the norm of order norm_type of all ranks'
/// parts together is at most max_norm, as torch::nn::utils::clip_grad_norm_ does for one process: the same
/// coefficient max_norm / (norm + 1e-6), clamped to 1, computed in the gradients' dtype and applied to every
/// gradient. Returns the norm. Partial sums travel as double. Collective (also at world size 1, where it is local).
double ClipShardGradNorm(Context& ctx, const std::vector<at::Tensor>& grads, double max_norm, double norm_type);

/// Clamps `grads` into [-clip_value, clip_value] (local: clamping is element-wise).
void ClipShardGradValue(const std::vector<at::Tensor>& grads, double clip_value);

}  // namespace lakerun::dist
