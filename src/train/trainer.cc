#include "lakerun/train/trainer.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "lakerun/base/rank_environment.h"
#include "lakerun/dist/init.h"
#include "lakerun/track/report.h"
#include "lakerun/track/torch_model.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/model_checkpoint.h"
#include "train/checkpoint_temporaries.h"
#include "train/device.h"
#include "train/trainer_impl.h"

namespace lakerun::train {
namespace {

// The job a fit runs in: TrainerOptions::dist_context, else lakerun::dist's, joined here (bounded by
// collective_timeout) when the program has not; nullptr when not distributed.
dist::Context* JoinJob(const TrainerOptions& options) {
  if (!options.distributed) return nullptr;
  if (options.dist_context != nullptr) return options.dist_context;
  dist::InitOptions init;
  init.timeout = options.collective_timeout;
  return &dist::Init(init);
}

// The job already joined, without joining one: TrainerOptions::dist_context, else lakerun::dist's once initialised;
// nullptr when not distributed or not yet joined.
dist::Context* JoinedJob(const TrainerOptions& options) {
  if (!options.distributed) return nullptr;
  if (options.dist_context != nullptr) return options.dist_context;
  return dist::IsInitialized() ? &dist::CurrentContext() : nullptr;
}

// Resolves TrainerOptions::accelerator (against the process group once lakerun::dist is initialised) and moves the
// module's parameters and buffers there.
c10::Device ResolveAndMove(Module& module, const TrainerOptions& options) {
  DeviceFacts facts;
  facts.cuda_available = at::hasCUDA();
  if (const dist::Context* ctx = JoinedJob(options); ctx != nullptr) {
    facts.group_device = ctx->device();
    facts.world_size = ctx->world_size();
  }
  const c10::Device device = ChooseDevice(options.accelerator, facts);
  module.to(device);
  return device;
}

// Autocast runs where the module does. The Trainer's constructor made its Precision for the device it could guess
// before the process group was known; Validate and Test make it again when the module went elsewhere (a CUDA machine
// whose ranks share a Gloo group), instead of switching autocast on for a device nothing runs on.
void KeepPrecisionOn(std::unique_ptr<PrecisionPlugin>& plugin, Precision precision, c10::Device device) {
  if (plugin->device() != device.type()) plugin = std::make_unique<PrecisionPlugin>(precision, device.type());
}

// Records the metric the run's checkpoint callback (else the first monitoring one) watches, for `lakerun runs list`.
void TagMonitor(track::Run& run, const std::vector<std::shared_ptr<Callback>>& callbacks) {
  const Callback* chosen = nullptr;
  for (const auto& cb : callbacks) {
    if (cb->monitor().empty()) continue;
    if (chosen == nullptr || (cb->is_checkpoint_callback() && !chosen->is_checkpoint_callback())) chosen = cb.get();
  }
  if (chosen == nullptr) return;
  run.SetTag(track::kMonitorTag, chosen->monitor());
  run.SetTag(track::kMonitorModeTag, ToString(chosen->mode()));
}

// The one line a restarted job's rank 0 writes about where its fit starts.
void LogAutoResume(const RankEnvironment& place, const std::string& resumed, const std::vector<std::string>& dirs) {
  const std::string attempt =
      StrCat("Trainer: attempt ", place.restart_count, " of job ", place.job_id, " (restarted by lakerun launch)");
  if (!resumed.empty()) {
    LAKERUN_LOG(Info) << attempt << " resumes from " << resumed << ", the newest checkpoint that verifies";
    return;
  }
  std::string where;
  for (const std::string& dir : dirs) where += (where.empty() ? "" : ", ") + dir;
  LAKERUN_LOG(Info) << attempt << " starts fresh: no checkpoint yet"
                    << (dirs.empty() ? std::string(" (no ModelCheckpoint callback)") : " in " + where);
}

int64_t InferBatchSize(const Batch& batch) {
  if (batch.sample_ids.defined()) return batch.sample_ids.size(0);
  for (const auto& [name, t] : batch.tensors) {
    if (t.defined() && t.dim() > 0) return t.size(0);
  }
  return 1;
}

// Sends metrics to the run on rank 0 at `step` (Lightning's _batches_that_stepped axis), with an `epoch` key unless
// `add_epoch` is false (callbacks calling logger.log_metrics directly).
void SendToRun(track::Run* run, const TrainerState& state, const MetricMap& metrics, int64_t step,
               bool add_epoch = true) {
  if (run == nullptr || metrics.empty() || state.Sync().rank() != 0 || state.fast_dev_run > 0) return;
  std::map<std::string, double> out(metrics.begin(), metrics.end());
  if (add_epoch) out["epoch"] = static_cast<double>(state.current_epoch);
  run->LogMetrics(out, step);
}

// Lightning's _update_learning_rates: steps the schedulers of `interval` whose frequency divides idx + 1 (idx: the
// batch in the epoch for kStep, the epoch for kEpoch); `plateau` selects the monitoring schedulers or the others.
void UpdateLrSchedulers(Module& module, std::vector<LRSchedulerConfig>& configs, const TrainerState& state,
                        Interval interval, bool plateau, int64_t batch_idx) {
  for (size_t i = 0; i < configs.size(); ++i) {
    LRSchedulerConfig& c = configs[i];
    if (plateau != c.scheduler->monitors_metric() || c.interval != interval) continue;
    const int64_t idx = (interval == Interval::kStep ? batch_idx : state.current_epoch) + 1;
    if (idx % c.frequency != 0) continue;
    std::optional<double> metric;
    if (plateau) {
      auto it = state.callback_metrics.find(c.monitor);
      if (it == state.callback_metrics.end()) {
        std::string available;
        for (const auto& [k, v] : state.callback_metrics) available += (available.empty() ? "'" : ", '") + k + "'";
        LAKERUN_CHECK_AS(ConfigError, !c.strict, "lr scheduler ", i, ": ", c.scheduler->class_name(),
                         " conditioned on metric '", c.monitor, "' which is not available. Available metrics are: [",
                         available, "]. Condition can be set using LRSchedulerConfig::monitor");
        LAKERUN_LOG(Warning) << c.scheduler->class_name() << " conditioned on metric '" << c.monitor
                             << "' which is not available but strict is set to false. Skipping learning rate update.";
        continue;
      }
      metric = static_cast<double>(it->second);
    }
    module.LrSchedulerStep(*c.scheduler, metric);
  }
}

// Lightning's val_check_batch: validate after every this many batches; -1 (inf): at the epoch's last batch.
int64_t ValCheckBatch(const TrainerOptions& o, std::optional<int64_t> max_batches) {
  const ValCheckInterval& v = o.val_check_interval;
  if (v.batches > 0) {
    LAKERUN_CHECK_AS(ConfigError,
                     !max_batches.has_value() || v.batches <= *max_batches || o.check_val_every_n_epoch == 0,
                     "Trainer: val_check_interval (", v.batches, ") must be less than or equal to the number of the "
                     "training batches (", max_batches.value_or(0), "). To disable validation set limit_val_batches "
                     "to 0; to validate based on the total training batches, set check_val_every_n_epoch to 0 (None)");
    return v.batches;
  }
  // 1.0: the epoch's last batch (what int(n * 1.0) is when n is exact, and robust to a count that is not).
  if (v.fraction == 1.0) return -1;
  if (!max_batches.has_value()) {
    LAKERUN_THROW(ConfigError, "Trainer: val_check_interval=", v.fraction,
                     " (a fraction of the epoch) needs a train source whose num_batches() is known, or "
                     "limit_train_batches; use 1.0 or an integer");
  }
  return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(*max_batches) * v.fraction));
}

}  // namespace

