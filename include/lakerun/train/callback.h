// Callbacks: what the Trainer tells them, how they keep state across checkpoints, how ranks agree on decisions.
//
//   lakerun::train::EarlyStoppingOptions es;
//   es.monitor = "val_loss";  es.min_delta = 0.01;  es.patience = 10;
//   lakerun::train::EarlyStopping stop(es);
//   TrainerState state;  state.callback_metrics["val_loss"] = 0.79f;
//   stop.OnValidationEnd(state);  if (state.should_stop) ...
//
// Semantics follow PyTorch Lightning 2.6 (docs/trainer.md). Monitored values are float32, as Lightning's logged
// tensors, and every comparison is made in float32 so decisions match Lightning's bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/train/enums.h"

namespace lakerun::dist {
class Context;
}

namespace torch::optim {
class Optimizer;
}

namespace lakerun::train {

/// trainer.callback_metrics: the latest value of every logged key.
using MetricMap = std::map<std::string, float>;

/// One value of a callback's state: an integer, a float, a string, or a table of scores by name (best_k_models).
using StateValue = std::variant<int64_t, double, std::string, std::map<std::string, double>>;

/// A callback's state_dict(). Accessors throw CorruptDataError naming the key when it is missing or of another type.
class StateDict {
 public:
  void Set(const std::string& key, StateValue value) { values_[key] = std::move(value); }
  bool Has(const std::string& key) const { return values_.count(key) != 0; }
  int64_t GetInt(const std::string& key) const;
  double GetDouble(const std::string& key) const;
  const std::string& GetString(const std::string& key) const;
  const std::map<std::string, double>& GetTable(const std::string& key) const;
  const std::map<std::string, StateValue>& values() const { return values_; }
  bool operator==(const StateDict& o) const { return values_ == o.values_; }

  /// A self-describing text form (one "type key value" entry per line, strings length-prefixed); Decode(Encode(s))
  /// == s, doubles round-trip exactly. Decode throws CorruptDataError naming the line at fault.
  std::string Encode() const;
  static StateDict Decode(const std::string& text);

 private:
  std::map<std::string, StateValue> values_;
};

/// How ranks agree on a decision. Every rank must make the same calls in the same order.
class RankSync {
 public:
  virtual ~RankSync() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// Logical OR of `decision` over all ranks (Lightning's reduce_boolean_decision(all=False)).
  virtual bool Any(bool decision) = 0;
  /// Logical AND of `decision` over all ranks (reduce_boolean_decision(all=True)).
  virtual bool All(bool decision) = 0;
  /// Returns once every rank has called it.
  virtual void Barrier() = 0;
  /// Rank 0's `decision` on every rank.
  bool FromRankZero(bool decision) { return Any(rank() == 0 && decision); }
};

/// One process: decisions are its own.
class LocalRankSync final : public RankSync {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  bool Any(bool decision) override { return decision; }
  bool All(bool decision) override { return decision; }
  void Barrier() override {}
};

/// All-reduces decisions over a lakerun::dist context (bounded by ctx.timeout()). `ctx` must outlive the result.
std::unique_ptr<RankSync> NewDistRankSync(dist::Context& ctx);

struct LRSchedulerConfig;

/// The Trainer's view given to callbacks. Callbacks read it and may set should_stop.
struct TrainerState {
  /// Which entry point is running (enums.h).
  TrainerFn fn = TrainerFn::kFitting;
  bool sanity_checking = false;
  /// fast_dev_run batches (0: off). Checkpointing and early stopping are disabled when set.
  int64_t fast_dev_run = 0;
  int64_t current_epoch = 0;
  /// Optimizer steps taken so far.
  int64_t global_step = 0;
  double val_check_interval = 1.0;
  /// 0 means validation is not scheduled by epochs.
  int64_t check_val_every_n_epoch = 1;
  /// Whether this fit has validation batches at all.
  bool has_val_batches = true;
  /// Whether a validation loop has completed in this fit (a missing ModelCheckpoint monitor is then an error).
  bool validation_has_run = false;
  MetricMap callback_metrics;
  bool should_stop = false;
  std::string default_root_dir = ".";
  /// The checkpoint this run resumed from ("" if none); never deleted by ModelCheckpoint, unless the fit resumed by
  /// itself after a restart.
  std::string ckpt_path;
  /// The fit resumed from the newest checkpoint because `lakerun launch` restarted the job (Trainer::Fit with
  /// ckpt_path "" or "last"): the checkpoints it resumed among are the job's own, so ModelCheckpoint prunes ckpt_path
  /// like any other file.
  bool resumed_after_restart = false;
  /// Rank agreement; nullptr means a single process.
  RankSync* sync = nullptr;
  /// Where checkpoints go; nullptr means UriFileSystem() (local paths and object-store URIs).
  FileSystem* fs = nullptr;
  /// The bytes of a checkpoint of the current training state. Called on every rank when a checkpoint is written
  /// (under a sharded strategy it gathers the optimizer state from all ranks); only rank 0's bytes are written.
  std::function<std::string()> dump_checkpoint;
  /// The running fit's optimizers and lr scheduler configs (nullptr outside a fit).
  const std::vector<std::shared_ptr<torch::optim::Optimizer>>* optimizers = nullptr;
  const std::vector<LRSchedulerConfig>* lr_scheduler_configs = nullptr;
  /// TrainerOptions::log_every_n_steps: step logging happens when (global_step + 1) % n == 0 or should_stop.
  int64_t log_every_n_steps = 50;
  /// Sends metrics to the loggers at the current step (Lightning's logger.log_metrics with _batches_that_stepped)
  /// and records them in logged and callback metrics; set by the Trainer during a fit, empty otherwise.
  std::function<void(const MetricMap&)> log_metrics;
  /// Logs a written checkpoint file as an artifact of the run (rank 0); empty when the Trainer has no run.
  std::function<void(const std::string& path)> log_artifact;

  RankSync& Sync() const;
  FileSystem& Fs() const;
};

/// Base class of every callback. Hooks default to doing nothing.
class Callback {
 public:
  virtual ~Callback() = default;
  /// Identifies this callback's state in a checkpoint (Lightning's state_key, e.g.
  /// "EarlyStopping{'monitor': 'val_loss', 'mode': 'min'}").
  virtual std::string state_key() const = 0;
  virtual StateDict state_dict() const { return {}; }
  virtual void load_state_dict(const StateDict& state) {}
  /// Monitoring callbacks run after the module's on_train_epoch_end; checkpoint callbacks run last.
  virtual bool is_checkpoint_callback() const { return false; }
  /// The metric this callback watches ("" for none) and the direction in which it improves. The Trainer records
  /// a checkpoint callback's (else the first other one's) in its run's tags lakerun.monitor and lakerun.monitor_mode.
  virtual std::string monitor() const { return ""; }
  virtual MonitorMode mode() const { return MonitorMode::kMin; }

  virtual void Setup(TrainerState& state) {}
  virtual void OnTrainStart(TrainerState& state) {}
  virtual void OnTrainEpochStart(TrainerState& state) {}
  virtual void OnTrainBatchStart(TrainerState& state) {}
  virtual void OnTrainBatchEnd(TrainerState& state) {}
  virtual void OnTrainEpochEnd(TrainerState& state) {}
  virtual void OnValidationEnd(TrainerState& state) {}
  virtual void OnTrainEnd(TrainerState& state) {}
};

/// Python's repr of a string as Lightning's state keys show it ('val_loss'), or None for an empty one.
std::string PyRepr(const std::string& s, bool none_if_empty = false);

}  // namespace lakerun::train
