#include "track/file_store.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/mlmodel.h"
#include "track/ids.h"
#include "track/metric_line.h"
#include "track/validation.h"
#include "track/yaml.h"

namespace lakerun::track {
namespace {

constexpr int kSourceTypeLocal = 4;

std::string AbsolutePath(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (!p.empty() && p.front() == '/') return p;
  char cwd[PATH_MAX];
  LAKERUN_CHECK_AS(IoError, ::getcwd(cwd, sizeof(cwd)) != nullptr, "cannot resolve the working directory for ",
                   path);
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  if (p.empty() || p == ".") return cwd;
  return JoinPath(cwd, p);
}

int64_t ToInt(const std::map<std::string, YamlScalar>& yaml, const std::string& key, const std::string& where) {
  auto it = yaml.find(key);
  LAKERUN_CHECK_AS(CorruptDataError, it != yaml.end() && !it->second.is_null, where, ": missing '", key, "'");
  try {
    return std::stoll(it->second.text);
  } catch (const std::exception&) {
    LAKERUN_THROW(CorruptDataError, where, ": '", key, "' is '", it->second.text, "', expected an integer");
  }
}

std::string ToString(const std::map<std::string, YamlScalar>& yaml, const std::string& key) {
  auto it = yaml.find(key);
  return it == yaml.end() || it->second.is_null ? std::string() : it->second.text;
}

bool IsReservedExperimentChild(const std::string& name) {
  return name == "tags" || name == "models" || name == "datasets" || name == "traces" || name == "meta.yaml";
}

}  // namespace

std::string FileStorePath(const std::string& uri) {
  if (uri.rfind("file://", 0) == 0) {
    std::string rest = uri.substr(7);
    if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
    LAKERUN_CHECK_AS(ConfigError, !rest.empty() && rest.front() == '/', "tracking URI '", uri,
                     "': a file:// URI needs an absolute path (file:///abs/path), or use file:relative/path");
    return rest;
  }
  if (uri.rfind("file:", 0) == 0) return uri.substr(5);
  return uri;
}

FileStore::FileStore(std::string uri, std::string root, const StoreOptions& options)
    : uri_(std::move(uri)),
      root_(AbsolutePath(root)),
      options_(WithDefaults(options)),
      fs_(*options_.file_system) {}

void FileStore::EnsureRoot() {
  std::lock_guard<std::mutex> lock(mu_);
  if (root_ready_) return;
  fs_.CreateDirs(JoinPath(root_, ".trash"));
  const std::string default_dir = JoinPath(root_, "0");
  if (!fs_.Exists(JoinPath(default_dir, "meta.yaml")) && !fs_.Exists(JoinPath(root_, ".trash/0"))) {
    const int64_t now = options_.clock_ms();
    fs_.CreateDirs(default_dir);
    fs_.WriteAtomically(JoinPath(default_dir, "meta.yaml"),
                        EmitFlatYaml({{"artifact_location", YamlValue::String(FileUri(default_dir))},
                                      {"creation_time", YamlValue::Int(now)},
                                      {"experiment_id", YamlValue::String("0")},
                                      {"last_update_time", YamlValue::Int(now)},
                                      {"lifecycle_stage", YamlValue::String("active")},
                                      {"name", YamlValue::String("Default")}}));
  }
  root_ready_ = true;
}

std::string FileStore::ExperimentDir(const std::string& experiment_id) const {
  ValidateExperimentId(experiment_id);
  return JoinPath(root_, experiment_id);
}

std::string FileStore::FindExperimentDir(const std::string& experiment_id) {
  ValidateExperimentId(experiment_id);
  for (const std::string& parent : {root_, JoinPath(root_, ".trash")}) {
    const std::string dir = JoinPath(parent, experiment_id);
    if (fs_.Exists(JoinPath(dir, "meta.yaml"))) return dir;
  }
  return "";
}

std::optional<Experiment> FileStore::ReadExperiment(const std::string& dir) {
  const std::string meta_path = JoinPath(dir, "meta.yaml");
  if (!fs_.Exists(meta_path)) return std::nullopt;
  const auto yaml = ParseFlatYaml(fs_.ReadFile(meta_path), meta_path);
  Experiment e;
  e.experiment_id = ToString(yaml, "experiment_id");
  e.name = ToString(yaml, "name");
  e.artifact_location = ToString(yaml, "artifact_location");
  e.lifecycle_stage = ToString(yaml, "lifecycle_stage");
  if (yaml.count("creation_time") && !yaml.at("creation_time").is_null)
    e.creation_time_ms = ToInt(yaml, "creation_time", meta_path);
  if (yaml.count("last_update_time") && !yaml.at("last_update_time").is_null)
    e.last_update_time_ms = ToInt(yaml, "last_update_time", meta_path);
  LAKERUN_CHECK_AS(CorruptDataError, e.experiment_id == BaseName(dir), meta_path, ": experiment_id '",
                   e.experiment_id, "' does not match its directory name '", BaseName(dir), "'");
  const std::string tags_dir = JoinPath(dir, "tags");
  if (fs_.Exists(tags_dir)) e.tags = ReadKeyValueDir(tags_dir);
  return e;
}

std::vector<Experiment> FileStore::ListExperiments() {
  std::vector<Experiment> out;
  if (!fs_.Exists(root_)) return out;
  for (const auto& entry : fs_.List(root_)) {
    if (!entry.is_directory || entry.name == ".trash" || entry.name == "models" || entry.name[0] == '.') continue;
    const std::string dir = JoinPath(root_, entry.name);
    // One damaged experiment must not hide the others: it is named and skipped.
    try {
      auto e = ReadExperiment(dir);
      if (!e) {
        LAKERUN_LOG(Warning) << "skipping " << dir << ": it has no meta.yaml, so its runs are not listed "
                             << "(restore the file, or move the directory out of " << root_ << ")";
        continue;
      }
      if (e->lifecycle_stage == "active") out.push_back(std::move(*e));
    } catch (const Error& e) {
      LAKERUN_LOG(Warning) << "skipping the experiment in " << dir << ": " << e.what();
    }
  }
  return out;
}

std::optional<Experiment> FileStore::GetExperimentByName(const std::string& name) {
  for (auto& e : ListExperiments()) {
    if (e.name == name) return e;
  }
  return std::nullopt;
}

std::optional<Experiment> FileStore::GetExperiment(const std::string& experiment_id) {
  const std::string dir = FindExperimentDir(experiment_id);
  if (dir.empty()) return std::nullopt;
  return ReadExperiment(dir);
}

std::string FileStore::CreateExperiment(const std::string& name) {
  LAKERUN_CHECK(!name.empty(), "experiment name must not be empty");
  EnsureRoot();
  LAKERUN_CHECK(!GetExperimentByName(name), "experiment '", name, "' already exists in ", root_);
  std::string id = options_.new_experiment_id();
  const std::string dir = ExperimentDir(id);
  LAKERUN_CHECK_AS(IoError, !fs_.Exists(dir), "experiment directory ", dir, " already exists");
  const int64_t now = options_.clock_ms();
  fs_.CreateDirs(dir);
  fs_.WriteAtomically(JoinPath(dir, "meta.yaml"),
                      EmitFlatYaml({{"artifact_location", YamlValue::String(FileUri(dir))},
                                    {"creation_time", YamlValue::Int(now)},
                                    {"experiment_id", YamlValue::String(id)},
                                    {"last_update_time", YamlValue::Int(now)},
                                    {"lifecycle_stage", YamlValue::String("active")},
                                    {"name", YamlValue::String(name)}}));
  return id;
}

void FileStore::WriteRunInfo(const std::string& run_dir, const RunInfo& info) {
  std::map<std::string, YamlValue> fields = {
      {"artifact_uri", YamlValue::String(info.artifact_uri)},
      {"end_time", info.end_time_ms ? YamlValue::Int(*info.end_time_ms) : YamlValue::Null()},
      {"entry_point_name", YamlValue::String("")},
      {"experiment_id", YamlValue::String(info.experiment_id)},
      {"lifecycle_stage", YamlValue::String(info.lifecycle_stage)},
      {"run_id", YamlValue::String(info.run_id)},
      {"run_name", YamlValue::String(info.run_name)},
      {"run_uuid", YamlValue::String(info.run_id)},
      {"source_name", YamlValue::String("")},
      {"source_type", YamlValue::Int(kSourceTypeLocal)},
      {"source_version", YamlValue::String("")},
      {"start_time", YamlValue::Int(info.start_time_ms)},
      {"status", YamlValue::Int(static_cast<int>(info.status))},
      {"tags", YamlValue::EmptyList()},
      {"user_id", YamlValue::String(info.user_id)},
  };
  if (info.deleted_time_ms) fields.emplace("deleted_time", YamlValue::Int(*info.deleted_time_ms));
  fs_.WriteAtomically(JoinPath(run_dir, "meta.yaml"), EmitFlatYaml(fields));
}

RunInfo FileStore::ReadRunInfo(const std::string& run_dir) {
  const std::string meta_path = JoinPath(run_dir, "meta.yaml");
  const auto yaml = ParseFlatYaml(fs_.ReadFile(meta_path), meta_path);
  RunInfo info;
  info.run_id = ToString(yaml, "run_id");
  if (info.run_id.empty()) info.run_id = ToString(yaml, "run_uuid");
  info.experiment_id = ToString(yaml, "experiment_id");
  info.run_name = ToString(yaml, "run_name");
  info.user_id = ToString(yaml, "user_id");
  info.artifact_uri = ToString(yaml, "artifact_uri");
  info.lifecycle_stage = ToString(yaml, "lifecycle_stage");
  info.start_time_ms = ToInt(yaml, "start_time", meta_path);
  if (yaml.count("end_time") && !yaml.at("end_time").is_null) info.end_time_ms = ToInt(yaml, "end_time", meta_path);
  if (yaml.count("deleted_time") && !yaml.at("deleted_time").is_null) {
    info.deleted_time_ms = ToInt(yaml, "deleted_time", meta_path);
  }
  const int64_t status = ToInt(yaml, "status", meta_path);
  auto parsed = RunStatusFromInt(static_cast<int>(status));
  LAKERUN_CHECK_AS(CorruptDataError, parsed.has_value(), meta_path, ": unknown run status ", status,
                   ", expected 1..5");
  info.status = *parsed;
  LAKERUN_CHECK_AS(CorruptDataError, info.run_id == BaseName(run_dir), meta_path, ": run_id '", info.run_id,
                   "' does not match its directory name");
  return info;
}

std::string FileStore::RunDir(const std::string& run_id) {
  ValidateRunId(run_id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = run_dirs_.find(run_id);
    if (it != run_dirs_.end()) return it->second;
  }
  // Active experiments, then deleted ones: MLflow moves a deleted experiment, with its runs, into .trash.
  for (const std::string& parent : {root_, JoinPath(root_, ".trash")}) {
    if (!fs_.Exists(parent)) continue;
    for (const auto& entry : fs_.List(parent)) {
      if (!entry.is_directory || entry.name[0] == '.' || entry.name == "models") continue;
      const std::string candidate = JoinPath(JoinPath(parent, entry.name), run_id);
      if (fs_.Exists(JoinPath(candidate, "meta.yaml"))) {
        std::lock_guard<std::mutex> lock(mu_);
        run_dirs_[run_id] = candidate;
        return candidate;
      }
    }
  }
  LAKERUN_THROW(InvalidArgument, "run '", run_id, "' not found in tracking store ", root_);
}

RunInfo FileStore::CreateRun(const CreateRunRequest& request) {
  EnsureRoot();
  const std::string exp_dir = ExperimentDir(request.experiment_id);
  auto experiment = ReadExperiment(exp_dir);
  LAKERUN_CHECK(experiment.has_value(), "experiment '", request.experiment_id, "' not found in ", root_);
  LAKERUN_CHECK(experiment->lifecycle_stage == "active", "experiment '", request.experiment_id,
                "' is deleted; runs can only be created in active experiments");
  RunInfo info;
  info.run_id = options_.new_run_id();
  ValidateRunId(info.run_id);
  info.experiment_id = request.experiment_id;
  info.run_name = request.run_name;
  info.user_id = request.user_id.empty() ? "unknown" : request.user_id;
  info.start_time_ms = request.start_time_ms;
  info.status = RunStatus::kRunning;
  const std::string run_dir = JoinPath(exp_dir, info.run_id);
  info.artifact_uri = FileUri(JoinPath(run_dir, "artifacts"));
  LAKERUN_CHECK_AS(IoError, !fs_.Exists(run_dir), "run directory ", run_dir, " already exists");
  for (const char* sub : {"metrics", "params", "tags", "artifacts"}) fs_.CreateDirs(JoinPath(run_dir, sub));
  for (const auto& tag : request.tags) {
    ValidateKey(tag.key, "tag");
    WriteValueFile(JoinPath(JoinPath(run_dir, "tags"), tag.key), tag.value);
  }
  WriteRunInfo(run_dir, info);
  std::lock_guard<std::mutex> lock(mu_);
  run_dirs_[info.run_id] = run_dir;
  return info;
}

void FileStore::UpdateRun(const std::string& run_id, RunStatus status, std::optional<int64_t> end_time_ms) {
  const std::string run_dir = RunDir(run_id);
  RunInfo info = ReadRunInfo(run_dir);
  info.status = status;
  if (end_time_ms) info.end_time_ms = end_time_ms;
  WriteRunInfo(run_dir, info);
}

void FileStore::CollectFiles(const std::string& dir, const std::string& prefix, std::vector<std::string>* keys) {
  for (const auto& entry : fs_.List(dir)) {
    if (entry.name.find(".tmp.") != std::string::npos) continue;
    const std::string key = prefix.empty() ? entry.name : prefix + "/" + entry.name;
    if (entry.is_directory) {
      CollectFiles(JoinPath(dir, entry.name), key, keys);
    } else {
      keys->push_back(key);
    }
  }
}

std::map<std::string, std::string> FileStore::ReadKeyValueDir(const std::string& dir) {
  std::map<std::string, std::string> out;
  if (!fs_.Exists(dir)) return out;
  std::vector<std::string> keys;
  CollectFiles(dir, "", &keys);
  for (const auto& key : keys) out[key] = fs_.ReadFile(JoinPath(dir, key));
  return out;
}

std::vector<Metric> FileStore::ReadMetricFile(const std::string& path, const std::string& key) {
  const std::string text = fs_.ReadFile(path);
  std::vector<Metric> out;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    // No '\n' after the last line: a write cut short by a crash (every writer ends its lines). Even if it parses,
    // it may be a prefix of the real line ("... 0.5" of "... 0.55 7"), so it is not a point.
    if (end == text.size()) break;
    out.push_back(ParseMetricLine(line, key, StrCat(path, ":", line_no)));
  }
  return out;
}