Trainer::Trainer(TrainerOptions options, std::vector<std::shared_ptr<Callback>> callbacks)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
  const auto& o = options_;
  LAKERUN_CHECK_AS(ConfigError, o.max_epochs.value_or(0) >= -1, "Trainer: max_epochs must be >= -1, got ",
                   o.max_epochs.value_or(0));
  LAKERUN_CHECK_AS(ConfigError, o.max_steps >= -1, "Trainer: max_steps must be >= -1, got ", o.max_steps);
  LAKERUN_CHECK_AS(ConfigError, o.collective_timeout.count() > 0, "Trainer: collective_timeout must be positive, got ",
                   o.collective_timeout.count(), " ms");
  LAKERUN_CHECK_AS(ConfigError, o.min_epochs >= 0, "Trainer: min_epochs must be >= 0, got ", o.min_epochs);
  LAKERUN_CHECK_AS(ConfigError, o.min_steps >= -1, "Trainer: min_steps must be >= -1, got ", o.min_steps);
  LAKERUN_CHECK_AS(ConfigError, o.limit_train_batches >= -1, "Trainer: limit_train_batches must be >= -1, got ",
                   o.limit_train_batches);
  LAKERUN_CHECK_AS(ConfigError, o.limit_val_batches >= -1, "Trainer: limit_val_batches must be >= -1, got ",
                   o.limit_val_batches);
  LAKERUN_CHECK_AS(ConfigError, o.limit_test_batches >= -1, "Trainer: limit_test_batches must be >= -1, got ",
                   o.limit_test_batches);
  LAKERUN_CHECK_AS(ConfigError, o.check_val_every_n_epoch >= 0,
                   "Trainer: check_val_every_n_epoch must be >= 1, or 0 (None), got ", o.check_val_every_n_epoch);
  LAKERUN_CHECK_AS(ConfigError, o.val_check_interval.batches >= 0, "Trainer: val_check_interval must be a positive "
                   "number of batches, got ", o.val_check_interval.batches);
  LAKERUN_CHECK_AS(ConfigError,
                   o.val_check_interval.batches > 0 ||
                       (o.val_check_interval.fraction > 0.0 && o.val_check_interval.fraction <= 1.0),
                   "Trainer: val_check_interval must be a fraction in (0, 1] or a number of batches, got ",
                   o.val_check_interval.fraction);
  LAKERUN_CHECK_AS(ConfigError, o.check_val_every_n_epoch != 0 || o.val_check_interval.batches > 0,
                   "Trainer: val_check_interval should be an integer when check_val_every_n_epoch is 0 (None), "
                   "found ", o.val_check_interval.fraction);
  LAKERUN_CHECK_AS(ConfigError, o.num_sanity_val_steps >= -1, "Trainer: num_sanity_val_steps must be >= -1, got ",
                   o.num_sanity_val_steps);
  LAKERUN_CHECK_AS(ConfigError, o.accumulate_grad_batches >= 1, "Trainer: accumulate_grad_batches must be >= 1, got ",
                   o.accumulate_grad_batches);
  LAKERUN_CHECK_AS(ConfigError, o.gradient_clip_val >= 0, "Trainer: gradient_clip_val must be >= 0, got ",
                   o.gradient_clip_val);
  LAKERUN_CHECK_AS(ConfigError, o.fast_dev_run >= 0, "Trainer: fast_dev_run must be >= 0, got ", o.fast_dev_run);
  LAKERUN_CHECK_AS(ConfigError, o.log_every_n_steps >= 1, "Trainer: log_every_n_steps must be >= 1, got ",
                   o.log_every_n_steps);
  LAKERUN_CHECK_AS(ConfigError, !o.max_time.has_value() || o.max_time->count() >= 0,
                   "Trainer: max_time must not be negative, got ", o.max_time.value_or(std::chrono::milliseconds(0)).count(),
                   " ms");
  LAKERUN_CHECK_AS(ConfigError, o.strategy == Strategy::kDdp || o.precision != Precision::k16Mixed,
                   "Trainer: strategy '", ToString(o.strategy), "' does not support precision '16-mixed' (its grad "
                   "scaler steps whole optimizers); use \"bf16-mixed\" or strategy 'ddp'");
  LAKERUN_CHECK_AS(ConfigError, o.log_model_artifact_path.empty() || o.tracker != nullptr,
                   "Trainer: log_model_artifact_path='", o.log_model_artifact_path, "' needs TrainerOptions::tracker");
  // Both throw ConfigError naming the option; a fit checks again once the process group is known.
  const c10::Device device = ChooseDevice(o.accelerator, DeviceFacts{at::hasCUDA()});
  impl_->precision = std::make_unique<PrecisionPlugin>(o.precision, device.type());
  // Checkpoint callbacks run last (trainer.md §2.6), otherwise the given order.
  for (auto& cb : callbacks) {
    LAKERUN_CHECK_AS(ConfigError, cb != nullptr, "Trainer: a callback is null");
    if (!cb->is_checkpoint_callback()) callbacks_.push_back(cb);
  }
  for (auto& cb : callbacks) {
    if (cb->is_checkpoint_callback()) callbacks_.push_back(cb);
  }
}

