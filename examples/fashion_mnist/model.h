// The classic PyTorch MNIST CNN (21,840 parameters), used on Fashion-MNIST.
//
//   conv1(1->10, k5) -> max-pool 2 -> ReLU -> conv2(10->20, k5) -> Dropout2d -> max-pool 2 -> ReLU
//   -> flatten 320 -> fc1(320->50) -> ReLU -> dropout -> fc2(50->10) -> log-softmax
//
// Submodules are registered in the same order as Python's `Net` (conv1, conv2, conv2_drop, fc1, fc2), so with the
// same torch::manual_seed the initial weights equal Python's, and state-dict names match for cross-loading.
// `dropout = false` keeps both dropouts in eval mode even while training: the Python cross-check uses it because
// the two languages draw dropout masks from different RNG streams.
// `channels_last` keeps the activations from conv1 on in channels-last (NHWC) memory: libtorch 1.13's CPU max-pool
// is about 3x faster on NHWC than on NCHW, which makes a training step about 1.4x faster. The math is the same;
// only the order of float additions inside conv2 may differ (parameters after 20 steps agree to ~1e-8). Weights
// and gradients stay contiguous NCHW.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <map>
#include <string>

namespace lakerun::examples {

struct NetOptions {
  bool dropout = true;
  bool channels_last = true;
};

class NetImpl : public torch::nn::Module {
 public:
  explicit NetImpl(NetOptions options = {});
  /// x: [N, 1, 28, 28] float. Returns [N, 10] log-probabilities.
  at::Tensor forward(const at::Tensor& x);

 private:
  NetOptions options_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::Dropout2d conv2_drop_{nullptr};
  torch::nn::Linear fc1_{nullptr};
  torch::nn::Linear fc2_{nullptr};
};
TORCH_MODULE(Net);

/// Parameters by state-dict name ("conv1.weight", ...), detached copies.
std::map<std::string, at::Tensor> ParametersByName(const Net& net);
/// Writes the parameters to `path` in torch.save's format (a dict name -> tensor that Python's torch.load reads),
/// atomically.
void SaveParametersForPython(const Net& net, const std::string& path);
/// Loads parameters saved by SaveParametersForPython (or by Python's torch.save of a name -> tensor dict).
/// Throws CorruptDataError naming the path and the parameter when names or shapes do not match.
void LoadParameters(Net& net, const std::string& path);

}  // namespace lakerun::examples
