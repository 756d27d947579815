// Trainer::Impl: the running fit's state shared by trainer.cc (loops) and checkpoint_io.cc (checkpoint format).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lakerun/train/trainer.h"
#include "train/checkpoint_digest.h"
#include "train/data_parallel.h"
#include "train/precision.h"
#include "train/progress.h"

namespace lakerun::train {

class Trainer::Impl {
 public:
  Module* module = nullptr;
  Optimizers optimizers;
  std::vector<LRSchedulerConfig> schedulers;
  DataParallel parallel;  // the strategy's wrapper around the module during a fit
  std::unique_ptr<RankSync> sync;
  std::unique_ptr<MetricSync> metric_sync;
  std::unique_ptr<LoggedMetrics> metrics;
  std::unique_ptr<PrecisionPlugin> precision;
  std::set<const BatchSource*> warned_unsharded;  // sources rank 0 has warned about (ShardForRanks)
  int64_t epochs_processed = 0;  // completed train epochs (Lightning's epoch_progress.current.processed)
  int64_t batches_in_epoch = 0;  // batches done in the running epoch (0 at an epoch boundary)
  int64_t total_batches = 0;     // training batches done over all epochs (Lightning's total batch_idx + 1)
  std::map<std::string, int64_t> loader_state;
  MetricMap pending_step;  // step metrics since the last step that reached the run

  /// The checkpoint bytes of the current state, sealed with their digest (docs/trainer.md, "Checkpoint format"), on
  /// rank 0; empty elsewhere. Every rank calls it: a sharded strategy gathers the optimizer state from all of them.
  std::string DumpCheckpoint(const Trainer& t);
  /// Restores a checkpoint into `t` (module, callbacks, optimizers, schedulers, scaler, loop progress, RNG).
  void LoadCheckpoint(Trainer& t, const VerifiedCheckpoint& checkpoint, int64_t max_epochs);
  /// "last" / "best" / a path / "" -> the checkpoint to resume from, read and verified (std::nullopt for none).
  /// "last" takes the newest that verifies (resume_choice.h); a damaged "best" or path is a CorruptDataError.
  /// `caller` ("Fit", "Validate", "Test") names the call in errors.
  std::optional<VerifiedCheckpoint> ReadCkptPath(const Trainer& t, const std::string& ckpt_path,
                                                 const char* caller) const;
  /// The directories of the ModelCheckpoint callbacks.
  static std::vector<std::string> CheckpointDirs(const Trainer& t);
  /// The newest checkpoint in those directories that verifies (ckpt_path="last"), or std::nullopt when there is none.
  static std::optional<VerifiedCheckpoint> ReadNewest(const Trainer& t);
  /// After a restarted job resumed from t.state().ckpt_path: rank 0 removes the checkpoint files the failed attempt
  /// wrote beyond it (resume_choice.h) and the temporaries of its interrupted saves, between two barriers.
  static void ClearBeyondTheResumePoint(Trainer& t);
  /// Loads only the weights of the checkpoint `ckpt_path` names (for Validate/Test); "" does nothing.
  void LoadWeightsFor(Trainer& t, Module& module, const std::string& ckpt_path, const char* caller) const;
  /// Under several ranks (and TrainerOptions::use_distributed_sampler), hands `source` this rank's place; rank 0
  /// warns once per source that reads every sample on every rank. `role` names it ("train", "val", "test").
  void ShardForRanks(const TrainerOptions& options, BatchSource& source, const char* role);
};

}  // namespace lakerun::train
