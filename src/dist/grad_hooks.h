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

/// Which parameters' gradients arrived in the running synchronized backward. Not thread-safe: call it under the
/// lock that guards the hooks.
class BackwardArrivals {
 public:
  /// `on_end` runs once each backward pass that saw an arrival is over (an autograd final callback: an exception
  /// from it propagates out of backward()).
  BackwardArrivals(std::size_t params, std::function<void()> on_end);

  /// Records parameter i's gradient; the first arrival of a backward queues `on_end`. Returns false for a second
  /// arrival of the same parameter (remembered for Misuse()).
  bool Arrive(std::size_t i);
  /// Whether a backward saw an arrival and has not been Reset() since.
  bool in_backward() const { return in_backward_; }
  bool arrived(std::size_t i) const { return arrived_[i]; }
  /// Whether some parameter may still get its gradient in this backward (false once all did, or after Close()).
  bool awaiting() const { return count_ < arrived_.size(); }
  /// No more arrivals are expected (the backward is over).
  void Close() { count_ = arrived_.size(); }
  /// The names (from `names`) of the parameters with no gradient and with two.
  void Misuse(const std::vector<std::string>& names, std::vector<std::string>* unused,
              std::vector<std::string>* doubled) const;
  void Reset();

 private:
  std::vector<bool> arrived_, twice_;
  std::size_t count_ = 0;
  bool in_backward_ = false;
  std::function<void()> on_end_;
};

/// Throws DistError for a synchronized backward in which `doubled` parameters got two gradients (checked first) or
/// `unused` ones got none, naming at most 16 of them, the rank and `who`; `unused_hint` says how to allow unused
/// parameters.
[[noreturn]] void ThrowGradientMisuse(const char* who, int rank, const std::vector<std::string>& unused,
                                      const std::vector<std::string>& doubled, const std::string& unused_hint);

/// Rank 0's parameters and buffers to every rank, in flat broadcasts of up to 16 MB per (dtype, device). Collective.
void BroadcastModuleState(Context& ctx, torch::nn::Module& module);

}  // namespace lakerun::dist
