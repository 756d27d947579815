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
#include <c10/core/Device.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/data/loader.h"
#include "lakerun/dist/lr_scaling.h"
#include "lakerun/train/callback.h"
#include "lakerun/track/run.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/logged_metrics.h"
#include "lakerun/train/lr_scheduler.h"
#include "lakerun/train/strategy.h"

namespace lakerun::dist {
class Context;
}

namespace lakerun::train {

using Batch = data::Batch;
using OptimizerList = std::vector<std::shared_ptr<torch::optim::Optimizer>>;

/// What Module::ConfigureOptimizers() returns: the optimizers (it is a vector of them, so `return {sgd};` works)
/// plus Lightning's lr scheduler configs (lr_scheduler.h), stepped by the Trainer (docs/trainer.md, "LR schedulers").
struct Optimizers : OptimizerList {
  using OptimizerList::OptimizerList;
  Optimizers() = default;
  Optimizers(OptimizerList optimizers, std::vector<LRSchedulerConfig> schedulers = {})
      : OptimizerList(std::move(optimizers)), lr_schedulers(std::move(schedulers)) {}
  std::vector<LRSchedulerConfig> lr_schedulers;
};

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
  /// Batches per epoch when known (a fractional val_check_interval needs it); nullopt: unknown.
  virtual std::optional<int64_t> num_batches() const { return std::nullopt; }
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
  std::optional<int64_t> num_batches() const override { return (rows_ + batch_size_ - 1) / batch_size_; }

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
  std::optional<int64_t> num_batches() const override { return static_cast<int64_t>(loader_.batches_per_epoch()); }

 private:
  data::Loader& loader_;
};

class Trainer;

/// Lightning's val_check_interval: a fraction of the epoch (double) or a number of batches (integer).
struct ValCheckInterval {
  ValCheckInterval(double fraction = 1.0) : fraction(fraction) {}  // NOLINT: implicit, as Lightning's argument
  ValCheckInterval(int batches) : batches(batches) {}               // NOLINT
  ValCheckInterval(int64_t batches) : batches(batches) {}           // NOLINT
  double fraction = 1.0;
  /// > 0: every this many batches (the fraction is then ignored).
  int64_t batches = 0;
};

/// The user's model: steps, optimizers, hooks, and log().
class Module : public torch::nn::Module {
 public:
  virtual at::Tensor TrainingStep(const Batch& batch, int64_t batch_idx) = 0;
  virtual void ValidationStep(const Batch& batch, int64_t batch_idx) {}
  virtual void TestStep(const Batch& batch, int64_t batch_idx) {}
  virtual Optimizers ConfigureOptimizers() = 0;
  virtual void OnTrainEpochEnd() {}
  virtual void OnValidationEpochEnd() {}
  /// Lightning's hparams: logged as run params when a fit starts (rank 0, TrainerOptions::run).
  virtual std::map<std::string, std::string> Hyperparameters() const { return {}; }
  /// Lightning's lr_scheduler_step: steps `scheduler`, with the monitored value for a monitoring one.
  virtual void LrSchedulerStep(LRScheduler& scheduler, std::optional<double> metric) { scheduler.Step(metric); }

  /// Lightning's self.device: where the Trainer put the module's parameters and moves each batch
  /// (TrainerOptions::accelerator); the CPU until a Trainer runs the module.
  c10::Device device() const { return device_; }

  /// Records a metric (trainer.md §4); only valid inside a step or epoch-end hook run by a Trainer.
  void Log(const std::string& name, const at::Tensor& value, LogOptions options = {});
  void Log(const std::string& name, double value, LogOptions options = {});

 private:
  friend class Trainer;

/// Lightning's val_check_interval: a fraction of the epoch (double) or a number of batches (integer).
struct ValCheckInterval {
  ValCheckInterval(double fraction = 1.0) : fraction(fraction) {}  // NOLINT: implicit, as Lightning's argument
  ValCheckInterval(int batches) : batches(batches) {}               // NOLINT
  ValCheckInterval(int64_t batches) : batches(batches) {}           // NOLINT
  double fraction = 1.0;
  /// > 0: every this many batches (the fraction is then ignored).
  int64_t batches = 0;
};
  LoggedMetrics* metrics_ = nullptr;
  LogHook hook_ = LogHook::kTrainingStep;
  int64_t batch_size_ = 1;
  c10::Device device_ = c10::Device(c10::kCPU);
};

struct TrainerOptions {
  /// -1: unlimited. With neither max_epochs nor max_steps set, 1000 epochs (Lightning's default).
  std::optional<int64_t> max_epochs{};
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
  std::optional<uint64_t> seed{};
  /// use_deterministic_algorithms(true).
  bool deterministic = false;
  std::string default_root_dir = ".";
  /// n > 0: n batches per loop, one epoch, no sanity check, no checkpoints, no early stopping.
  int64_t fast_dev_run = 0;
  /// Join lakerun::dist (Init()) and wrap the module for `strategy` when the world size is > 1.
  bool distributed = true;
  /// How a fit spreads over the ranks (strategy.h): kDdp replicates model, gradients and optimizer state; kZero1
  /// and kZero2 shard the optimizer state, and the gradients too, with DDP's results (docs/trainer.md, "Strategies").
  /// The sharded ones need SGD, Adam, AdamW, RMSprop or Adagrad and a precision other than "16-mixed".
  Strategy strategy = Strategy::kDdp;
  /// The lakerun::dist job to run in (not owned; must outlive every call); nullptr: lakerun::dist::Init()'s. For
  /// programs that create their own Context, and tests that run ranks as threads.
  dist::Context* dist_context = nullptr;
  /// Where logged metrics go (rank 0 only; not owned, must outlive the Trainer); nullptr: nowhere.
  track::Run* run = nullptr;
  /// Step metrics reach `run` when (optimizer steps before this one + 1) % log_every_n_steps == 0, or on should_stop.
  int64_t log_every_n_steps = 50;
  /// Rank 0 prints a plain progress line (epoch, step, prog_bar metrics) every this many optimizer steps and at each
  /// epoch end; 0: no progress output.
  int64_t progress_every_n_steps = 50;
  /// Where progress lines go; nullptr: stderr.
  std::ostream* progress_stream = nullptr;

