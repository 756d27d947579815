#include "lakerun/train/model_checkpoint.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <unistd.h>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "train/checkpoint_temporaries.h"

namespace lakerun::train {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Formats one value with a Python format spec subset: [0][width][.precision][d|f|e|g].
std::string FormatValue(const std::string& field, double value, bool is_int, const std::string& spec) {
  size_t i = 0;
  bool zero = false;
  if (i < spec.size() && spec[i] == '0') {
    zero = true;
    ++i;
  }
  int width = 0;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) width = width * 10 + (spec[i++] - '0');
  int precision = -1;
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    precision = 0;
    const size_t start = i;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
      precision = precision * 10 + (spec[i++] - '0');
    LAKERUN_CHECK_AS(ConfigError, i > start, "ModelCheckpoint filename: field '{", field, ":", spec,
                     "}' has a '.' without a precision");
  }
  char type = is_int && precision < 0 ? 'd' : 'f';
  if (i < spec.size()) type = spec[i++];
  LAKERUN_CHECK_AS(ConfigError, i == spec.size() && (type == 'd' || type == 'f' || type == 'e' || type == 'g'),
                   "ModelCheckpoint filename: unsupported format spec '", spec, "' in field '{", field,
                   "}' (expected [0][width][.precision][d|f|e|g])");
  std::string fmt = "%";
  if (zero) fmt += '0';
  if (width > 0) fmt += std::to_string(width);
  char buf[128];
  if (type == 'd') {
    fmt += "lld";
    std::snprintf(buf, sizeof(buf), fmt.c_str(), static_cast<long long>(std::llround(value)));
  } else {
    // Python's default precision for f/e is 6; a float field without a spec prints with 4 decimals.
    if (precision < 0) precision = spec.empty() ? 4 : 6;
    fmt += "." + std::to_string(precision) + type;
    std::snprintf(buf, sizeof(buf), fmt.c_str(), value);
  }
  return buf;
}

// Lexically normalised absolute path (., .. and duplicate slashes resolved) for containment checks.
std::string Normalize(const std::string& path) {
  std::string full = path;
  if (full.empty() || full[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) != nullptr) full = JoinPath(cwd, path);
  }
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= full.size()) {
    size_t next = full.find('/', pos);
    if (next == std::string::npos) next = full.size();
    std::string part = full.substr(pos, next - pos);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    pos = next + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options) : options_(std::move(options)) {
  const std::string where = StrCat("ModelCheckpoint(monitor=", PyRepr(options_.monitor, true), ")");
  LAKERUN_CHECK_AS(ConfigError, options_.save_top_k >= -1, where, ": option 'save_top_k' must be >= -1, got ",
                   options_.save_top_k);
  LAKERUN_CHECK_AS(ConfigError, options_.every_n_train_steps.value_or(0) >= 0, where,
                   ": option 'every_n_train_steps' must be >= 0, got ", *options_.every_n_train_steps);
  LAKERUN_CHECK_AS(ConfigError, options_.every_n_epochs.value_or(0) >= 0, where,
                   ": option 'every_n_epochs' must be >= 0, got ", *options_.every_n_epochs);
  LAKERUN_CHECK_AS(ConfigError,
                   !(options_.every_n_train_steps.value_or(0) > 0 && options_.every_n_epochs.value_or(0) > 0),
                   where, ": options every_n_train_steps=", options_.every_n_train_steps.value_or(0),
                   " and every_n_epochs=", options_.every_n_epochs.value_or(0), " are mutually exclusive");
  LAKERUN_CHECK_AS(ConfigError, !options_.monitor.empty() || options_.save_top_k <= 1, where,
                   ": save_top_k=", options_.save_top_k,
                   " needs a monitor (without one only -1, 0 or 1 are valid)");
  max_mode_ = options_.mode == MonitorMode::kMax;
  if (!options_.every_n_train_steps.has_value() && !options_.every_n_epochs.has_value()) {
    every_n_epochs_ = 1;
    every_n_train_steps_ = 0;
  } else {
    every_n_epochs_ = options_.every_n_epochs.value_or(0);
    every_n_train_steps_ = options_.every_n_train_steps.value_or(0);
  }
  dirpath_ = options_.dirpath;
  filename_ = options_.filename;
  kth_value_ = max_mode_ ? -kInf : kInf;
}