RunRecord FileStore::GetRun(const std::string& run_id) {
  const std::string run_dir = RunDir(run_id);
  RunRecord record;
  record.info = ReadRunInfo(run_dir);
  record.params = ReadKeyValueDir(JoinPath(run_dir, "params"));
  record.tags = ReadKeyValueDir(JoinPath(run_dir, "tags"));
  const std::string metrics_dir = JoinPath(run_dir, "metrics");
  if (fs_.Exists(metrics_dir)) {
    std::vector<std::string> keys;
    CollectFiles(metrics_dir, "", &keys);
    for (const auto& key : keys) {
      const auto history = ReadMetricFile(JoinPath(metrics_dir, key), key);
      if (history.empty()) continue;
      Metric latest = history.front();
      for (const auto& m : history) {
        if (MetricIsLater(m, latest)) latest = m;
      }
      record.latest_metrics[key] = latest;
    }
  }
  return record;
}

std::vector<RunRecord> FileStore::SearchRuns(const std::vector<std::string>& experiment_ids) {
  return SearchRunsWhere(experiment_ids, [](const std::string&) { return true; });
}

std::vector<RunRecord> FileStore::SearchRunsByTag(const std::string& experiment_id, const std::string& key,
                                                  const std::string& value) {
  ValidateKey(key, "tag");
  return SearchRunsWhere({experiment_id}, [&](const std::string& run_dir) {
    const std::string path = JoinPath(JoinPath(run_dir, "tags"), key);
    return fs_.Exists(path) && fs_.ReadFile(path) == value;
  });
}

