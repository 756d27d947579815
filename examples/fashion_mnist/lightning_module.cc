#include "lightning_module.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

namespace lakerun::examples {

FashionMnistModule::FashionMnistModule(FashionMnistModuleOptions options) : options_(options) {
  net_ = register_module("net", Net(NetOptions{.dropout = options.dropout}));
}

FashionMnistModule::Scores FashionMnistModule::Score(const train::Batch& batch) {
  const at::Tensor& labels = batch.at("label");
  const at::Tensor output = net_->forward(batch.at("image"));
  Scores s;
  s.loss = torch::nn::functional::nll_loss(output, labels);
  s.correct = static_cast<double>(output.argmax(1).eq(labels).sum().item<int64_t>());
  s.accuracy = s.correct / static_cast<double>(labels.size(0));
  return s;
}

at::Tensor FashionMnistModule::TrainingStep(const train::Batch& batch, int64_t) {
  Scores s = Score(batch);
  Log("train_loss", s.loss, {.prog_bar = true});
  return s.loss;
}

void FashionMnistModule::ValidationStep(const train::Batch& batch, int64_t) {
  const Scores s = Score(batch);
  Log("val_loss", s.loss, {.prog_bar = true, .sync_dist = true});
  Log("val_acc", s.accuracy, {.prog_bar = true, .sync_dist = true});
}

void FashionMnistModule::TestStep(const train::Batch& batch, int64_t) {
  const Scores s = Score(batch);
  Log("test_loss", s.loss, {.sync_dist = true});
  Log("test_acc", s.accuracy, {.sync_dist = true});
  Log("test_correct", s.correct, {.sync_dist = true, .reduce_fx = train::ReduceFx::kSum});
  Log("test_samples", static_cast<double>(batch.size()), {.sync_dist = true, .reduce_fx = train::ReduceFx::kSum});
}

train::Optimizers FashionMnistModule::ConfigureOptimizers() {
  return {std::make_shared<torch::optim::SGD>(
      net_->parameters(), torch::optim::SGDOptions(options_.lr).momentum(options_.momentum))};
}

}  // namespace lakerun::examples