std::string ModelCheckpoint::state_key() const {
  return StrCat("ModelCheckpoint{'monitor': ", PyRepr(options_.monitor, true),
                ", 'mode': ", PyRepr(ToString(options_.mode)),
                ", 'every_n_train_steps': ", every_n_train_steps_, ", 'every_n_epochs': ", every_n_epochs_,
                ", 'train_time_interval': None}");
}

StateDict ModelCheckpoint::state_dict() const {
  StateDict s;
  s.Set("monitor", options_.monitor);
  if (best_model_score_) s.Set("best_model_score", static_cast<double>(*best_model_score_));
  s.Set("best_model_path", best_model_path_);
  if (current_score_) s.Set("current_score", static_cast<double>(*current_score_));
  s.Set("dirpath", dirpath_);
  std::map<std::string, double> k;
  for (const auto& [path, score] : best_k_models_) k[path] = score;
  s.Set("best_k_models", std::move(k));
  s.Set("kth_best_model_path", kth_best_model_path_);
  s.Set("kth_value", static_cast<double>(kth_value_));
  s.Set("last_model_path", last_model_path_);
  return s;
}

void ModelCheckpoint::load_state_dict(const StateDict& state) {
  const std::string& dirpath_from_ckpt = state.Has("dirpath") ? state.GetString("dirpath") : dirpath_;
  if (dirpath_ == dirpath_from_ckpt) {
    best_model_score_.reset();
    if (state.Has("best_model_score")) best_model_score_ = static_cast<float>(state.GetDouble("best_model_score"));
    current_score_.reset();
    if (state.Has("current_score")) current_score_ = static_cast<float>(state.GetDouble("current_score"));
    kth_best_model_path_ = state.GetString("kth_best_model_path");
    kth_value_ = static_cast<float>(state.GetDouble("kth_value"));
    best_k_models_.clear();
    for (const auto& [path, score] : state.GetTable("best_k_models")) best_k_models_[path] = static_cast<float>(score);
    last_model_path_ = state.GetString("last_model_path");
  } else {
    LAKERUN_LOG(Warning) << state_key() << ": the checkpoint's dirpath '" << dirpath_from_ckpt
                         << "' differs from '" << dirpath_
                         << "'; only best_model_path is restored, best_k_models/last_model_path are reset";
  }
  best_model_path_ = state.GetString("best_model_path");
}

void ModelCheckpoint::Setup(TrainerState& state) {
  if (dirpath_.empty()) dirpath_ = JoinPath(state.default_root_dir, "checkpoints");
}

bool ModelCheckpoint::ShouldSkipSaving(const TrainerState& state) const {
  return state.fast_dev_run > 0 || state.fn != TrainerFn::kFitting || state.sanity_checking ||
         last_global_step_saved_ == state.global_step;
}

bool ModelCheckpoint::SaveOnTrainEpochEnd(const TrainerState& state) const {
  if (options_.save_on_train_epoch_end.has_value()) return *options_.save_on_train_epoch_end;
  if (state.check_val_every_n_epoch != 1) return false;
  if (!state.has_val_batches) return true;
  return state.val_check_interval == 1.0;
}

void ModelCheckpoint::OnTrainBatchEnd(TrainerState& state) {
  if (ShouldSkipSaving(state)) return;
  if (every_n_train_steps_ < 1 || state.global_step % every_n_train_steps_ != 0) return;
  SaveTopK(state);
  SaveLast(state);
}

void ModelCheckpoint::OnTrainEpochEnd(TrainerState& state) {
  if (ShouldSkipSaving(state) || !SaveOnTrainEpochEnd(state)) return;
  if (every_n_epochs_ >= 1 && (state.current_epoch + 1) % every_n_epochs_ == 0) SaveTopK(state);
  SaveLast(state);
}

void ModelCheckpoint::OnValidationEnd(TrainerState& state) {
  if (ShouldSkipSaving(state) || SaveOnTrainEpochEnd(state)) return;
  if (every_n_epochs_ >= 1 && (state.current_epoch + 1) % every_n_epochs_ == 0) SaveTopK(state);
  SaveLast(state);
}

void ModelCheckpoint::OnTrainEnd(TrainerState& state) {
  if (!options_.save_last || state.fast_dev_run > 0 || state.fn != TrainerFn::kFitting) return;
  if (!last_checkpoint_saved_.empty()) return;
  SaveLast(state);
}