Trainer::~Trainer() = default;

void Trainer::SaveCheckpoint(const std::string& path) {
  const std::string bytes = state_.dump_checkpoint();  // on every rank: a sharded strategy gathers state here
  if (state_.Sync().rank() == 0) {
    FileSystem& fs = state_.Fs();
    fs.CreateDirs(DirName(path));
    RemoveStaleCheckpointTemporaries(fs, DirName(path));
    fs.WriteAtomically(path, bytes);
  }
  state_.Sync().Barrier();
}

MetricMap Trainer::Validate(Module& module, BatchSource& val, const std::string& ckpt_path) {
  Impl& im = *impl_;
  const c10::Device device = ResolveAndMove(module, options_);
  module.device_ = device;
  KeepPrecisionOn(im.precision, options_.precision, device);
  im.LoadWeightsFor(*this, module, ckpt_path, "Validate");
  im.ShardForRanks(options_, val, "val");
  if (!im.metrics) im.metrics = std::make_unique<LoggedMetrics>(im.metric_sync.get());
  im.module = &module;
  state_.fn = TrainerFn::kValidating;
  const bool was_training = module.is_training();
  module.eval();
  torch::NoGradGuard no_grad;
  val.SetEpoch(0);
  int64_t idx = 0;
  module.metrics_ = im.metrics.get();
  while (options_.limit_val_batches < 0 || idx < options_.limit_val_batches) {
    auto batch = val.Next();
    if (!batch.has_value()) break;
    MoveBatch(*batch, device);
    module.hook_ = LogHook::kValidationStep;
    module.batch_size_ = InferBatchSize(*batch);
    PrecisionPlugin::AutocastScope autocast(*im.precision);
    module.ValidationStep(*batch, idx++);
  }
  module.hook_ = LogHook::kEpochEnd;
  module.OnValidationEpochEnd();
  MetricMap out = im.metrics->EndEpoch();
  module.metrics_ = nullptr;
  for (const auto& [k, v] : im.metrics->callback_metrics()) state_.callback_metrics[k] = v;
  for (const auto& [k, v] : out) logged_[k] = v;
  if (was_training) module.train();
  return out;
}

