// The Trainer's checkpoint: a torch::serialize archive (docs/trainer.md, "Checkpoint format").
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <mutex>
#include <set>
#include <sstream>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/base/logging.h"
#include "lakerun/train/model_checkpoint.h"
#include "train/checkpoint_temporaries.h"
#include "train/resume_choice.h"
#include "train/trainer_impl.h"

namespace lakerun::train {
namespace {

constexpr const char* kFormatVersion = "lakerun-train-checkpoint-1";

// The generator that random ops on `device` draw from (dropout on a GPU uses its device's, not the CPU's).
at::Generator DefaultGenerator(c10::Device device) {
  return device.is_cpu() ? at::detail::getDefaultCPUGenerator() : at::globalContext().defaultGenerator(device);
}

at::Tensor GeneratorState(c10::Device device) {
  at::Generator gen = DefaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void SetGeneratorState(c10::Device device, const at::Tensor& state) {
  at::Generator gen = DefaultGenerator(device);  // a handle sharing the default generator
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state.cpu());  // the archive loaded it onto the module's device
}

int64_t ReadInt(torch::serialize::InputArchive& ar, const std::string& key, const std::string& path) {
  c10::IValue v;
  LAKERUN_CHECK_AS(CorruptDataError, ar.try_read(key, v) && v.isInt(), "checkpoint ", path, ": key '", key,
                   "' is missing or not an integer");
  return v.toInt();
}

// Keys added after the first format version read as `fallback` when absent.
int64_t ReadIntOr(torch::serialize::InputArchive& ar, const std::string& key, int64_t fallback) {
  c10::IValue v;
  return ar.try_read(key, v) && v.isInt() ? v.toInt() : fallback;
}

std::string ReadString(torch::serialize::InputArchive& ar, const std::string& key, const std::string& path) {
  c10::IValue v;
  LAKERUN_CHECK_AS(CorruptDataError, ar.try_read(key, v) && v.isString(), "checkpoint ", path, ": key '", key,
                   "' is missing or not a string");
  return v.toStringRef();
}

// Reads a verified checkpoint into `ar`, its tensors onto `device` (the module's: the weights and the optimizer state
// then stay where the parameters are); an unreadable archive is CorruptDataError naming the file.
void LoadArchive(const VerifiedCheckpoint& checkpoint, c10::Device device, torch::serialize::InputArchive* ar) {
  std::istringstream in(checkpoint.bytes);
  try {
    ar->load_from(in, device);
  } catch (const c10::Error& e) {
    LAKERUN_THROW(CorruptDataError, "checkpoint ", checkpoint.path, " cannot be read: ", e.what_without_backtrace());
  }
}

}  // namespace

std::string Trainer::Impl::DumpCheckpoint(const Trainer& t) {
  // Collective under a sharded strategy: the optimizers hold their full state on rank 0 while `gathered` lives, and
  // the parameters their full values while `full` does.
  const auto gathered = parallel.GatherOptimizerState();
  const auto full = parallel.GatherFullParameters();
  if (t.state_.Sync().rank() != 0) return {};
  torch::serialize::OutputArchive ar;
  ar.write("format", c10::IValue(std::string(kFormatVersion)));
  torch::serialize::OutputArchive weights;
  module->save(weights);
  ar.write("state_dict", weights);
  for (size_t i = 0; i < optimizers.size(); ++i) {
    torch::serialize::OutputArchive o;
    optimizers[i]->save(o);
    ar.write("optimizer_" + std::to_string(i), o);
  }
  ar.write("num_optimizers", c10::IValue(static_cast<int64_t>(optimizers.size())));
  ar.write("num_lr_schedulers", c10::IValue(static_cast<int64_t>(schedulers.size())));
  for (size_t i = 0; i < schedulers.size(); ++i) {
    ar.write("lr_scheduler_" + std::to_string(i), c10::IValue(schedulers[i].scheduler->state_dict().Encode()));
  }
  if (precision && precision->scaler() != nullptr) {
    ar.write("grad_scaler", c10::IValue(precision->scaler()->state_dict().Encode()));
  }
  StateDict cbs;
  for (const auto& cb : t.callbacks_) cbs.Set(cb->state_key(), cb->state_dict().Encode());
  ar.write("callbacks", c10::IValue(cbs.Encode()));
  StateDict hparams;
  for (const auto& [k, v] : module->Hyperparameters()) hparams.Set(k, v);
  ar.write("hyper_parameters", c10::IValue(hparams.Encode()));
  ar.write("epoch", c10::IValue(t.state_.current_epoch));
  ar.write("global_step", c10::IValue(t.state_.global_step));
  ar.write("epochs_processed", c10::IValue(epochs_processed));
  ar.write("batches_in_epoch", c10::IValue(batches_in_epoch));
  ar.write("total_batches", c10::IValue(total_batches));
  StateDict loader;
  for (const auto& [k, v] : loader_state) loader.Set(k, v);
  ar.write("loader", c10::IValue(loader.Encode()));
  ar.write("rng_state", GeneratorState(c10::Device(c10::kCPU)));
  const c10::Device device = module->device();
  if (device.is_cuda()) ar.write("cuda_rng_state", GeneratorState(device));
  std::ostringstream out;
  ar.save_to(out);
  return SealCheckpoint(out.str());
}

std::vector<std::string> Trainer::Impl::CheckpointDirs(const Trainer& t) {
  std::vector<std::string> dirs;
  for (const auto& cb : t.callbacks_) {
    if (auto* mc = dynamic_cast<ModelCheckpoint*>(cb.get())) dirs.push_back(mc->dirpath());
  }
  return dirs;
}

std::optional<VerifiedCheckpoint> Trainer::Impl::ReadNewest(const Trainer& t) {
  FileSystem& fs = t.state_.Fs();
  return FirstVerified(fs, ResumeCandidates(fs, CheckpointDirs(t)));
}

void Trainer::Impl::ClearBeyondTheResumePoint(Trainer& t) {
  RankSync& sync = t.state_.Sync();
  sync.Barrier();  // every rank has read its checkpoint
  if (sync.rank() == 0) {
    FileSystem& fs = t.state_.Fs();
    std::set<std::string> referenced;
    for (const auto& cb : t.callbacks_) {
      const auto* mc = dynamic_cast<const ModelCheckpoint*>(cb.get());
      if (mc == nullptr) continue;
      for (const auto& [path, score] : mc->best_k_models()) referenced.insert(path);
      referenced.insert({mc->best_model_path(), mc->kth_best_model_path(), mc->last_model_path()});
    }
    const std::vector<std::string> dirs = CheckpointDirs(t);
    try {  // as cleaning temporaries, this never fails the fit (a file left in place gets a -v1 sibling at worst)
      for (const std::string& path : FilesBeyondTheResumePoint(fs, dirs, t.state_.ckpt_path, referenced)) {
        LAKERUN_LOG(Info) << "Trainer: removing " << path << ", written after " << t.state_.ckpt_path
                          << " by the attempt that failed; the job writes it again as it trains on";
        fs.Remove(path);
      }
    } catch (const IoError& e) {
      LAKERUN_LOG(Warning) << "Trainer: cannot clear what the failed attempt wrote after " << t.state_.ckpt_path
                           << ": " << e.what();
    }
    for (const std::string& dir : std::set<std::string>(dirs.begin(), dirs.end())) {
      if (fs.Exists(dir)) RemoveStaleCheckpointTemporaries(fs, dir);
    }
  }
  sync.Barrier();
}

std::optional<VerifiedCheckpoint> Trainer::Impl::ReadCkptPath(const Trainer& t, const std::string& ckpt_path,
                                                               const char* caller) const {
  FileSystem& fs = t.state_.Fs();
  if (ckpt_path.empty()) return std::nullopt;
  if (ckpt_path == "last") {
    auto checkpoint = ReadNewest(t);
    if (!checkpoint) {
      LAKERUN_LOG(Warning) << "ckpt_path=\"last\": no checkpoint in any ModelCheckpoint directory";
    }
    return checkpoint;
  }
  std::string path = ckpt_path;
  if (ckpt_path == "best") {
    for (const auto& cb : t.callbacks_) {
      if (auto* mc = dynamic_cast<ModelCheckpoint*>(cb.get()); mc != nullptr && path == "best") {
        path = mc->best_model_path();
      }
    }
    LAKERUN_CHECK_AS(ConfigError, path != "best" && !path.empty(), caller,
                     "(ckpt_path=\"best\"): no ModelCheckpoint callback has a best model");
  }
  LAKERUN_CHECK_AS(ConfigError, fs.Exists(path), caller, "(ckpt_path=\"", ckpt_path, "\"): ", path, " does not exist");
  return ReadVerifiedCheckpoint(fs, path);
}

void Trainer::Impl::LoadWeightsFor(Trainer& t, Module& module, const std::string& ckpt_path,
                                   const char* caller) const {
  if (ckpt_path.empty()) return;
  const std::optional<VerifiedCheckpoint> checkpoint = ReadCkptPath(t, ckpt_path, caller);
  LAKERUN_CHECK_AS(ConfigError, checkpoint.has_value(), caller, "(ckpt_path=\"", ckpt_path,
                   "\"): no such checkpoint in any ModelCheckpoint directory");
  torch::serialize::InputArchive ar;
  LoadArchive(*checkpoint, module.device(), &ar);
  torch::serialize::InputArchive weights;
  ar.read("state_dict", weights);
  module.load(weights);
}

void Trainer::Impl::LoadCheckpoint(Trainer& t, const VerifiedCheckpoint& checkpoint, int64_t max_epochs) {
  const std::string& resolved = checkpoint.path;
  torch::serialize::InputArchive ar;
  LoadArchive(checkpoint, module->device(), &ar);
  LAKERUN_CHECK_AS(CorruptDataError, ReadString(ar, "format", resolved) == kFormatVersion, "checkpoint ", resolved,
                   ": unknown format, expected ", kFormatVersion);
  // Lightning's restore order: weights, callbacks, precision state, loops, optimizers and schedulers.
  torch::serialize::InputArchive weights;
  ar.read("state_dict", weights);
  module->load(weights);
  const StateDict cbs = StateDict::Decode(ReadString(ar, "callbacks", resolved));
  for (auto& cb : t.callbacks_) {
    if (cbs.Has(cb->state_key())) cb->load_state_dict(StateDict::Decode(cbs.GetString(cb->state_key())));
  }
  if (precision && precision->scaler() != nullptr) {
    c10::IValue v;
    if (ar.try_read("grad_scaler", v) && v.isString()) {
      precision->scaler()->load_state_dict(StateDict::Decode(v.toStringRef()));
    }
  }
  t.state_.current_epoch = ReadInt(ar, "epoch", resolved);
  t.state_.global_step = ReadInt(ar, "global_step", resolved);
  epochs_processed = ReadInt(ar, "epochs_processed", resolved);
  batches_in_epoch = ReadInt(ar, "batches_in_epoch", resolved);
  total_batches = ReadIntOr(ar, "total_batches", 0);
  const StateDict loader = StateDict::Decode(ReadString(ar, "loader", resolved));
  for (const auto& [k, v] : loader.values()) loader_state[k] = loader.GetInt(k);
  const int64_t n = ReadInt(ar, "num_optimizers", resolved);
  LAKERUN_CHECK_AS(CorruptDataError, n == static_cast<int64_t>(optimizers.size()), "checkpoint ", resolved, " holds ",
                   n, " optimizer states, the module configures ", optimizers.size());
  for (int64_t i = 0; i < n; ++i) {
    torch::serialize::InputArchive o;
    ar.read("optimizer_" + std::to_string(i), o);
    optimizers[i]->load(o);
  }
  const int64_t ns = ReadIntOr(ar, "num_lr_schedulers", 0);
  LAKERUN_CHECK_AS(CorruptDataError, ns == static_cast<int64_t>(schedulers.size()), "checkpoint ", resolved,
                   " holds ", ns, " lr scheduler states, the module configures ", schedulers.size());
  for (int64_t i = 0; i < ns; ++i) {
    schedulers[i].scheduler->load_state_dict(
        StateDict::Decode(ReadString(ar, "lr_scheduler_" + std::to_string(i), resolved)));
  }
  at::Tensor rng;
  ar.read("rng_state", rng);
  SetGeneratorState(c10::Device(c10::kCPU), rng);
  // A run saved on a GPU and resumed on the CPU (or the reverse) continues, but not bitwise.
  const c10::Device device = module->device();
  at::Tensor cuda_rng;
  if (device.is_cuda() && ar.try_read("cuda_rng_state", cuda_rng)) SetGeneratorState(device, cuda_rng);
  LAKERUN_CHECK_AS(ConfigError, max_epochs < 0 || epochs_processed <= max_epochs, "checkpoint ", resolved,
                   " has completed ", epochs_processed, " epochs, more than max_epochs=", max_epochs);
  t.state_.ckpt_path = resolved;
}

}  // namespace lakerun::train
