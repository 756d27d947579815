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
//   TrainerOptions options;
//   options.max_epochs = 4;
//   ModelCheckpointOptions checkpoint;
//   checkpoint.save_last = true;
//   Trainer trainer(options, {std::make_shared<ModelCheckpoint>(checkpoint)});
//   trainer.Fit(net, train_source, &val_source);            // later: trainer.Fit(net, train, &val, "last");
//
// Under N ranks the Trainer shards every lakerun::data::Loader that was not given its own rank (batch_source.h), so
// the code above trains each rank on its 1/N of the table (TrainerOptions::use_distributed_sampler).
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
#include "lakerun/track/run.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/batch_source.h"
#include "lakerun/train/callback.h"
#include "lakerun/train/data_module.h"
#include "lakerun/train/enums.h"
#include "lakerun/train/logged_metrics.h"
#include "lakerun/train/lr_scheduler.h"
#include "lakerun/train/strategy.h"

namespace lakerun::dist {
class Context;
}

namespace lakerun::train {

using OptimizerList = std::vector<std::shared_ptr<torch::optim::Optimizer>>;

/// The metric a fit logs when `lakerun launch` restarted its job: the attempt, at the step the fit starts from.
inline constexpr const char* kRestartCountMetric = "restart_count";

/// What Module::ConfigureOptimizers() returns: the optimizers (it is a vector of them, so `return {sgd};` works)
/// plus Lightning's lr scheduler configs (lr_scheduler.h), stepped by the Trainer (docs/trainer.md, "LR schedulers").
struct Optimizers : OptimizerList {
  using OptimizerList::OptimizerList;
  Optimizers() = default;
  Optimizers(OptimizerList optimizers, std::vector<LRSchedulerConfig> schedulers = {})
      : OptimizerList(std::move(optimizers)), lr_schedulers(std::move(schedulers)) {}
  std::vector<LRSchedulerConfig> lr_schedulers;
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

  LoggedMetrics* metrics_ = nullptr;
  LogHook hook_ = LogHook::kTrainingStep;
  int64_t batch_size_ = 1;
  c10::Device device_ = c10::Device(c10::kCPU);
};

/// Lightning's Trainer arguments, in the order of its signature (accelerator, strategy, precision, the logger,
/// fast_dev_run, max_epochs, ...), so C++20 designated initializers written in Lightning's keyword order compile;
/// lakerun's own settings follow. Every field has Lightning's default where Lightning has the argument.
struct TrainerOptions {
  /// Where the module and each batch's tensors go. kAuto: the process group's device when it is CUDA (NCCL: each
  /// rank's own GPU), cuda:0 in a single process with CUDA, else the CPU; kCpu; kCuda: a ConfigError without CUDA.
  /// The module moves before ConfigureOptimizers(), checkpoints load onto the device, and batches move (non-blocking
  /// from pinned memory) before each step; Batch::sample_ids stay on the CPU.
  Accelerator accelerator = Accelerator::kAuto;
  /// How a fit spreads over the ranks (strategy.h): kDdp replicates model, gradients and optimizer state; kZero1
  /// and kZero2 shard the optimizer state, and the gradients too, and kFsdp the parameters as well (units: `fsdp`),
  /// all with DDP's results (docs/trainer.md, "Strategies"). The sharded ones need SGD, Adam, AdamW, RMSprop or
  /// Adagrad and a precision other than k16Mixed. After a kFsdp fit the module holds its full parameters again.
  Strategy strategy = Strategy::kDdp;
  /// k32True (default); kBf16Mixed: autocast to bfloat16 on CPU or CUDA; k16Mixed (CUDA only): autocast to float16
  /// with a dynamic GradScaler whose state is checkpointed.
  Precision precision = Precision::k32True;
  /// Lightning's logger: where logged metrics go (rank 0 only; not owned, must outlive the Trainer); nullptr:
  /// nowhere. A fit also records its checkpoint callback's monitor in the run's tags (lakerun.monitor, .monitor_mode).
  track::Run* run = nullptr;
  /// n > 0: n batches per loop, one epoch, no sanity check, no checkpoints, no early stopping.
  int64_t fast_dev_run = 0;
  /// -1: unlimited. With neither max_epochs nor max_steps set, 1000 epochs (Lightning's default).
  std::optional<int64_t> max_epochs{};
  int64_t min_epochs = 0;
  int64_t max_steps = -1;
  /// Optimizer steps before should_stop may end the fit (-1: none).
  int64_t min_steps = -1;
  /// Wall-clock budget of the fit; once spent, should_stop is set at the next batch end (rank 0 decides).
  std::optional<std::chrono::milliseconds> max_time{};
  /// Batches per epoch (-1: all).
  int64_t limit_train_batches = -1;
  int64_t limit_val_batches = -1;
  /// Batches per Test() pass (-1: all).
  int64_t limit_test_batches = -1;
  /// When validation runs inside a training epoch: a double in (0, 1] is a fraction of the epoch (every
  /// max(1, int(batches * f)) batches), an integer every that many training batches (counted across epochs when
  /// check_val_every_n_epoch is 0, i.e. None). Validation also runs when should_stop is set and the fit may stop.
  ValCheckInterval val_check_interval = 1.0;
  int64_t check_val_every_n_epoch = 1;
  /// Validation batches run before fitting (-1: all); their metrics are discarded.
  int64_t num_sanity_val_steps = 2;
  /// Step metrics reach `run` when (optimizer steps before this one + 1) % log_every_n_steps == 0, or on should_stop.
  int64_t log_every_n_steps = 50;
  int64_t accumulate_grad_batches = 1;
  /// 0: no clipping.
  double gradient_clip_val = 0.0;
  GradientClipAlgorithm gradient_clip_algorithm = GradientClipAlgorithm::kNorm;
  /// use_deterministic_algorithms(true).
  bool deterministic = false;
  /// Under several ranks, hand every batch source the rank and world size before each loop, so a data::Loader whose
  /// LoaderOptions leave them unset reads only its rank's share (Lightning injects a DistributedSampler); a loader
  /// told world_size = 1 reads everything, and rank 0 warns once about it. false: sources are left as they are.
  bool use_distributed_sampler = true;
  std::string default_root_dir = ".";