std::vector<RunRecord> FileStore::SearchRunsWhere(const std::vector<std::string>& experiment_ids,
                                                  const std::function<bool(const std::string& run_dir)>& wanted) {
  std::vector<RunRecord> out;
  for (const auto& experiment_id : experiment_ids) {
    const std::string exp_dir = ExperimentDir(experiment_id);
    LAKERUN_CHECK(fs_.Exists(JoinPath(exp_dir, "meta.yaml")), "experiment '", experiment_id, "' not found in ",
                  root_);
    for (const auto& entry : fs_.List(exp_dir)) {
      if (!entry.is_directory || IsReservedExperimentChild(entry.name) || entry.name[0] == '.') continue;
      const std::string run_dir = JoinPath(exp_dir, entry.name);
      if (!fs_.Exists(JoinPath(run_dir, "meta.yaml"))) continue;
      try {  // a run that is not wanted is not read
        if (!wanted(run_dir)) continue;
      } catch (const Error& e) {
        LAKERUN_LOG(Warning) << "skipping the run in " << run_dir << ": " << e.what();
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        run_dirs_[entry.name] = run_dir;
      }
      // One damaged run must not hide the others: it is named and skipped.
      try {
        RunRecord record = GetRun(entry.name);
        if (record.info.lifecycle_stage == "active") out.push_back(std::move(record));
      } catch (const Error& e) {
        LAKERUN_LOG(Warning) << "skipping the run in " << run_dir << ": " << e.what();
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const RunRecord& a, const RunRecord& b) {
    return a.info.start_time_ms > b.info.start_time_ms;
  });
  return out;
}

void FileStore::WriteValueFile(const std::string& path, const std::string& value) {
  fs_.CreateDirs(DirName(path));
  auto file = fs_.OpenForWrite(path);
  file->Append(value);
  file->Close();
}

void FileStore::LogBatch(const std::string& run_id, const std::vector<Metric>& metrics,
                         const std::vector<KeyValue>& params, const std::vector<KeyValue>& tags) {
  const std::string run_dir = RunDir(run_id);
  for (const auto& m : metrics) ValidateKey(m.key, "metric");
  for (const auto& p : params) {
    ValidateKey(p.key, "param");
    ValidateParamValue(p.key, p.value);
  }
  for (const auto& t : tags) {
    ValidateKey(t.key, "tag");
    ValidateTagValue(t.key, t.value);
  }
  // Params first, each checked against what is stored: MLflow refuses to change a logged param.
  const std::string params_dir = JoinPath(run_dir, "params");
  for (const auto& p : params) {
    const std::string path = JoinPath(params_dir, p.key);
    if (fs_.Exists(path)) {
      const std::string old = fs_.ReadFile(path);
      LAKERUN_CHECK(old == p.value, "Changing param values is not allowed. Param with key='", p.key,
                    "' was already logged with value='", old, "' for run ID='", run_id,
                    "'. Attempted logging new value '", p.value, "'.");
      continue;
    }
    WriteValueFile(path, p.value);
  }
  const std::string tags_dir = JoinPath(run_dir, "tags");
  for (const auto& t : tags) WriteValueFile(JoinPath(tags_dir, t.key), t.value);
  // Metrics: one append per key per batch, lines in the order logged.
  std::map<std::string, std::string> lines_by_key;
  std::vector<const std::string*> order;
  for (const auto& m : metrics) {
    auto [it, inserted] = lines_by_key.try_emplace(m.key);
    if (inserted) order.push_back(&it->first);
    AppendMetricLine(m, &it->second);
  }
  const std::string metrics_dir = JoinPath(run_dir, "metrics");
  for (const std::string* key : order) {
    const std::string path = JoinPath(metrics_dir, *key);
    if (key->find('/') != std::string::npos) fs_.CreateDirs(DirName(path));
    auto file = fs_.OpenForAppend(path);
    file->Append(lines_by_key[*key]);
    file->Close();
  }
}

std::vector<Metric> FileStore::GetMetricHistory(const std::string& run_id, const std::string& key) {
  ValidateKey(key, "metric");
  const std::string path = JoinPath(JoinPath(RunDir(run_id), "metrics"), key);
  if (!fs_.Exists(path)) return {};
  return ReadMetricFile(path, key);
}

std::string FileStore::ArtifactDir(const std::string& run_id) {
  const RunInfo info = ReadRunInfo(RunDir(run_id));
  LAKERUN_CHECK(info.artifact_uri.rfind("file://", 0) == 0, "run '", run_id, "': artifact_uri '", info.artifact_uri,
                "' is not a local file:// URI");
  const std::string dir = info.artifact_uri.substr(7);
  // A store copied or moved elsewhere keeps its old absolute URIs; its runs' own artifacts/ is where they are now.
  const std::string local = JoinPath(RunDir(run_id), "artifacts");
  if (!fs_.Exists(dir) && fs_.Exists(local)) return local;
  return dir;
}

void FileStore::CopyFile(const std::string& from, const std::string& to) {
  constexpr size_t kChunk = 1 << 20;
  auto in = fs_.OpenForRead(from);
  fs_.CreateDirs(DirName(to));
  auto out = fs_.OpenForWrite(to);
  std::string buffer;
  for (uint64_t offset = 0; offset < in->Size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, in->Size() - offset));
    buffer.resize(n);
    in->ReadAt(offset, n, buffer.data());
    out->Append(buffer);
    offset += n;
  }
  out->Close();
}