  // --- Added with Lightning 2.6's remaining Trainer arguments (docs/trainer.md §7). -------------------------------
  /// When validation runs inside a training epoch (Lightning's val_check_interval): a double in (0, 1] is a fraction
  /// of the epoch (every max(1, int(batches * f)) batches), an integer every that many training batches (counted
  /// across epochs when check_val_every_n_epoch is 0, i.e. None). Validation also runs when should_stop is set and
  /// the fit may stop.
  ValCheckInterval val_check_interval = 1.0;
  /// Optimizer steps before should_stop may end the fit (-1: none).
  int64_t min_steps = -1;
  /// Wall-clock budget of the fit; once spent, should_stop is set at the next batch end (rank 0 decides).
  std::optional<std::chrono::milliseconds> max_time{};
  /// Batches per Test() pass (-1: all).
  int64_t limit_test_batches = -1;
  /// Scales every learning rate (optimizers' groups and schedulers' base lrs) by dist::ScaleLearningRate for the
  /// world size, once, when a fit starts fresh.
  dist::LrScaling scale_lr = dist::LrScaling::kNone;
  /// "32" / "32-true" (default), "bf16-mixed" (autocast to bfloat16 on CPU or CUDA), "16-mixed" (CUDA only:
  /// autocast to float16 with a dynamic GradScaler whose state is checkpointed).
  std::string precision = "32";
  /// Rank 0's progress output: "auto" (a live bar with carriage-return updates when the stream is a terminal, the
  /// plain periodic lines otherwise), "bar" or "lines". progress_every_n_steps = 0 silences both.
  std::string progress_style = "auto";
  /// Logs the final model to `run` at the end of a fit (rank 0, lakerun::track::LogModel under this artifact path;
  /// "": not logged). Needs `tracker`.
  std::string log_model_artifact_path{};
  /// The tracker owning `run` (not owned); needed to log the model.
  track::Tracker* tracker = nullptr;
  /// Lightning's accelerator: where the module and each batch's tensors go. "auto" (default): the process group's
  /// device when it is CUDA (NCCL: each rank's own GPU), cuda:0 in a single process with CUDA, else the CPU; "cpu";
  /// "cuda" (or "gpu"): a ConfigError without CUDA. The module moves before ConfigureOptimizers(), checkpoints load
  /// onto the device, and batches move (non-blocking from pinned memory) before each step; Batch::sample_ids stay
  /// on the CPU.
  std::string accelerator = "auto";
};

/// Lightning's LightningDataModule: where the train / val / test batches come from. The sources are owned by the
/// DataModule and must stay valid until the Trainer call that asked for them returns.
class DataModule {
 public:
  virtual ~DataModule() = default;
  /// Once per Trainer call on rank 0 (then every rank waits): download or prepare files.
  virtual void PrepareData() {}
  /// On every rank: "fit", "validate" or "test".
  virtual void Setup(const std::string& stage) {}
  virtual BatchSource* TrainSource() = 0;
  /// nullptr: none.
  virtual BatchSource* ValSource() { return nullptr; }
  virtual BatchSource* TestSource() { return nullptr; }
  virtual void Teardown(const std::string& stage) {}
};

class Trainer {
 public:
  /// Throws ConfigError naming the option for a bad value.
  Trainer(TrainerOptions options, std::vector<std::shared_ptr<Callback>> callbacks = {});
  ~Trainer();

  /// Fits; `ckpt_path` = "" (fresh), a path, "last" (newest last*.ckpt of the checkpoint callbacks) or "best".
  void Fit(Module& module, BatchSource& train, BatchSource* val = nullptr, const std::string& ckpt_path = "");
  /// One validation / test pass; returns the epoch metrics. With `ckpt_path` (a path, "last" or "best", as for Fit)
  /// the module's weights are first loaded from that checkpoint, as Lightning's validate/test(ckpt_path=...) do;
  /// a checkpoint that cannot be found is a ConfigError.
  MetricMap Validate(Module& module, BatchSource& val, const std::string& ckpt_path = "");
  MetricMap Test(Module& module, BatchSource& test, const std::string& ckpt_path = "");
  /// The same through a DataModule (PrepareData, Setup(stage), its sources, Teardown(stage)). Throws ConfigError
  /// when the DataModule has no source for the stage.
  void Fit(Module& module, DataModule& datamodule, const std::string& ckpt_path = "");
  MetricMap Validate(Module& module, DataModule& datamodule);
  MetricMap Test(Module& module, DataModule& datamodule);

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
