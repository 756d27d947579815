// ModelCheckpoint: save checkpoints periodically and keep the best k by a monitored metric (PyTorch Lightning 2.6).
//
//   ModelCheckpointOptions options;
//   options.dirpath = "/runs/a/checkpoints";
//   options.filename = "{epoch:02d}-{val_loss:.2f}";
//   options.monitor = "val_loss";
//   options.save_last = true;
//   options.save_top_k = 3;
//   ModelCheckpoint ckpt(options);
//   -> /runs/a/checkpoints/epoch=02-val_loss=0.32.ckpt, ..., last.ckpt
//
// - Template fields `{name[:spec]}` take trainer.callback_metrics plus `epoch` and `step`; a missing key formats as
//   0. Specs follow Python's format mini-language for numbers: [0][width][.precision][d|f|e|g]. With
//   auto_insert_metric_name each field becomes `name={name[:spec]}`.
// - An existing file gets `-v1`, `-v2`, ... (enable_version_counter).
// - Triggers: every_n_train_steps (global_step % n == 0, at train batch end) or every_n_epochs ((epoch+1) % n == 0);
//   neither given means every_n_epochs = 1. Never saves twice at the same global step, under fast_dev_run, outside
//   fitting or during the sanity check.
// - Top-k: a score enters when fewer than k are kept or it beats the k-th (strict); all ranks must agree. NaN is
//   stored as the worst value. The displaced k-th file is deleted (rank 0), never outside dirpath and never the
//   checkpoint the run resumed from, unless the fit resumed by itself after a restart (TrainerState::
//   resumed_after_restart: the directory is then the job's own).
// - Writes are atomic (temp file, fsync, rename) and made by rank 0 only, then every rank waits at a barrier. Each
//   file carries a digest that resume checks (docs/trainer.md, "Checkpoint integrity"); before writing, rank 0
//   removes the temporaries (`*.ckpt.tmp.<pid>.<n>`) that crashed saves left in the directory and no live process
//   owns.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "lakerun/train/callback.h"

namespace lakerun::train {

/// Lightning's ModelCheckpoint arguments, in its order (C++20 designated initializers may follow its keywords).
struct ModelCheckpointOptions {
  /// Empty: <default_root_dir>/checkpoints, resolved in Setup().
  std::string dirpath{};
  /// Empty: "{epoch}-{step}".
  std::string filename{};
  /// Empty: no monitor (keep the latest).
  std::string monitor{};
  bool verbose = false;
  /// Also write last.ckpt after every save.
  bool save_last = false;
  /// -1: keep all; 0: none; k: the k best (with no monitor only -1, 0 or 1).
  int64_t save_top_k = 1;
  MonitorMode mode = MonitorMode::kMin;
  bool auto_insert_metric_name = true;
  std::optional<int64_t> every_n_train_steps{};
  std::optional<int64_t> every_n_epochs{};
  /// nullopt: decided from the validation schedule (see trainer.md §2.2).
  std::optional<bool> save_on_train_epoch_end{};
  bool enable_version_counter = true;
  /// Also log every checkpoint written as an artifact of the Trainer's run, under "checkpoints/" (rank 0; needs
  /// TrainerOptions::run).
  bool log_checkpoints_to_run = false;
};

class ModelCheckpoint : public Callback {
 public:
  static constexpr const char* kExtension = ".ckpt";
  static constexpr const char* kNameLast = "last";

  /// Throws ConfigError for save_top_k < -1, negative or combined triggers, or save_top_k > 1 without a monitor,
  /// naming the option and value.
  explicit ModelCheckpoint(ModelCheckpointOptions options);

  std::string state_key() const override;
  std::string monitor() const override { return options_.monitor; }
  MonitorMode mode() const override { return options_.mode; }
  /// {monitor, best_model_score, best_model_path, current_score, dirpath, best_k_models, kth_best_model_path,
  ///  kth_value, last_model_path}
  StateDict state_dict() const override;
  /// Restores everything when dirpath is unchanged; otherwise only best_model_path.
  void load_state_dict(const StateDict& state) override;
  bool is_checkpoint_callback() const override { return true; }

  void Setup(TrainerState& state) override;
  void OnTrainBatchEnd(TrainerState& state) override;
  void OnTrainEpochEnd(TrainerState& state) override;
  void OnValidationEnd(TrainerState& state) override;
  void OnTrainEnd(TrainerState& state) override;

  /// The file name for these metrics (no directory): template, metric names, `-v<ver>` when ver > 0, extension.
  std::string FormatCheckpointName(const MetricMap& metrics, int64_t epoch, int64_t step,
                                   const std::string& prefix_template = "", int64_t ver = 0) const;

  const std::string& dirpath() const { return dirpath_; }
  const std::string& best_model_path() const { return best_model_path_; }
  std::optional<float> best_model_score() const { return best_model_score_; }
  const std::string& last_model_path() const { return last_model_path_; }
  const std::string& kth_best_model_path() const { return kth_best_model_path_; }
  float kth_value() const { return kth_value_; }
  const std::map<std::string, float>& best_k_models() const { return best_k_models_; }
  int64_t every_n_epochs() const { return every_n_epochs_; }
  int64_t every_n_train_steps() const { return every_n_train_steps_; }

 private:
  bool ShouldSkipSaving(const TrainerState& state) const;
  bool SaveOnTrainEpochEnd(const TrainerState& state) const;
  void SaveTopK(TrainerState& state);
  void SaveLast(TrainerState& state);
  void SaveNoneMonitor(TrainerState& state);
  void UpdateBestAndSave(TrainerState& state, float current);
  bool CheckMonitorTopK(TrainerState& state, float current);
  std::string InterpolatedPath(const TrainerState& state, const std::string& del_filepath);
  void SaveCheckpoint(TrainerState& state, const std::string& filepath);
  bool ShouldRemove(const TrainerState& state, const std::string& previous, const std::string& current) const;
  void RemoveCheckpoint(TrainerState& state, const std::string& path);
  bool MonitorOp(float a, float b) const { return max_mode_ ? a > b : a < b; }

  ModelCheckpointOptions options_;
  bool max_mode_ = false;
  int64_t every_n_epochs_ = 0;
  int64_t every_n_train_steps_ = 0;
  std::string dirpath_;
  std::string filename_;
  std::optional<float> best_model_score_;
  std::optional<float> current_score_;
  std::string best_model_path_;
  std::map<std::string, float> best_k_models_;
  std::string kth_best_model_path_;
  float kth_value_;
  std::string last_model_path_;
  std::string last_checkpoint_saved_;
  int64_t last_global_step_saved_ = -1;
};

}  // namespace lakerun::train