void FileStore::LogArtifact(const std::string& run_id, const std::string& local_path,
                            const std::string& artifact_path) {
  ValidateArtifactPath(artifact_path);
  const std::string dest_root = JoinPath(ArtifactDir(run_id), artifact_path);
  auto info = fs_.Stat(local_path);
  LAKERUN_CHECK(info.has_value(), "artifact '", local_path, "' for run '", run_id, "' does not exist");
  if (!info->is_directory) {
    CopyFile(local_path, JoinPath(dest_root, BaseName(local_path)));
    return;
  }
  fs_.CreateDirs(dest_root);
  std::vector<std::string> files;
  CollectFiles(local_path, "", &files);
  for (const auto& rel : files) CopyFile(JoinPath(local_path, rel), JoinPath(dest_root, rel));
}

std::vector<ArtifactEntry> FileStore::ListArtifacts(const std::string& run_id, const std::string& path) {
  ValidateArtifactPath(path);
  const std::string dir = JoinPath(ArtifactDir(run_id), path);
  std::vector<ArtifactEntry> out;
  if (!fs_.Exists(dir)) return out;
  for (const auto& entry : fs_.List(dir)) {
    out.push_back({path.empty() ? entry.name : path + "/" + entry.name, entry.is_directory,
                   entry.is_directory ? 0 : static_cast<int64_t>(entry.size)});
  }
  return out;
}

