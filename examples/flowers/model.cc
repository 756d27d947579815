#include "model.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/optim/adamw.h>

#include "lakerun/base/error.h"

namespace lakerun::examples::flowers {
namespace {

namespace nn = torch::nn;

// conv -> batch norm -> ReLU.
void AddConv(nn::Sequential& seq, int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  seq->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false)));
  seq->push_back(nn::BatchNorm2d(out));
  seq->push_back(nn::ReLU(nn::ReLUOptions(true)));
}

}  // namespace

FlowersNet::FlowersNet(NetOptions options) : options_(options) {
  LAKERUN_CHECK_AS(ConfigError, options.in_channels == 1 || options.in_channels == 3,
                   "FlowersNet: in_channels must be 1 or 3, got ", options.in_channels);
  LAKERUN_CHECK_AS(ConfigError, options.num_classes >= 2, "FlowersNet: num_classes must be at least 2, got ",
                   options.num_classes);
  LAKERUN_CHECK_AS(ConfigError, options.width >= 1, "FlowersNet: width must be at least 1, got ", options.width);
  nn::Sequential features;
  // A strided 5x5 stem halves the resolution at once (most pixels are spent there), then 3x3 convs with 2x2 max
  // pooling: 56x56 input -> 28 -> 14 -> 7 -> global average.
  const int64_t w = options.width;
  AddConv(features, options.in_channels, w, 5, 2);
  AddConv(features, w, 2 * w, 3, 1);
  features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
  AddConv(features, 2 * w, 4 * w, 3, 1);
  features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
  AddConv(features, 4 * w, 8 * w, 3, 1);
  features->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  features_ = register_module("features", features);
  head_ = register_module("head", nn::Linear(8 * w, options.num_classes));
}

at::Tensor FlowersNet::Forward(const at::Tensor& images) {
  LAKERUN_CHECK(images.dim() == 4 && images.size(1) == options_.in_channels, "FlowersNet: expected images [B, ",
                options_.in_channels, ", H, W], got ", images.sizes());
  return head_(features_->forward(images).flatten(1));
}

at::Tensor FlowersNet::TrainingStep(const train::Batch& batch, int64_t) {
  const at::Tensor loss = torch::nn::functional::cross_entropy(Forward(batch.at("image")), batch.at("label"));
  train::LogOptions shown;
  shown.prog_bar = true;
  Log("train_loss", loss.detach(), shown);
  return loss;
}

void FlowersNet::Evaluate(const train::Batch& batch, const std::string& prefix) {
  const at::Tensor logits = Forward(batch.at("image"));
  const at::Tensor& labels = batch.at("label");
  const at::Tensor loss = torch::nn::functional::cross_entropy(logits, labels);
  const at::Tensor acc = logits.argmax(1).eq(labels).to(at::kFloat).mean();
  train::LogOptions synced;  // Lightning's prog_bar=True, sync_dist=True: the mean over every rank's shard
  synced.prog_bar = true;
  synced.sync_dist = true;
  Log(prefix + "_loss", loss, synced);
  Log(prefix + "_acc", acc, synced);
}

void FlowersNet::ValidationStep(const train::Batch& batch, int64_t) { Evaluate(batch, "val"); }
void FlowersNet::TestStep(const train::Batch& batch, int64_t) { Evaluate(batch, "test"); }

train::Optimizers FlowersNet::ConfigureOptimizers() {
  return {std::make_shared<torch::optim::AdamW>(
      parameters(), torch::optim::AdamWOptions(options_.lr).weight_decay(options_.weight_decay))};
}

}  // namespace lakerun::examples::flowers
