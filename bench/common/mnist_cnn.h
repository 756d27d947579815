// The classic PyTorch MNIST CNN that the benchmarks time: conv1 1->10 k5, max-pool 2, ReLU, conv2 10->20 k5,
// Dropout2d, max-pool 2, ReLU, fc1 320->50, ReLU, dropout, fc2 50->10, log-softmax (NCHW throughout, as the seed
// wrote it). `Base` is torch::nn::Module or a subclass of it, such as lakerun::train::Module.
#pragma once

#include <torch/nn/functional/dropout.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <ATen/ATen.h>

namespace lakerun::bench {

template <typename Base>
struct MnistCnn : Base {
  MnistCnn() {
    conv1 = this->register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 10, 5)));
    conv2 = this->register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(10, 20, 5)));
    conv2_drop = this->register_module("conv2_drop", torch::nn::Dropout2d());
    fc1 = this->register_module("fc1", torch::nn::Linear(320, 50));
    fc2 = this->register_module("fc2", torch::nn::Linear(50, 10));
  }
  at::Tensor forward(at::Tensor x) {
    namespace F = torch::nn::functional;
    x = at::relu(F::max_pool2d(conv1(x), F::MaxPool2dFuncOptions(2)));
    x = at::relu(F::max_pool2d(conv2_drop(conv2(x)), F::MaxPool2dFuncOptions(2)));
    x = at::relu(fc1(x.view({-1, 320})));
    x = F::dropout(x, F::DropoutFuncOptions().training(this->is_training()));
    return at::log_softmax(fc2(x), 1);
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Dropout2d conv2_drop{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

}  // namespace lakerun::bench