MetricMap Trainer::Test(Module& module, BatchSource& test, const std::string& ckpt_path) {
  Impl& im = *impl_;
  const c10::Device device = ResolveAndMove(module, options_);
  module.device_ = device;
  KeepPrecisionOn(im.precision, options_.precision, device);
  im.LoadWeightsFor(*this, module, ckpt_path, "Test");
  im.ShardForRanks(options_, test, "test");
  if (!im.metrics) im.metrics = std::make_unique<LoggedMetrics>(im.metric_sync.get());
  state_.fn = TrainerFn::kTesting;
  module.eval();
  torch::NoGradGuard no_grad;
  test.SetEpoch(0);
  int64_t idx = 0;
  module.metrics_ = im.metrics.get();
  while (options_.limit_test_batches < 0 || idx < options_.limit_test_batches) {
    auto batch = test.Next();
    if (!batch.has_value()) break;
    MoveBatch(*batch, device);
    module.hook_ = LogHook::kTestStep;
    module.batch_size_ = InferBatchSize(*batch);
    PrecisionPlugin::AutocastScope autocast(*im.precision);
    module.TestStep(*batch, idx++);
  }
  MetricMap out = im.metrics->EndEpoch();
  module.metrics_ = nullptr;
  for (const auto& [k, v] : im.metrics->callback_metrics()) state_.callback_metrics[k] = v;
  for (const auto& [k, v] : out) logged_[k] = v;
  return out;
}

void Trainer::Impl::ShardForRanks(const TrainerOptions& options, BatchSource& source, const char* role) {
  const dist::Context* job = options.use_distributed_sampler ? JoinedJob(options) : nullptr;
  if (job == nullptr || job->world_size() <= 1) return;
  const dist::Context& ctx = *job;
  const Sharding sharding = source.ShardByRank(ctx.rank(), ctx.world_size());
  if (sharding != Sharding::kUnsharded || ctx.rank() != 0 || !warned_unsharded.insert(&source).second) return;
  LAKERUN_LOG(Warning) << "Trainer: the " << role << " source, " << source.Describe() << ", reads every sample on "
                       << "each of the " << ctx.world_size() << " ranks (its LoaderOptions set world_size = 1): every "
                       << "rank sees the whole table. Leave LoaderOptions::rank and world_size unset and the Trainer "
                       << "gives each rank its share; to keep every sample on every rank without this warning, set "
                       << "TrainerOptions::use_distributed_sampler = false.";
}

