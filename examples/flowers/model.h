// The example's classifier: a small CNN as a lakerun::train::Module (four conv + batch-norm layers, global average
// pooling, a linear head), trained with AdamW on cross-entropy.
//
// Batches carry "image" (float [B, C, H, W], normalised) and "label" (int64 [B]). Logged metrics:
//   train_loss (every step, progress bar), val_loss / val_acc and test_loss / test_acc (per epoch, averaged over
//   ranks with sync_dist).
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

#include "lakerun/train/trainer.h"

namespace lakerun::examples::flowers {

struct NetOptions {
  int64_t in_channels = 3;
  int64_t num_classes = 10;
  /// Channels of the stem; each following conv doubles them.
  int64_t width = 16;
  double lr = 2e-3;
  double weight_decay = 1e-4;
};

class FlowersNet : public train::Module {
 public:
  explicit FlowersNet(NetOptions options);

  /// Logits [B, num_classes] of a batch of images [B, C, H, W] (any H, W >= 8).
  at::Tensor Forward(const at::Tensor& images);

  at::Tensor TrainingStep(const train::Batch& batch, int64_t batch_idx) override;
  void ValidationStep(const train::Batch& batch, int64_t batch_idx) override;
  void TestStep(const train::Batch& batch, int64_t batch_idx) override;
  train::Optimizers ConfigureOptimizers() override;

  const NetOptions& options() const { return options_; }

 private:
  // Loss and accuracy of one evaluation batch, logged as <prefix>_loss and <prefix>_acc.
  void Evaluate(const train::Batch& batch, const std::string& prefix);

  NetOptions options_;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace lakerun::examples::flowers