void FileStore::RecordLoggedModel(const std::string& run_id, const std::string& model_json) {
  const auto entry = nlohmann::json::parse(model_json, nullptr, /*allow_exceptions=*/false);
  LAKERUN_CHECK(entry.is_object(), "run '", run_id, "': the logged model's entry is not a JSON object: ", model_json);
  for (const char* field : {"run_id", "artifact_path", "utc_time_created", "flavors"}) {
    LAKERUN_CHECK(entry.contains(field), "run '", run_id, "': the logged model's entry lacks '", field,
                  "', which MLflow requires: ", model_json);
  }
  const std::string run_dir = RunDir(run_id);
  LAKERUN_CHECK(ReadRunInfo(run_dir).lifecycle_stage == "active", "run '", run_id,
                "' is deleted; models are recorded only on active runs");
  const std::string path = JoinPath(JoinPath(run_dir, "tags"), kLogModelHistoryTag);
  std::lock_guard<std::mutex> lock(history_mu_);
  // The list is extended in place rather than parsed and written again: a history MLflow wrote keeps its bytes.
  std::string history = fs_.Exists(path) ? fs_.ReadFile(path) : "[]";
  const auto parsed = nlohmann::json::parse(history, nullptr, /*allow_exceptions=*/false);
  LAKERUN_CHECK_AS(CorruptDataError, parsed.is_array(), path, ": tag ", kLogModelHistoryTag,
                   " is not a JSON list, so the model logged to run '", run_id, "' cannot be added to it");
  size_t close = history.find_last_of(']');
  while (close > 0 && std::isspace(static_cast<unsigned char>(history[close - 1]))) --close;
  history = parsed.empty() ? "[" + model_json + "]" : history.substr(0, close) + ", " + model_json + "]";
  fs_.CreateDirs(DirName(path));
  fs_.WriteAtomically(path, history);
}

}  // namespace lakerun::track