void Trainer::PrepareDataModule(DataModule& dm, TrainerFn stage) {
  std::unique_ptr<RankSync> sync;
  if (dist::Context* ctx = JoinJob(options_); ctx != nullptr) {
    dm.rank_ = ctx->rank();
    dm.world_size_ = ctx->world_size();
    if (ctx->world_size() > 1) sync = NewDistRankSync(*ctx);
  }
  if (sync == nullptr || sync->rank() == 0) dm.PrepareData();
  if (sync != nullptr) sync->Barrier();
  dm.Setup(stage);
}

void Trainer::Fit(Module& module, DataModule& datamodule, const std::string& ckpt_path) {
  PrepareDataModule(datamodule, TrainerFn::kFitting);
  BatchSource* train = datamodule.TrainSource();
  LAKERUN_CHECK_AS(ConfigError, train != nullptr, "Trainer::Fit: the DataModule has no train source");
  Fit(module, *train, datamodule.ValSource(), ckpt_path);
  datamodule.Teardown(TrainerFn::kFitting);
}

MetricMap Trainer::Validate(Module& module, DataModule& datamodule) {
  PrepareDataModule(datamodule, TrainerFn::kValidating);
  BatchSource* val = datamodule.ValSource();
  LAKERUN_CHECK_AS(ConfigError, val != nullptr, "Trainer::Validate: the DataModule has no val source");
  MetricMap out = Validate(module, *val);
  datamodule.Teardown(TrainerFn::kValidating);
  return out;
}

MetricMap Trainer::Test(Module& module, DataModule& datamodule) {
  PrepareDataModule(datamodule, TrainerFn::kTesting);
  BatchSource* test = datamodule.TestSource();
  LAKERUN_CHECK_AS(ConfigError, test != nullptr, "Trainer::Test: the DataModule has no test source");
  MetricMap out = Test(module, *test);
  datamodule.Teardown(TrainerFn::kTesting);
  return out;
}