  // --- lakerun's own settings. ---------------------------------------------------------------------------------
  /// Seeds torch at the start of Fit when set (Lightning's seed_everything).
  std::optional<uint64_t> seed{};
  /// Join lakerun::dist (Init()) and wrap the module for `strategy` when the world size is > 1.
  bool distributed = true;
  /// The lakerun::dist job to run in (not owned; must outlive every call); nullptr: lakerun::dist::Init()'s. For
  /// programs that create their own Context, and tests that run ranks as threads.
  dist::Context* dist_context = nullptr;
  /// Bounds joining the process group and every collective when the Trainer initializes it (InitOptions::timeout):
  /// a rank that waits longer for its peers fails with a CommTimeout instead of waiting on. A group the program
  /// initialized itself keeps its own timeout.
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(5)};
  /// Scales every learning rate (optimizers' groups and schedulers' base lrs) by dist::ScaleLearningRate for the
  /// world size, once, when a fit starts fresh.
  dist::LrScaling scale_lr = dist::LrScaling::kNone;
  /// Rank 0 prints progress every this many optimizer steps and at each epoch end; 0: no progress output.
  int64_t progress_every_n_steps = 50;
  /// kAuto: a live bar with carriage-return updates when a terminal shows it (stderr is one, or `lakerun launch`
  /// runs on one), plain periodic lines otherwise; kBar; kLines.
  ProgressStyle progress_style = ProgressStyle::kAuto;
  /// Where progress goes; nullptr: stderr.
  std::ostream* progress_stream = nullptr;
  /// Logs the final model to `run` at the end of a fit (rank 0, lakerun::track::LogModel under this artifact path;
  /// "": not logged). Needs `tracker`.
  std::string log_model_artifact_path{};
  /// The tracker owning `run` (not owned); needed to log the model.
  track::Tracker* tracker = nullptr;
  /// Strategy::kFsdp's units.
  FsdpOptions fsdp{};
};

class Trainer {
 public:
  /// Throws ConfigError naming the option for a bad value.
  Trainer(TrainerOptions options, std::vector<std::shared_ptr<Callback>> callbacks = {});
  ~Trainer();

  /// Fits; `ckpt_path` = "" (fresh), a path, "last" (newest last*.ckpt of the checkpoint callbacks) or "best".
  /// In a job `lakerun launch` restarted (LAKERUN_RESTART_COUNT > 0), "" resumes as "last" does, or starts fresh
  /// when there is no checkpoint yet; rank 0 logs which. With "" or "last" the files the failed attempt wrote beyond
  /// that checkpoint are then removed, so the job writes them again without -v1 copies (docs/trainer.md,
  /// "Restarts").
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
  // Tells the DataModule its rank and world size, runs PrepareData on rank 0 (the others wait), then Setup(stage).
  void PrepareDataModule(DataModule& datamodule, TrainerFn stage);

  std::unique_ptr<Impl> impl_;
  TrainerOptions options_;
  std::vector<std::shared_ptr<Callback>> callbacks_;
  TrainerState state_;
  MetricMap logged_;
};

}  // namespace lakerun::train
