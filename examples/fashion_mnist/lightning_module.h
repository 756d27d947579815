// The seed CNN (model.h) as a lakerun::train::Module: what the Trainer calls per batch, and what it logs.
//
//   FashionMnistModuleOptions options;
//   options.lr = 0.05;
//   options.momentum = 0.5;
//   FashionMnistModule module(options);
//   trainer.Fit(module, train, &val);
//   trainer.Test(module, test);   // test_loss, test_acc, test_correct, test_samples
//
// Logged (LightningModule.log semantics, docs/trainer.md §4): train_loss per step (progress bar); val_loss and
// val_acc per validation epoch; test_loss, test_acc, and test_correct and test_samples (sums: the exact count of
// correct predictions and of samples) per test pass. Validation and test values are reduced over the ranks (sync_dist), each rank having
// evaluated its shard, so every rank sees the figures of the whole split.
#pragma once

#include "lakerun/train/trainer.h"
#include "model.h"

namespace lakerun::examples {

struct FashionMnistModuleOptions {
  double lr = 0.01;
  double momentum = 0.5;
  /// See NetOptions::dropout.
  bool dropout = true;
};

class FashionMnistModule : public train::Module {
 public:
  /// Builds the net (its initial weights come from torch's current seed).
  explicit FashionMnistModule(FashionMnistModuleOptions options = {});

  at::Tensor TrainingStep(const train::Batch& batch, int64_t batch_idx) override;
  void ValidationStep(const train::Batch& batch, int64_t batch_idx) override;
  void TestStep(const train::Batch& batch, int64_t batch_idx) override;
  train::Optimizers ConfigureOptimizers() override;

  /// The network alone (state-dict names conv1.weight ... as Python's Net): what is logged as the model.
  Net& net() { return net_; }

 private:
  // Mean NLL loss, accuracy and correct count of one batch, in eval or train mode as set by the Trainer.
  struct Scores {
    at::Tensor loss;
    double accuracy = 0;
    double correct = 0;
  };
  Scores Score(const train::Batch& batch);

  FashionMnistModuleOptions options_;
  Net net_{nullptr};
};

}  // namespace lakerun::examples
