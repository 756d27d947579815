#include "lightning_module.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

namespace lakerun::examples {
namespace {

// Lightning's self.log(..., prog_bar=prog_bar, reduce_fx=reduce, sync_dist=True): averaged (or summed) over ranks.
train::LogOptions Synced(bool prog_bar, train::ReduceFx reduce = train::ReduceFx::kMean) {
  train::LogOptions options;
  options.prog_bar = prog_bar;
  options.reduce_fx = reduce;
  options.sync_dist = true;
  return options;
}

}  // namespace

FashionMnistModule::FashionMnistModule(FashionMnistModuleOptions options) : options_(options) {
  NetOptions net;
  net.dropout = options.dropout;
  net_ = register_module("net", Net(net));
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
  train::LogOptions shown;
  shown.prog_bar = true;
  Log("train_loss", s.loss, shown);
  return s.loss;
}

void FashionMnistModule::ValidationStep(const train::Batch& batch, int64_t) {
  const Scores s = Score(batch);
  Log("val_loss", s.loss, Synced(/*prog_bar=*/true));
  Log("val_acc", s.accuracy, Synced(/*prog_bar=*/true));
}

void FashionMnistModule::TestStep(const train::Batch& batch, int64_t) {
  const Scores s = Score(batch);
  Log("test_loss", s.loss, Synced(false));
  Log("test_acc", s.accuracy, Synced(false));
  Log("test_correct", s.correct, Synced(false, train::ReduceFx::kSum));
  Log("test_samples", static_cast<double>(batch.size()), Synced(false, train::ReduceFx::kSum));
}

train::Optimizers FashionMnistModule::ConfigureOptimizers() {
  return {std::make_shared<torch::optim::SGD>(
      net_->parameters(), torch::optim::SGDOptions(options_.lr).momentum(options_.momentum))};
}

}  // namespace lakerun::examples
