// What DistributedDataParallel and ShardedDataParallel share around backward: a hook that fires when a parameter's
// gradient is complete, the errors for parameters that got no gradient or two, and the initial broadcast.
#pragma once

#include <lakerun/dist/init.h>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace torch::autograd {
struct Node;
}

namespace lakerun::dist {

/// Calls on_ready(i) each time params[i]'s gradient accumulator has written this backward's gradient into .grad (a
/// post hook on the accumulator, on whichever thread autograd runs it). Removes the hooks when destroyed.
class GradAccumulatorHooks {
 public:
  /// Every parameter must be a leaf that requires grad. `who` names the caller in errors.
  GradAccumulatorHooks(const char* who, const std::vector<at::Tensor>& params, const std::vector<std::string>& names,
                       std::function<void(std::size_t)> on_ready);
  ~GradAccumulatorHooks();
  GradAccumulatorHooks(const GradAccumulatorHooks&) = delete;
  GradAccumulatorHooks& operator=(const GradAccumulatorHooks&) = delete;

 private:
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // a variable only holds it weakly
  std::vector<uintptr_t> keys_;
  std::function<void(std::size_t)> on_ready_;
};

/// Throws DistError for a synchronized backward in which `doubled` parameters got two gradients (checked first) or
/// `unused` ones got none, naming at most 16 of them, the rank and `who`; `unused_hint` says how to allow unused
/// parameters.
[[noreturn]] void ThrowGradientMisuse(const char* who, int rank, const std::vector<std::string>& unused,
                                      const std::vector<std::string>& doubled, const std::string& unused_hint);

/// Rank 0's parameters and buffers to every rank, one flat broadcast per (dtype, device). Collective.
void BroadcastModuleState(Context& ctx, torch::nn::Module& module);

}  // namespace lakerun::dist