std::string ModelCheckpoint::FormatCheckpointName(const MetricMap& metrics, int64_t epoch, int64_t step,
                                                  const std::string& filename_template, int64_t ver) const {
  std::string tmpl = !filename_template.empty() ? filename_template
                     : !filename_.empty()       ? filename_
                                                : std::string("{epoch}-{step}");
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    const size_t open = tmpl.find('{', pos);
    if (open == std::string::npos) {
      out += tmpl.substr(pos);
      break;
    }
    out += tmpl.substr(pos, open - pos);
    const size_t close = tmpl.find('}', open);
    LAKERUN_CHECK_AS(ConfigError, close != std::string::npos, "ModelCheckpoint filename '", tmpl,
                     "': unclosed '{' at offset ", open);
    const std::string field = tmpl.substr(open + 1, close - open - 1);
    const size_t colon = field.find(':');
    const std::string name = field.substr(0, colon);
    const std::string spec = colon == std::string::npos ? "" : field.substr(colon + 1);
    LAKERUN_CHECK_AS(ConfigError, !name.empty(), "ModelCheckpoint filename '", tmpl, "': empty field at offset ",
                     open);
    double value = 0;
    bool is_int = false;
    if (name == "epoch") {
      value = static_cast<double>(epoch);
      is_int = true;
    } else if (name == "step") {
      value = static_cast<double>(step);
      is_int = true;
    } else if (auto it = metrics.find(name); it != metrics.end()) {
      value = it->second;
    } else {
      is_int = true;  // Lightning formats a missing key as torch.tensor(0)
    }
    if (options_.auto_insert_metric_name) out += name + "=";
    out += FormatValue(name, value, is_int, spec);
    pos = close + 1;
  }
  if (ver > 0) out += StrCat("-v", ver);
  return out + kExtension;
}

std::string ModelCheckpoint::InterpolatedPath(const TrainerState& state, const std::string& del_filepath) {
  auto path_for = [&](int64_t ver) {
    return JoinPath(dirpath_, FormatCheckpointName(state.callback_metrics, state.current_epoch, state.global_step,
                                                   "", ver));
  };
  std::string filepath = path_for(0);
  if (options_.enable_version_counter) {
    int64_t ver = 1;
    while (state.Sync().FromRankZero(state.Fs().Exists(filepath)) && filepath != del_filepath) {
      filepath = path_for(ver++);
    }
  }
  return filepath;
}

void ModelCheckpoint::SaveTopK(TrainerState& state) {
  if (options_.save_top_k == 0) return;
  if (options_.monitor.empty()) {
    SaveNoneMonitor(state);
    return;
  }
  auto it = state.callback_metrics.find(options_.monitor);
  if (it == state.callback_metrics.end()) {
    std::string keys = "'epoch', 'step'";
    for (const auto& [k, v] : state.callback_metrics) keys += StrCat(", '", k, "'");
    const std::string message =
        StrCat("ModelCheckpoint(monitor='", options_.monitor, "') could not find the monitored key at epoch ",
               state.current_epoch, ", step ", state.global_step, "; available keys: [", keys, "]. Log '",
               options_.monitor, "' from the module");
    LAKERUN_CHECK_AS(ConfigError, !state.validation_has_run, message);
    LAKERUN_LOG(Warning) << message;
    return;
  }
  const float current = it->second;
  if (CheckMonitorTopK(state, current)) UpdateBestAndSave(state, current);
}

bool ModelCheckpoint::CheckMonitorTopK(TrainerState& state, float current) {
  if (options_.save_top_k == -1) return true;
  if (static_cast<int64_t>(best_k_models_.size()) < options_.save_top_k) return true;
  const bool better = MonitorOp(current, best_k_models_.at(kth_best_model_path_));
  return state.Sync().All(better);
}

