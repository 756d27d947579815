#include "dist/shard_clip.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace lakerun::dist {

double ClipShardGradNorm(Context& ctx, const std::vector<at::Tensor>& grads, double max_norm, double norm_type) {
  LAKERUN_CHECK(norm_type > 0, "ClipGradNorm: norm_type must be positive (or infinity), got ", norm_type);
  const bool inf = std::isinf(norm_type);
  at::NoGradGuard no_grad;
  at::ScalarType dtype = at::kFloat;
  std::vector<at::Tensor> norms;  // per tensor, on its device: one transfer to the host for all of them
  for (const at::Tensor& g : grads) {
    if (!g.defined() || g.numel() == 0) continue;
    dtype = g.scalar_type();
    norms.push_back((inf ? g.abs().max() : g.norm(norm_type)).reshape({1}));
  }
  const bool any = !norms.empty();
  double local = 0;  // max |g| for infinity, else the sum of |g|^p
  if (any) {
    const at::Tensor all = at::cat(norms).to(at::kDouble).cpu();
    local = inf ? all.max().item<double>() : all.pow(norm_type).sum().item<double>();
  }
  // With no gradient anywhere the norm is 0 and the coefficient clamps to 1, as clip_grad_norm_ returns 0.
  const double reduced = AllReduceDouble(ctx, local, inf ? ReduceOp::kMax : ReduceOp::kSum);
  const double total = inf ? reduced : std::pow(reduced, 1.0 / norm_type);
  // clip_grad_norm_'s arithmetic: max_norm / (total + 1e-6) on a tensor of the gradients' dtype, clamped to 1.
  const at::Tensor total_t = at::full({}, total, at::TensorOptions().dtype(dtype));
  const at::Tensor coef = at::clamp(max_norm / (total_t + 1e-6), c10::nullopt, 1.0);
  for (const at::Tensor& g : grads) {
    if (g.defined()) const_cast<at::Tensor&>(g).mul_(coef.to(g.device()));
  }
  return total;
}

void ClipShardGradValue(const std::vector<at::Tensor>& grads, double clip_value) {
  at::NoGradGuard no_grad;
  for (const at::Tensor& g : grads) {
    if (g.defined()) const_cast<at::Tensor&>(g).clamp_(-clip_value, clip_value);
  }
}

}  // namespace lakerun::dist