void Trainer::Fit(Module& module, BatchSource& train, BatchSource* val, const std::string& ckpt_path) {
  Impl& im = *impl_;
  im.module = &module;
  // Ranks.
  im.parallel = DataParallel();  // a previous Fit's hooks go before new ones are registered
  dist::Context* dist_context = JoinJob(options_);
  const int world_size = dist_context != nullptr ? dist_context->world_size() : 1;
  if (world_size > 1) {
    im.sync = NewDistRankSync(*dist_context);
    im.metric_sync = NewDistMetricSync(*dist_context);
  }
  im.metrics = std::make_unique<LoggedMetrics>(im.metric_sync.get());
  // Lightning's order: the module goes to its device before configure_optimizers.
  const c10::Device device = ResolveAndMove(module, options_);
  module.device_ = device;
  im.precision = std::make_unique<PrecisionPlugin>(options_.precision, device.type());
  im.pending_step.clear();
  state_ = TrainerState{};
  state_.fn = TrainerFn::kFitting;
  state_.fast_dev_run = options_.fast_dev_run;
  state_.check_val_every_n_epoch = options_.check_val_every_n_epoch;
  state_.val_check_interval = options_.val_check_interval.batches > 0
                                  ? static_cast<double>(options_.val_check_interval.batches)
                                  : options_.val_check_interval.fraction;
  state_.has_val_batches = val != nullptr && options_.limit_val_batches != 0;
  state_.default_root_dir = options_.default_root_dir;
  state_.sync = im.sync.get();
  state_.log_every_n_steps = options_.log_every_n_steps;
  state_.dump_checkpoint = [this] { return impl_->DumpCheckpoint(*this); };
  state_.log_metrics = [this](const MetricMap& m) {
    SendToRun(options_.run, state_, m, state_.global_step, /*add_epoch=*/false);
    for (const auto& [k, v] : m) {
      logged_[k] = v;
      state_.callback_metrics[k] = v;
    }
  };
  if (options_.run != nullptr) {
    state_.log_artifact = [this](const std::string& path) {
      if (state_.fast_dev_run > 0) return;
      options_.run->LogArtifact(path, "checkpoints");
      options_.run->Flush();  // the copy is made before top-k pruning may delete the file
    };
  }
  if (options_.seed.has_value()) torch::manual_seed(*options_.seed);
  if (options_.deterministic) at::globalContext().setDeterministicAlgorithms(true, false);

  im.optimizers = module.ConfigureOptimizers();
  LAKERUN_CHECK_AS(ConfigError, !im.optimizers.empty(), "Trainer::Fit: ConfigureOptimizers() returned no optimizer");
  im.schedulers = im.optimizers.lr_schedulers;
  for (size_t i = 0; i < im.schedulers.size(); ++i) ValidateLRSchedulerConfig(im.schedulers[i], i);
  state_.optimizers = &im.optimizers;
  state_.lr_scheduler_configs = &im.schedulers;
  for (auto& cb : callbacks_) cb->Setup(state_);

  // Resume.
  im.epochs_processed = 0;
  im.batches_in_epoch = 0;
  im.total_batches = 0;
  im.loader_state.clear();
  const bool rank0 = state_.Sync().rank() == 0;
  // A job `lakerun launch` restarted resumes by itself (as ckpt_path="last"), unless the caller chose a checkpoint
  // other than "last"; the checkpoints it resumes among are then the job's own (ClearBeyondTheResumePoint).
  const RankEnvironment place = DetectRankEnvironment();
  const bool auto_resume = (ckpt_path.empty() || ckpt_path == "last") && place.RestartedByLakerun();
  const std::optional<VerifiedCheckpoint> resume =
      auto_resume ? im.ReadNewest(*this) : im.ReadCkptPath(*this, ckpt_path, "Fit");
  if (auto_resume && rank0) LogAutoResume(place, resume ? resume->path : "", Impl::CheckpointDirs(*this));
  const int64_t max_epochs =
      options_.fast_dev_run > 0 ? 1 : options_.max_epochs.value_or(options_.max_steps == -1 ? 1000 : -1);
  const int64_t max_steps = options_.fast_dev_run > 0 ? options_.fast_dev_run : options_.max_steps;
  if (resume) {
    im.LoadCheckpoint(*this, *resume, max_epochs);
    state_.resumed_after_restart = auto_resume;
    if (auto_resume) Impl::ClearBeyondTheResumePoint(*this);
  } else if (options_.scale_lr != dist::LrScaling::kNone) {
    // The rules are linear in the base lr, so one factor scales optimizers and schedulers alike.
    const double factor = dist::ScaleLearningRate(1.0, world_size, options_.scale_lr);
    for (auto& opt : im.optimizers) {
      for (size_t g = 0; g < opt->param_groups().size(); ++g) {
        SetLearningRate(*opt, g, GetLearningRate(*opt, g) * factor);
      }
    }
    for (auto& c : im.schedulers) c.scheduler->ScaleLearningRates(factor);
  }
  // The strategy wraps the module only now: restoring a checkpoint re-seats the parameters' storage (Module::load
  // uses Tensor::set_), the gradient hooks must see the parameters the optimizer will step, and a sharded strategy
  // takes its part of the optimizer state the checkpoint restored.
  if (world_size > 1) {
    im.parallel = DataParallel(options_.strategy, options_.fsdp, *dist_context, module, im.optimizers);
  }
  if (rank0 && options_.run != nullptr && options_.fast_dev_run == 0) {
    const auto hparams = module.Hyperparameters();
    if (!hparams.empty()) options_.run->LogParams(hparams);
    TagMonitor(*options_.run, callbacks_);
    // Each attempt after a restart, at the step it starts from (the run also carries lakerun.restart_count).
    if (place.RestartedByLakerun()) {
      options_.run->LogMetric(kRestartCountMetric, place.restart_count, state_.global_step);
    }
  }
  // Sharding, before the sources are asked for their length.
  im.ShardForRanks(options_, train, "train");
  if (val != nullptr) im.ShardForRanks(options_, *val, "val");

  // Sanity check: a few validation batches whose metrics are discarded.
  if (val != nullptr && options_.fast_dev_run == 0 && options_.num_sanity_val_steps != 0 &&
      options_.limit_val_batches != 0) {
    state_.sanity_checking = true;
    TrainerOptions saved = options_;
    if (options_.num_sanity_val_steps > 0 &&
        (options_.limit_val_batches < 0 || options_.limit_val_batches > options_.num_sanity_val_steps)) {
      options_.limit_val_batches = options_.num_sanity_val_steps;
    }
    Validate(module, *val);
    options_ = saved;
    state_.fn = TrainerFn::kFitting;
    im.metrics->Reset();
    state_.callback_metrics.clear();
    logged_.clear();
    state_.sanity_checking = false;
  }

  const int64_t k = options_.accumulate_grad_batches;
  const int64_t limit_train = options_.fast_dev_run > 0 ? options_.fast_dev_run : options_.limit_train_batches;
  std::optional<int64_t> max_batches = train.num_batches();
  if (limit_train >= 0) max_batches = max_batches.has_value() ? std::min(*max_batches, limit_train) : limit_train;
  const bool validating = val != nullptr && options_.limit_val_batches != 0;
  const int64_t val_check_batch = validating ? ValCheckBatch(options_, max_batches) : -1;
  auto steps_done = [&] { return max_steps >= 0 && state_.global_step >= max_steps; };
  auto can_stop_early = [&] {
    return (options_.min_epochs == 0 || im.epochs_processed >= options_.min_epochs) &&
           (options_.min_steps <= 0 || state_.global_step >= options_.min_steps);
  };
  const auto started = std::chrono::steady_clock::now();
  Progress progress(options_, state_.Sync().rank());
  for (auto& cb : callbacks_) cb->OnTrainStart(state_);

  for (int64_t epoch = im.epochs_processed;; ++epoch) {
    // Lightning's fit_loop.done.
    if (max_batches.has_value() && *max_batches == 0) break;
    if (steps_done() || (max_epochs >= 0 && im.epochs_processed >= max_epochs)) break;
    if (state_.should_stop && can_stop_early()) break;
    state_.current_epoch = epoch;
    train.SetEpoch(static_cast<uint64_t>(epoch));
    int64_t batch_idx = 0;
    if (im.batches_in_epoch > 0) {  // resume inside this epoch
      train.load_state_dict(im.loader_state);
      batch_idx = im.batches_in_epoch;
    }
    const bool val_epoch = validating && (options_.check_val_every_n_epoch == 0 ||
                                          (epoch + 1) % options_.check_val_every_n_epoch == 0);
    module.train();
    progress.OnEpochStart(epoch, max_epochs, max_batches, batch_idx);
    for (auto& cb : callbacks_) cb->OnTrainEpochStart(state_);
    module.metrics_ = im.metrics.get();
    bool epoch_exhausted = false;
    std::optional<Batch> cur = (limit_train < 0 || batch_idx < limit_train) ? train.Next() : std::nullopt;
    if (cur.has_value()) MoveBatch(*cur, device);
    while (cur.has_value()) {
      im.loader_state = train.state_dict();
      std::optional<Batch> nxt = (limit_train < 0 || batch_idx + 1 < limit_train) ? train.Next() : std::nullopt;
      if (nxt.has_value()) MoveBatch(*nxt, device);  // a non-blocking copy overlaps this step
      const bool last = !nxt.has_value();
      const bool stepping = (batch_idx + 1) % k == 0 || last;
      for (auto& cb : callbacks_) cb->OnTrainBatchStart(state_);
      if (batch_idx % k == 0) {
        for (auto& opt : im.optimizers) opt->zero_grad();
      }
      module.metrics_ = im.metrics.get();
      module.hook_ = LogHook::kTrainingStep;
      module.batch_size_ = InferBatchSize(*cur);
      at::Tensor loss;
      {
        PrecisionPlugin::AutocastScope autocast(*im.precision);
        loss = module.TrainingStep(*cur, batch_idx);
      }
      LAKERUN_CHECK(loss.defined() && loss.numel() == 1, "training_step at epoch ", epoch, ", batch ", batch_idx,
                    " must return a one-element loss tensor");
      // Without accumulation the loss is used as is: dividing by 1 would add a kernel and an autograd node per step.
      at::Tensor scaled = im.precision->ScaleLoss(k == 1 ? loss : loss / static_cast<double>(k));
      im.parallel.Backward(scaled, /*sync=*/stepping);
      if (stepping) {
        for (auto& opt : im.optimizers) im.precision->Unscale(*opt);  // before clipping
        if (options_.gradient_clip_val > 0) {
          if (options_.gradient_clip_algorithm == GradientClipAlgorithm::kNorm) {
            im.parallel.ClipGradNorm(module, options_.gradient_clip_val);
          } else {
            im.parallel.ClipGradValue(module, options_.gradient_clip_val);
          }
        }
        im.parallel.Step(*im.precision, im.optimizers);
        im.precision->AfterStep();
        ++state_.global_step;
        // Lightning: step-interval schedulers after each optimizer step; epoch-interval ones (not monitoring) once
        // the epoch's last batch is done, before validation.
        UpdateLrSchedulers(module, im.schedulers, state_, Interval::kStep, false, batch_idx);
        if (last) UpdateLrSchedulers(module, im.schedulers, state_, Interval::kEpoch, false, batch_idx);
      }
      ++batch_idx;
      ++im.total_batches;
      im.batches_in_epoch = batch_idx;
      epoch_exhausted = last;
      for (const auto& [key, v] : im.metrics->EndStep()) {
        logged_[key] = v;
        im.pending_step[key] = v;
      }
      for (const auto& [key, v] : im.metrics->callback_metrics()) state_.callback_metrics[key] = v;
      for (auto& cb : callbacks_) cb->OnTrainBatchEnd(state_);
      if (options_.max_time.has_value()) {  // Lightning's Timer callback: rank 0 decides
        const bool out_of_time = std::chrono::steady_clock::now() - started >= *options_.max_time;
        if (state_.Sync().FromRankZero(out_of_time)) state_.should_stop = true;
      }
      // on_advance_end: validation when due, then monitoring step schedulers, then the step's metrics.
      const bool stop_now = state_.should_stop && can_stop_early();
      bool check_val = false;
      if (val_epoch) {
        const int64_t iteration = options_.check_val_every_n_epoch == 0 ? im.total_batches : batch_idx;
        check_val = stop_now || (val_check_batch < 0 ? last : iteration % val_check_batch == 0);
      }
      if (check_val) {
        const int64_t step_axis = state_.global_step - (stepping ? 1 : 0);
        SendToRun(options_.run, state_, Validate(module, *val), std::max<int64_t>(step_axis, 0));
        state_.fn = TrainerFn::kFitting;
        state_.validation_has_run = true;
        for (auto& cb : callbacks_) cb->OnValidationEnd(state_);
        module.train();
        module.metrics_ = im.metrics.get();
      }
      if (stepping) UpdateLrSchedulers(module, im.schedulers, state_, Interval::kStep, true, batch_idx - 1);
      progress.OnBatchEnd(state_, max_epochs, batch_idx, stepping, im.metrics->progress_bar_metrics());
      if (stepping && (state_.global_step % options_.log_every_n_steps == 0 || state_.should_stop)) {
        SendToRun(options_.run, state_, im.pending_step, state_.global_step - 1);
        im.pending_step.clear();
      }
      // Lightning's epoch_loop.done.
      if (steps_done() || (state_.should_stop && can_stop_early())) break;
      cur = std::move(nxt);
    }

    im.epochs_processed = epoch + 1;  // the epoch-end checkpoint is written after `processed` moves
    im.batches_in_epoch = 0;
    auto monitoring = [](const std::shared_ptr<Callback>& cb) {
      return cb->is_checkpoint_callback() || dynamic_cast<EarlyStopping*>(cb.get()) != nullptr;
    };
    for (auto& cb : callbacks_) {
      if (!monitoring(cb)) cb->OnTrainEpochEnd(state_);
    }
    module.metrics_ = im.metrics.get();
    module.hook_ = LogHook::kEpochEnd;
    module.OnTrainEpochEnd();
    const MetricMap epoch_metrics = im.metrics->EndEpoch();
    for (const auto& [key, v] : epoch_metrics) logged_[key] = v;
    for (const auto& [key, v] : im.metrics->callback_metrics()) state_.callback_metrics[key] = v;
    SendToRun(options_.run, state_, epoch_metrics, std::max<int64_t>(state_.global_step - 1, 0));
    module.metrics_ = nullptr;
    for (auto& cb : callbacks_) {
      if (monitoring(cb)) cb->OnTrainEpochEnd(state_);
    }
    // Monitoring epoch schedulers after the epoch-end hooks (and so after the epoch-end checkpoint).
    if (epoch_exhausted) UpdateLrSchedulers(module, im.schedulers, state_, Interval::kEpoch, true, batch_idx);
    progress.OnEpochEnd(state_, max_epochs, im.metrics->progress_bar_metrics());
  }
  module.metrics_ = nullptr;
  for (auto& cb : callbacks_) cb->OnTrainEnd(state_);
  im.parallel.Unshard();  // kFsdp: the module holds its full parameters again (collective)
  if (rank0 && options_.run != nullptr && !options_.log_model_artifact_path.empty() && options_.fast_dev_run == 0) {
    track::LogModelOptions lm;
    lm.artifact_path = options_.log_model_artifact_path;
    track::LogModel(*options_.tracker, *options_.run, module, lm);
  }
}

}  // namespace lakerun::train
