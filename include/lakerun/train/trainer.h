// Module and Trainer: Lightning-style training on one process or every rank of a lakerun::dist job.
//
//   struct Net : lakerun::train::Module {
//     Net() { fc = register_module("fc", torch::nn::Linear(4, 1)); }
//     at::Tensor TrainingStep(const Batch& b, int64_t) override {
//       auto loss = torch::mse_loss(fc(b.at("x")), b.at("y"));  Log("loss", loss);  return loss;
//     }
//     Optimizers ConfigureOptimizers() override { return {std::make_shared<torch::optim::SGD>(parameters(), 0.1)}; }
//     torch::nn::Linear fc{nullptr};
//   };
//   Trainer trainer({.max_epochs = 4}, {std::make_shared<ModelCheckpoint>(ModelCheckpointOptions{.save_last = true})});
//   trainer.Fit(net, train_source, &val_source);            // later: trainer.Fit(net, train, &val, "last");
//
// Loop (trainer.md §6): per batch training_step -> loss / accumulate_grad_batches -> backward (DDP NoSync on
// accumulating batches) -> on a step boundary (a multiple of k or the epoch's last batch): clip, optimizer step,
// zero_grad, global_step += 1 -> callbacks' OnTrainBatchEnd. Validation runs at the end of the epochs it is due, then
// on_train_epoch_end: non-checkpoint callbacks, the module's hook, checkpoint callbacks. should_stop ends the fit once
// min_epochs are done.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/data/loader.h"
#include "lakerun/train/callback.h"
#include "lakerun/track/run.h"
#include "lakerun/train/logged_metrics.h"

namespace lakerun::train {

using Batch = data::Batch;
using Optimizers = std::vector<std::shared_ptr<torch::optim::Optimizer>>;

/// Anything that yields batches and can say where it is (lakerun::data::Loader, an in-memory source...).
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Starts epoch `epoch` (shuffling must be a pure function of the seed and the epoch).
  virtual void SetEpoch(uint64_t epoch) = 0;
  /// The next batch of the current epoch; nullopt at its end.
  virtual std::optional<Batch> Next() = 0;
  /// The position after the last batch Next() returned, and its inverse.
  virtual std::map<std::string, int64_t> state_dict() const = 0;
  virtual void load_state_dict(const std::map<std::string, int64_t>& state) = 0;
};

/// Batches of in-memory tensors (same first dimension), shuffled per epoch from (seed, epoch) when seed is set.
class TensorBatchSource final : public BatchSource {
 public:
  TensorBatchSource(std::map<std::string, at::Tensor> columns, int64_t batch_size,
                    std::optional<uint64_t> shuffle_seed = std::nullopt);
  void SetEpoch(uint64_t epoch) override;
  std::optional<Batch> Next() override;
  std::map<std::string, int64_t> state_dict() const override;
  void load_state_dict(const std::map<std::string, int64_t>& state) override;

 private:
  std::map<std::string, at::Tensor> columns_;
  int64_t batch_size_;
  int64_t rows_;
  std::optional<uint64_t> seed_;
  uint64_t epoch_ = 0;
  int64_t next_ = 0;  // batches returned in this epoch
  at::Tensor order_;
};

/// Adapts lakerun::data::Loader (which must outlive the adapter).
class LoaderBatchSource final : public BatchSource {
 public:
  explicit LoaderBatchSource(data::Loader& loader) : loader_(loader) {}
  void SetEpoch(uint64_t epoch) override { loader_.SetEpoch(epoch); }
  std::optional<Batch> Next() override { return loader_.Next(); }
  std::map<std::string, int64_t> state_dict() const override { return loader_.state_dict().ToMap(); }
  void load_state_dict(const std::map<std::string, int64_t>& state) override {
    loader_.load_state_dict(data::LoaderState::FromMap(state));
  }

 private:
  data::Loader& loader_;
};

class Trainer;