void ModelCheckpoint::UpdateBestAndSave(TrainerState& state, float current) {
  const int64_t k =
      options_.save_top_k == -1 ? static_cast<int64_t>(best_k_models_.size()) + 1 : options_.save_top_k;
  std::string del_filepath;
  if (static_cast<int64_t>(best_k_models_.size()) == k && k > 0) {
    del_filepath = kth_best_model_path_;
    best_k_models_.erase(del_filepath);
  }
  if (std::isnan(current)) current = max_mode_ ? -kInf : kInf;
  const std::string filepath = InterpolatedPath(state, del_filepath);
  current_score_ = current;
  best_k_models_[filepath] = current;
  if (static_cast<int64_t>(best_k_models_.size()) == k) {
    // The worst kept entry (first of equals in path order, as Python's max/min over a dict keep the first).
    auto worst = best_k_models_.begin();
    for (auto e = best_k_models_.begin(); e != best_k_models_.end(); ++e) {
      if (MonitorOp(worst->second, e->second)) worst = e;
    }
    kth_best_model_path_ = worst->first;
    kth_value_ = worst->second;
  }
  auto best = best_k_models_.begin();
  for (auto e = best_k_models_.begin(); e != best_k_models_.end(); ++e) {
    if (MonitorOp(e->second, best->second)) best = e;
  }
  best_model_path_ = best->first;
  best_model_score_ = best->second;
  if (options_.verbose && state.Sync().rank() == 0) {
    LAKERUN_LOG(Info) << "Epoch " << state.current_epoch << ", global step " << state.global_step << ": '"
                      << options_.monitor << "' reached " << current << "; saving " << filepath << " as top " << k;
  }
  SaveCheckpoint(state, filepath);
  if (!del_filepath.empty() && ShouldRemove(state, del_filepath, filepath)) RemoveCheckpoint(state, del_filepath);
}

void ModelCheckpoint::SaveNoneMonitor(TrainerState& state) {
  const std::string filepath = InterpolatedPath(state, best_model_path_);
  const std::string previous = best_model_path_;
  best_model_path_ = filepath;  // before the save, as Lightning: the checkpoint's own state names it
  SaveCheckpoint(state, filepath);
  if (options_.save_top_k == 1 && !previous.empty() && ShouldRemove(state, previous, filepath)) {
    RemoveCheckpoint(state, previous);
  }
}

void ModelCheckpoint::SaveLast(TrainerState& state) {
  if (!options_.save_last) return;
  auto path_for = [&](int64_t ver) {
    return JoinPath(dirpath_, FormatCheckpointName(state.callback_metrics, state.current_epoch, state.global_step,
                                                   kNameLast, ver));
  };
  std::string filepath = path_for(0);
  if (options_.enable_version_counter) {
    int64_t ver = 1;
    while (state.Sync().FromRankZero(state.Fs().Exists(filepath)) && filepath != last_model_path_) {
      filepath = path_for(ver++);
    }
  }
  const std::string previous = last_model_path_;
  last_model_path_ = filepath;  // part of the state written into the checkpoint itself
  SaveCheckpoint(state, filepath);
  if (!previous.empty() && ShouldRemove(state, previous, filepath)) RemoveCheckpoint(state, previous);
}

void ModelCheckpoint::SaveCheckpoint(TrainerState& state, const std::string& filepath) {
  last_global_step_saved_ = state.global_step;
  last_checkpoint_saved_ = filepath;
  RankSync& sync = state.Sync();
  LAKERUN_CHECK_AS(InternalError, static_cast<bool>(state.dump_checkpoint), state_key(),
                   ": TrainerState::dump_checkpoint is not set; cannot write ", filepath);
  const std::string bytes = state.dump_checkpoint();  // on every rank: a sharded strategy gathers state here
  if (sync.rank() == 0) {
    FileSystem& fs = state.Fs();
    fs.CreateDirs(DirName(filepath));
    RemoveStaleCheckpointTemporaries(fs, DirName(filepath));
    fs.WriteAtomically(filepath, bytes);
    // Logged as written (Lightning's log_model="all"); a displaced top-k file stays in the run.
    if (options_.log_checkpoints_to_run && state.log_artifact) state.log_artifact(filepath);
  }
  sync.Barrier();
}

bool ModelCheckpoint::ShouldRemove(const TrainerState& state, const std::string& previous,
                                   const std::string& current) const {
  if (previous == current) return false;
  const std::string prev = Normalize(previous);
  if (!state.ckpt_path.empty() && !state.resumed_after_restart && prev == Normalize(state.ckpt_path)) return false;
  const std::string dir = Normalize(dirpath_);
  return prev.size() > dir.size() && prev.compare(0, dir.size(), dir) == 0 && (dir == "/" || prev[dir.size()] == '/');
}

void ModelCheckpoint::RemoveCheckpoint(TrainerState& state, const std::string& path) {
  if (state.Sync().rank() == 0) state.Fs().Remove(path);
}

}  // namespace lakerun::train
