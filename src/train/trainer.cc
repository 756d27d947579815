#include "lakerun/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <iomanip>
#include <iostream>
#include <sstream>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "lakerun/dist/ddp.h"
#include "lakerun/dist/init.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/model_checkpoint.h"

namespace lakerun::train {
namespace {

constexpr const char* kFormatVersion = "lakerun-train-checkpoint-1";

int64_t InferBatchSize(const Batch& batch) {
  if (batch.sample_ids.defined()) return batch.sample_ids.size(0);
  for (const auto& [name, t] : batch.tensors) {
    if (t.defined() && t.dim() > 0) return t.size(0);
  }
  return 1;
}

int64_t ReadInt(torch::serialize::InputArchive& ar, const std::string& key, const std::string& path) {
  c10::IValue v;
  LAKERUN_CHECK_AS(CorruptDataError, ar.try_read(key, v) && v.isInt(), "checkpoint ", path, ": key '", key,
                   "' is missing or not an integer");
  return v.toInt();
}

std::string ReadString(torch::serialize::InputArchive& ar, const std::string& key, const std::string& path) {
  c10::IValue v;
  LAKERUN_CHECK_AS(CorruptDataError, ar.try_read(key, v) && v.isString(), "checkpoint ", path, ": key '", key,
                   "' is missing or not a string");
  return v.toStringRef();
}

// One plain progress line on rank 0: "epoch 1/4 step 20 loss=0.3481 val_loss=0.2205".
void PrintProgress(const TrainerOptions& o, const TrainerState& state, int64_t max_epochs, const MetricMap& prog,
                   const char* what) {
  if (o.progress_every_n_steps <= 0 || state.Sync().rank() != 0) return;
  std::ostringstream line;
  line << what << " epoch " << state.current_epoch;
  if (max_epochs >= 0) line << "/" << max_epochs;
  line << " step " << state.global_step;
  line.setf(std::ios::fixed);
  line << std::setprecision(4);
  for (const auto& [k, v] : prog) line << " " << k << "=" << v;
  line << "\n";
  std::ostream& out = o.progress_stream != nullptr ? *o.progress_stream : std::cerr;
  out << line.str() << std::flush;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// TensorBatchSource

TensorBatchSource::TensorBatchSource(std::map<std::string, at::Tensor> columns, int64_t batch_size,
                                     std::optional<uint64_t> shuffle_seed)
    : columns_(std::move(columns)), batch_size_(batch_size), seed_(shuffle_seed) {
  LAKERUN_CHECK(!columns_.empty(), "TensorBatchSource: no columns");
  LAKERUN_CHECK(batch_size_ > 0, "TensorBatchSource: batch_size must be positive, got ", batch_size_);
  rows_ = columns_.begin()->second.size(0);
  for (const auto& [name, t] : columns_) {
    LAKERUN_CHECK(t.dim() > 0 && t.size(0) == rows_, "TensorBatchSource: column '", name, "' has ",
                  t.dim() > 0 ? t.size(0) : 0, " rows, expected ", rows_);
  }
  SetEpoch(0);
}

void TensorBatchSource::SetEpoch(uint64_t epoch) {
  epoch_ = epoch;
  next_ = 0;
  if (seed_.has_value()) {
    at::Generator gen = at::detail::createCPUGenerator(*seed_ * 0x9E3779B97F4A7C15ULL + epoch);
    order_ = at::randperm(rows_, gen, at::TensorOptions().dtype(at::kLong));
  } else {
    order_ = at::arange(rows_, at::TensorOptions().dtype(at::kLong));
  }
}

std::optional<Batch> TensorBatchSource::Next() {
  const int64_t start = next_ * batch_size_;
  if (start >= rows_) return std::nullopt;
  const int64_t end = std::min(rows_, start + batch_size_);
  Batch b;
  b.sample_ids = order_.slice(0, start, end);
  for (const auto& [name, t] : columns_) b.tensors[name] = t.index_select(0, b.sample_ids);
  b.epoch = epoch_;
  b.index = static_cast<uint64_t>(next_++);
  return b;
}

std::map<std::string, int64_t> TensorBatchSource::state_dict() const {
  return {{"epoch", static_cast<int64_t>(epoch_)}, {"batches", next_}};
}

void TensorBatchSource::load_state_dict(const std::map<std::string, int64_t>& state) {
  auto epoch = state.find("epoch");
  auto batches = state.find("batches");
  LAKERUN_CHECK(epoch != state.end() && batches != state.end() && epoch->second >= 0 && batches->second >= 0,
                "TensorBatchSource::load_state_dict: needs non-negative 'epoch' and 'batches'");
  SetEpoch(static_cast<uint64_t>(epoch->second));
  next_ = batches->second;
}

// ---------------------------------------------------------------------------------------------------------------
// Module

void Module::Log(const std::string& name, const at::Tensor& value, LogOptions options) {
  LAKERUN_CHECK(value.defined() && value.numel() == 1, "log('", name, "'): value must be a one-element tensor, got ",
                value.defined() ? value.numel() : 0, " elements");
  Log(name, static_cast<double>(value.detach().to(at::kFloat).item<float>()), std::move(options));
}

void Module::Log(const std::string& name, double value, LogOptions options) {
  LAKERUN_CHECK(metrics_ != nullptr, "log('", name, "') called outside a step or epoch-end hook run by a Trainer");
  metrics_->Log(hook_, name, static_cast<float>(value), options, batch_size_);
}

// ---------------------------------------------------------------------------------------------------------------
// Trainer

class Trainer::Impl {
 public:
  Module* module = nullptr;
  Optimizers optimizers;
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  std::unique_ptr<RankSync> sync;
  std::unique_ptr<MetricSync> metric_sync;
  std::unique_ptr<LoggedMetrics> metrics;
  int64_t epochs_processed = 0;  // completed train epochs (Lightning's epoch_progress.current.processed)
  int64_t batches_in_epoch = 0;  // batches done in the running epoch (0 at an epoch boundary)
  std::map<std::string, int64_t> loader_state;
  MetricMap pending_step;  // step metrics since the last step that reached the run
};

namespace {
// Sends metrics to the run on rank 0 with an `epoch` key, at `step` (Lightning's _batches_that_stepped axis).
void SendToRun(track::Run* run, const TrainerState& state, const MetricMap& metrics, int64_t step) {
  if (run == nullptr || metrics.empty() || state.Sync().rank() != 0 || state.fast_dev_run > 0) return;
  std::map<std::string, double> out(metrics.begin(), metrics.end());
  out["epoch"] = static_cast<double>(state.current_epoch);
  run->LogMetrics(out, step);
}
}  // namespace

Trainer::Trainer(TrainerOptions options, std::vector<std::shared_ptr<Callback>> callbacks)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
  const auto& o = options_;
  LAKERUN_CHECK_AS(ConfigError, o.max_epochs.value_or(0) >= -1, "Trainer: max_epochs must be >= -1, got ",
                   o.max_epochs.value_or(0));
  LAKERUN_CHECK_AS(ConfigError, o.max_steps >= -1, "Trainer: max_steps must be >= -1, got ", o.max_steps);
  LAKERUN_CHECK_AS(ConfigError, o.min_epochs >= 0, "Trainer: min_epochs must be >= 0, got ", o.min_epochs);
  LAKERUN_CHECK_AS(ConfigError, o.limit_train_batches >= -1, "Trainer: limit_train_batches must be >= -1, got ",
                   o.limit_train_batches);
  LAKERUN_CHECK_AS(ConfigError, o.limit_val_batches >= -1, "Trainer: limit_val_batches must be >= -1, got ",
                   o.limit_val_batches);
  LAKERUN_CHECK_AS(ConfigError, o.check_val_every_n_epoch >= 1, "Trainer: check_val_every_n_epoch must be >= 1, got ",
                   o.check_val_every_n_epoch);
  LAKERUN_CHECK_AS(ConfigError, o.num_sanity_val_steps >= -1, "Trainer: num_sanity_val_steps must be >= -1, got ",
                   o.num_sanity_val_steps);
  LAKERUN_CHECK_AS(ConfigError, o.accumulate_grad_batches >= 1, "Trainer: accumulate_grad_batches must be >= 1, got ",
                   o.accumulate_grad_batches);
  LAKERUN_CHECK_AS(ConfigError, o.gradient_clip_val >= 0, "Trainer: gradient_clip_val must be >= 0, got ",
                   o.gradient_clip_val);
  LAKERUN_CHECK_AS(ConfigError, o.gradient_clip_algorithm == "norm" || o.gradient_clip_algorithm == "value",
                   "Trainer: gradient_clip_algorithm must be 'norm' or 'value', got '", o.gradient_clip_algorithm,
                   "'");
  LAKERUN_CHECK_AS(ConfigError, o.fast_dev_run >= 0, "Trainer: fast_dev_run must be >= 0, got ", o.fast_dev_run);
  LAKERUN_CHECK_AS(ConfigError, o.log_every_n_steps >= 1, "Trainer: log_every_n_steps must be >= 1, got ",
                   o.log_every_n_steps);
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
  if (state_.Sync().rank() == 0) {
    FileSystem& fs = state_.Fs();
    fs.CreateDirs(DirName(path));
    fs.WriteAtomically(path, state_.dump_checkpoint());
  }
  state_.Sync().Barrier();
}

MetricMap Trainer::Validate(Module& module, BatchSource& val) {
  Impl& im = *impl_;
  if (!im.metrics) im.metrics = std::make_unique<LoggedMetrics>(im.metric_sync.get());
  im.module = &module;
  const TrainerFn previous = state_.fn;
  state_.fn = TrainerFn::kValidating;
  (void)previous;
  module.eval();
  torch::NoGradGuard no_grad;
  val.SetEpoch(0);
  int64_t idx = 0;
  module.metrics_ = im.metrics.get();
  while (auto batch = val.Next()) {
    if (options_.limit_val_batches >= 0 && idx >= options_.limit_val_batches) break;
    module.hook_ = LogHook::kValidationStep;
    module.batch_size_ = InferBatchSize(*batch);
    module.ValidationStep(*batch, idx++);
  }
  module.hook_ = LogHook::kEpochEnd;
  module.OnValidationEpochEnd();
  MetricMap out = im.metrics->EndEpoch();
  module.metrics_ = nullptr;
  for (const auto& [k, v] : im.metrics->callback_metrics()) state_.callback_metrics[k] = v;
  for (const auto& [k, v] : out) logged_[k] = v;
  return out;
}

MetricMap Trainer::Test(Module& module, BatchSource& test) {
  Impl& im = *impl_;
  if (!im.metrics) im.metrics = std::make_unique<LoggedMetrics>(im.metric_sync.get());
  state_.fn = TrainerFn::kTesting;
  module.eval();
  torch::NoGradGuard no_grad;
  test.SetEpoch(0);
  int64_t idx = 0;
  module.metrics_ = im.metrics.get();
  while (auto batch = test.Next()) {
    module.hook_ = LogHook::kTestStep;
    module.batch_size_ = InferBatchSize(*batch);
    module.TestStep(*batch, idx++);
  }
  MetricMap out = im.metrics->EndEpoch();
  module.metrics_ = nullptr;
  for (const auto& [k, v] : im.metrics->callback_metrics()) state_.callback_metrics[k] = v;
  return out;
}

void Trainer::Fit(Module& module, BatchSource& train, BatchSource* val, const std::string& ckpt_path) {
  Impl& im = *impl_;
  im.module = &module;
  // Ranks.
  im.ddp.reset();  // a previous Fit's hooks go before new ones are registered
  if (options_.distributed) {
    dist::Context& ctx = dist::Init();
    if (ctx.world_size() > 1) {
      im.sync = NewDistRankSync(ctx);
      im.metric_sync = NewDistMetricSync(ctx);
      std::shared_ptr<torch::nn::Module> alias(&module, [](torch::nn::Module*) {});
      im.ddp = std::make_unique<dist::DistributedDataParallel>(ctx, alias);
    }
  }
  im.metrics = std::make_unique<LoggedMetrics>(im.metric_sync.get());
  im.pending_step.clear();
  state_ = TrainerState{};
  state_.fn = TrainerFn::kFitting;
  state_.fast_dev_run = options_.fast_dev_run;
  state_.check_val_every_n_epoch = options_.check_val_every_n_epoch;
  state_.has_val_batches = val != nullptr && options_.limit_val_batches != 0;
  state_.default_root_dir = options_.default_root_dir;
  state_.sync = im.sync.get();
  state_.dump_checkpoint = [this] {
    Impl& im = *impl_;
    torch::serialize::OutputArchive ar;
    ar.write("format", c10::IValue(std::string(kFormatVersion)));
    torch::serialize::OutputArchive weights;
    im.module->save(weights);
    ar.write("state_dict", weights);
    for (size_t i = 0; i < im.optimizers.size(); ++i) {
      torch::serialize::OutputArchive o;
      im.optimizers[i]->save(o);
      ar.write("optimizer_" + std::to_string(i), o);
    }
    ar.write("num_optimizers", c10::IValue(static_cast<int64_t>(im.optimizers.size())));
    StateDict cbs;
    for (const auto& cb : callbacks_) cbs.Set(cb->state_key(), cb->state_dict().Encode());
    ar.write("callbacks", c10::IValue(cbs.Encode()));
    ar.write("epoch", c10::IValue(state_.current_epoch));
    ar.write("global_step", c10::IValue(state_.global_step));
    ar.write("epochs_processed", c10::IValue(im.epochs_processed));
    ar.write("batches_in_epoch", c10::IValue(im.batches_in_epoch));
    StateDict loader;
    for (const auto& [k, v] : im.loader_state) loader.Set(k, v);
    ar.write("loader", c10::IValue(loader.Encode()));
    ar.write("rng_state", at::detail::getDefaultCPUGenerator().get_state());
    std::ostringstream out;
    ar.save_to(out);
    return out.str();
  };
  if (options_.seed.has_value()) torch::manual_seed(*options_.seed);
  if (options_.deterministic) at::globalContext().setDeterministicAlgorithms(true, false);

  im.optimizers = module.ConfigureOptimizers();
  LAKERUN_CHECK_AS(ConfigError, !im.optimizers.empty(), "Trainer::Fit: ConfigureOptimizers() returned no optimizer");
  for (auto& cb : callbacks_) cb->Setup(state_);

  // Resume.
  im.epochs_processed = 0;
  im.batches_in_epoch = 0;
  im.loader_state.clear();
  std::string resolved = ckpt_path;
  if (ckpt_path == "last") {
    resolved.clear();
    int64_t newest = -1;
    for (const auto& cb : callbacks_) {
      auto* mc = dynamic_cast<ModelCheckpoint*>(cb.get());
      if (mc == nullptr || !state_.Fs().Exists(mc->dirpath())) continue;
      for (const auto& f : state_.Fs().List(mc->dirpath())) {
        if (f.is_directory || f.name.rfind(ModelCheckpoint::kNameLast, 0) != 0 ||
            f.name.size() < 5 || f.name.compare(f.name.size() - 5, 5, ModelCheckpoint::kExtension) != 0) {
          continue;
        }
        if (f.mtime_ms > newest) {
          newest = f.mtime_ms;
          resolved = JoinPath(mc->dirpath(), f.name);
        }
      }
    }
    if (resolved.empty()) {
      LAKERUN_LOG(Warning) << "Fit(ckpt_path=\"last\"): no last*.ckpt in any ModelCheckpoint directory; starting fresh";
    }
  } else if (ckpt_path == "best") {
    for (const auto& cb : callbacks_) {
      if (auto* mc = dynamic_cast<ModelCheckpoint*>(cb.get()); mc != nullptr && resolved == "best") {
        resolved = mc->best_model_path();
      }
    }
    LAKERUN_CHECK_AS(ConfigError, resolved != "best" && !resolved.empty(),
                     "Fit(ckpt_path=\"best\"): no ModelCheckpoint callback with a best model to resume from");
  }
  const int64_t max_epochs =
      options_.fast_dev_run > 0 ? 1 : options_.max_epochs.value_or(options_.max_steps == -1 ? 1000 : -1);
  const int64_t max_steps = options_.fast_dev_run > 0 ? options_.fast_dev_run : options_.max_steps;
  if (!resolved.empty()) {
    std::istringstream in(state_.Fs().ReadFile(resolved));
    torch::serialize::InputArchive ar;
    try {
      ar.load_from(in);
    } catch (const c10::Error& e) {
      LAKERUN_THROW(CorruptDataError, "checkpoint ", resolved, " cannot be read: ", e.what_without_backtrace());
    }
    LAKERUN_CHECK_AS(CorruptDataError, ReadString(ar, "format", resolved) == kFormatVersion, "checkpoint ", resolved,
                     ": unknown format, expected ", kFormatVersion);
    torch::serialize::InputArchive weights;
    ar.read("state_dict", weights);
    module.load(weights);
    const StateDict cbs = StateDict::Decode(ReadString(ar, "callbacks", resolved));
    for (auto& cb : callbacks_) {
      if (cbs.Has(cb->state_key())) cb->load_state_dict(StateDict::Decode(cbs.GetString(cb->state_key())));
    }
    const int64_t n = ReadInt(ar, "num_optimizers", resolved);
    LAKERUN_CHECK_AS(CorruptDataError, n == static_cast<int64_t>(im.optimizers.size()), "checkpoint ", resolved,
                     " holds ", n, " optimizer states, the module configures ", im.optimizers.size());
    for (int64_t i = 0; i < n; ++i) {
      torch::serialize::InputArchive o;
      ar.read("optimizer_" + std::to_string(i), o);
      im.optimizers[i]->load(o);
    }
    state_.current_epoch = ReadInt(ar, "epoch", resolved);
    state_.global_step = ReadInt(ar, "global_step", resolved);
    im.epochs_processed = ReadInt(ar, "epochs_processed", resolved);
    im.batches_in_epoch = ReadInt(ar, "batches_in_epoch", resolved);
    const StateDict loader = StateDict::Decode(ReadString(ar, "loader", resolved));
    for (const auto& [k, v] : loader.values()) im.loader_state[k] = loader.GetInt(k);
    at::Tensor rng;
    ar.read("rng_state", rng);
    at::Generator gen = at::detail::getDefaultCPUGenerator();  // a handle sharing the default generator
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng);
    }
    LAKERUN_CHECK_AS(ConfigError, max_epochs < 0 || im.epochs_processed <= max_epochs, "checkpoint ", resolved,
                     " has completed ", im.epochs_processed, " epochs, more than max_epochs=", max_epochs);
    state_.ckpt_path = resolved;
  }

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
  auto steps_done = [&] { return max_steps >= 0 && state_.global_step >= max_steps; };
  for (int64_t epoch = im.epochs_processed; (max_epochs < 0 || epoch < max_epochs) && !steps_done(); ++epoch) {
    state_.current_epoch = epoch;
    train.SetEpoch(static_cast<uint64_t>(epoch));
    int64_t batch_idx = 0;
    if (im.batches_in_epoch > 0) {  // resume inside this epoch
      train.load_state_dict(im.loader_state);
      batch_idx = im.batches_in_epoch;
    }
    module.train();
    module.metrics_ = im.metrics.get();
    std::optional<Batch> cur = (limit_train < 0 || batch_idx < limit_train) ? train.Next() : std::nullopt;
    while (cur.has_value()) {
      im.loader_state = train.state_dict();
      std::optional<Batch> nxt = (limit_train < 0 || batch_idx + 1 < limit_train) ? train.Next() : std::nullopt;
      const bool last = !nxt.has_value();
      const bool stepping = (batch_idx + 1) % k == 0 || last;
      if (batch_idx % k == 0) {
        for (auto& opt : im.optimizers) opt->zero_grad();
      }
      module.hook_ = LogHook::kTrainingStep;
      module.batch_size_ = InferBatchSize(*cur);
      at::Tensor loss = module.TrainingStep(*cur, batch_idx);
      LAKERUN_CHECK(loss.defined() && loss.numel() == 1, "training_step at epoch ", epoch, ", batch ", batch_idx,
                    " must return a one-element loss tensor");
      at::Tensor scaled = loss / static_cast<double>(k);
      if (im.ddp && !stepping) {
        auto no_sync = im.ddp->NoSync();
        scaled.backward();
      } else {
        scaled.backward();
      }
      if (stepping) {
        if (options_.gradient_clip_val > 0) {
          if (options_.gradient_clip_algorithm == "norm") {
            torch::nn::utils::clip_grad_norm_(module.parameters(), options_.gradient_clip_val);
          } else {
            torch::nn::utils::clip_grad_value_(module.parameters(), options_.gradient_clip_val);
          }
        }
        for (auto& opt : im.optimizers) opt->step();
        ++state_.global_step;
      }
      ++batch_idx;
      im.batches_in_epoch = batch_idx;
      for (const auto& [key, v] : im.metrics->EndStep()) {
        logged_[key] = v;
        im.pending_step[key] = v;
      }
      for (const auto& [key, v] : im.metrics->callback_metrics()) state_.callback_metrics[key] = v;
      for (auto& cb : callbacks_) cb->OnTrainBatchEnd(state_);
      if (stepping && options_.progress_every_n_steps > 0 &&
          state_.global_step % options_.progress_every_n_steps == 0) {
        PrintProgress(options_, state_, max_epochs, im.metrics->progress_bar_metrics(), "train");
      }
      if (stepping && (state_.global_step % options_.log_every_n_steps == 0 || state_.should_stop)) {
        SendToRun(options_.run, state_, im.pending_step, state_.global_step - 1);
        im.pending_step.clear();
      }
      if (steps_done()) break;
      cur = std::move(nxt);
    }

    // Validation, when due, runs before the train-epoch-end hooks.
    if (val != nullptr && options_.limit_val_batches != 0 && (epoch + 1) % options_.check_val_every_n_epoch == 0) {
      SendToRun(options_.run, state_, Validate(module, *val), std::max<int64_t>(state_.global_step - 1, 0));
      state_.fn = TrainerFn::kFitting;
      state_.validation_has_run = true;
      for (auto& cb : callbacks_) cb->OnValidationEnd(state_);
      module.train();
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
    PrintProgress(options_, state_, max_epochs, im.metrics->progress_bar_metrics(), "end of");
    if (state_.should_stop && epoch + 1 >= options_.min_epochs) break;
  }
  module.metrics_ = nullptr;
  for (auto& cb : callbacks_) cb->OnTrainEnd(state_);
}

}  // namespace lakerun::train