/// The user's model: steps, optimizers, hooks, and log().
class Module : public torch::nn::Module {
 public:
  virtual at::Tensor TrainingStep(const Batch& batch, int64_t batch_idx) = 0;
  virtual void ValidationStep(const Batch& batch, int64_t batch_idx) {}
  virtual void TestStep(const Batch& batch, int64_t batch_idx) {}
  virtual Optimizers ConfigureOptimizers() = 0;
  virtual void OnTrainEpochEnd() {}
  virtual void OnValidationEpochEnd() {}

  /// Records a metric (trainer.md §4); only valid inside a step or epoch-end hook run by a Trainer.
  void Log(const std::string& name, const at::Tensor& value, LogOptions options = {});
  void Log(const std::string& name, double value, LogOptions options = {});

 private:
  friend class Trainer;
  LoggedMetrics* metrics_ = nullptr;
  LogHook hook_ = LogHook::kTrainingStep;
  int64_t batch_size_ = 1;
};

struct TrainerOptions {
  /// -1: unlimited. With neither max_epochs nor max_steps set, 1000 epochs (Lightning's default).
  std::optional<int64_t> max_epochs;
  int64_t max_steps = -1;
  int64_t min_epochs = 0;
  /// Batches per epoch (-1: all).
  int64_t limit_train_batches = -1;
  int64_t limit_val_batches = -1;
  int64_t check_val_every_n_epoch = 1;
  /// Validation batches run before fitting (-1: all); their metrics are discarded.
  int64_t num_sanity_val_steps = 2;
  int64_t accumulate_grad_batches = 1;
  /// 0: no clipping.
  double gradient_clip_val = 0.0;
  /// "norm" or "value".
  std::string gradient_clip_algorithm = "norm";
  /// Seeds torch at the start of Fit when set.
  std::optional<uint64_t> seed;
  /// use_deterministic_algorithms(true).
  bool deterministic = false;
  std::string default_root_dir = ".";
  /// n > 0: n batches per loop, one epoch, no sanity check, no checkpoints, no early stopping.
  int64_t fast_dev_run = 0;
  /// Join lakerun::dist (Init()) and wrap the module in DistributedDataParallel when the world size is > 1.
  bool distributed = true;
  /// Where logged metrics go (rank 0 only; not owned, must outlive the Trainer); nullptr: nowhere.
  track::Run* run = nullptr;
  /// Step metrics reach `run` when (optimizer steps before this one + 1) % log_every_n_steps == 0, or on should_stop.
  int64_t log_every_n_steps = 50;
  /// Rank 0 prints a plain progress line (epoch, step, prog_bar metrics) every this many optimizer steps and at each
  /// epoch end; 0: no progress output.
  int64_t progress_every_n_steps = 50;
  /// Where progress lines go; nullptr: stderr.
  std::ostream* progress_stream = nullptr;
};

class Trainer {
 public:
  /// Throws ConfigError naming the option for a bad value.
  Trainer(TrainerOptions options, std::vector<std::shared_ptr<Callback>> callbacks = {});
  ~Trainer();

  /// Fits; `ckpt_path` = "" (fresh), a path, "last" (newest last*.ckpt of the checkpoint callbacks) or "best".
  void Fit(Module& module, BatchSource& train, BatchSource* val = nullptr, const std::string& ckpt_path = "");
  /// One validation / test pass; returns the epoch metrics.
  MetricMap Validate(Module& module, BatchSource& val);
  MetricMap Test(Module& module, BatchSource& test);

  /// Writes a checkpoint of the current state to `path` atomically (rank 0 only).
  void SaveCheckpoint(const std::string& path);

  const TrainerState& state() const { return state_; }
  const MetricMap& callback_metrics() const { return state_.callback_metrics; }
  const MetricMap& logged_metrics() const { return logged_; }
  int64_t global_step() const { return state_.global_step; }
  int64_t current_epoch() const { return state_.current_epoch; }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  TrainerOptions options_;
  std::vector<std::shared_ptr<Callback>> callbacks_;
  TrainerState state_;
  MetricMap logged_;
};

}  // namespace lakerun::train
