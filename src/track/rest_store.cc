#include "track/rest_store.h"

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/objstore/uri_file_system.h"
#include "track/ids.h"
#include "track/log_batch.h"
#include "track/rest_json.h"
#include "track/validation.h"

namespace lakerun::track {
namespace {

using nlohmann::json;

constexpr const char* kApi = "/api/2.0/mlflow/";
constexpr const char* kArtifactsApi = "/api/2.0/mlflow-artifacts/artifacts/";

json Parse(const std::string& text, const std::string& what) {
  try {
    return text.empty() ? json::object() : json::parse(text);
  } catch (const json::exception& e) {
    LAKERUN_THROW(CorruptDataError, what, ": response is not JSON (", e.what(), "): ", text.substr(0, 200));
  }
}

// A required member of a response object; CorruptDataError naming the call when the server left it out.
const json& Field(const json& j, const char* key, const char* call) {
  if (!j.is_object() || !j.contains(key)) {
    LAKERUN_THROW(CorruptDataError, "MLflow response to ", call, " lacks '", key, "': ", j.dump().substr(0, 200));
  }
  return j.at(key);
}

// Runs `fn`, turning a malformed response (JSON of the wrong shape) into CorruptDataError naming the call.
template <typename F>
auto Guarded(const char* call, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const json::exception& e) {
    LAKERUN_THROW(CorruptDataError, "MLflow response to ", call, " is malformed: ", e.what());
  }
}

std::string Query(std::initializer_list<std::pair<const char*, std::string>> params) {
  std::string out;
  for (const auto& [key, value] : params) {
    out += out.empty() ? '?' : '&';
    out += key;
    out += '=';
    out += HttpClient::Escape(value);
  }
  return out;
}

// Escapes each '/'-separated component of a relative path for a URL.
std::string EscapePath(const std::string& path) {
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (!out.empty()) out += '/';
    out += HttpClient::Escape(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

}  // namespace

RestStore::RestStore(std::string uri, const StoreOptions& options)
    : uri_(std::move(uri)), options_(WithDefaults(options)), http_(uri_, options_.http) {}

void RestStore::ThrowError(const std::string& method, const std::string& endpoint, const HttpResponse& response) {
  std::string code;
  std::string message = response.body.substr(0, 500);
  try {
    const json j = json::parse(response.body);
    code = JsonStr(j, "error_code");
    if (j.contains("message")) message = JsonStr(j, "message");
  } catch (const json::exception&) {
  }
  const std::string where =
      StrCat("MLflow server ", http_.base_url(), ": ", method, " ", kApi, endpoint, " returned HTTP ", response.status,
             code.empty() ? "" : " ", code, ": ", message);
  if (code == "RESOURCE_DOES_NOT_EXIST" || code == "INVALID_PARAMETER_VALUE" || code == "RESOURCE_ALREADY_EXISTS" ||
      response.status == 404 || response.status == 400) {
    throw InvalidArgument(where);
  }
  if (response.status == 401 || response.status == 403) {
    throw ConfigError(where + " (check MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD)");
  }
  // A changed param is reported as INTERNAL_ERROR / HTTP 500 by some servers; keep the family a caller can act on.
  if (message.find("Changing param values is not allowed") != std::string::npos) throw InvalidArgument(where);
  throw IoError(where);
}

std::string RestStore::Call(const std::string& method, const std::string& endpoint, const std::string& body) {
  const HttpResponse response = http_.Send(method, kApi + endpoint, body);
  if (response.status < 200 || response.status >= 300) ThrowError(method, endpoint, response);
  return response.body;
}

std::optional<std::string> RestStore::CallOptional(const std::string& method, const std::string& endpoint,
                                                   const std::string& body) {
  const HttpResponse response = http_.Send(method, kApi + endpoint, body);
  if (response.status >= 200 && response.status < 300) return response.body;
  if (response.status == 404) return std::nullopt;
  try {
    if (JsonStr(json::parse(response.body), "error_code") == "RESOURCE_DOES_NOT_EXIST") return std::nullopt;
  } catch (const json::exception&) {
  }
  ThrowError(method, endpoint, response);
}

std::optional<Experiment> RestStore::GetExperimentByName(const std::string& name) {
  return Guarded("experiments/get-by-name", [&]() -> std::optional<Experiment> {
    auto body = CallOptional("GET", "experiments/get-by-name" + Query({{"experiment_name", name}}), "");
    if (!body) return std::nullopt;
    return ExperimentFromJson(Field(Parse(*body, "experiments/get-by-name"), "experiment", "experiments/get-by-name"));
  });
}

std::optional<Experiment> RestStore::GetExperiment(const std::string& experiment_id) {
  return Guarded("experiments/get", [&]() -> std::optional<Experiment> {
    auto body = CallOptional("GET", "experiments/get" + Query({{"experiment_id", experiment_id}}), "");
    if (!body) return std::nullopt;
    return ExperimentFromJson(Field(Parse(*body, "experiments/get"), "experiment", "experiments/get"));
  });
}

std::string RestStore::CreateExperiment(const std::string& name) {
  return Guarded("experiments/create", [&]() -> std::string {
    LAKERUN_CHECK(!name.empty(), "experiment name must not be empty");
    const json response = Parse(Call("POST", "experiments/create", json{{"name", name}}.dump()), "experiments/create");
    return JsonStr(response, "experiment_id");
  });
}

std::vector<Experiment> RestStore::ListExperiments() {
  return Guarded("experiments/search", [&]() -> std::vector<Experiment> {
    std::vector<Experiment> out;
    std::string token;
    for (int page = 0; page < 10000; ++page) {
      json request = {{"max_results", 1000}, {"view_type", "ACTIVE_ONLY"}};
      if (!token.empty()) request["page_token"] = token;
      const json response = Parse(Call("POST", "experiments/search", request.dump()), "experiments/search");
      if (response.contains("experiments")) {
        for (const auto& e : response.at("experiments")) out.push_back(ExperimentFromJson(e));
      }
      token = JsonStr(response, "next_page_token");
      if (token.empty()) break;
    }
    return out;
  });
}

RunInfo RestStore::CreateRun(const CreateRunRequest& request) {
  return Guarded("runs/create", [&]() -> RunInfo {
    json tags = json::array();
    for (const auto& t : request.tags) tags.push_back({{"key", t.key}, {"value", t.value}});
    json body = {{"experiment_id", request.experiment_id},
                 {"start_time", request.start_time_ms},
                 {"tags", tags}};
    if (!request.run_name.empty()) body["run_name"] = request.run_name;
    if (!request.user_id.empty()) body["user_id"] = request.user_id;
    const json response = Parse(Call("POST", "runs/create", body.dump()), "runs/create");
    RunInfo info = RunInfoFromJson(Field(Field(response, "run", "runs/create"), "info", "runs/create"));
    std::lock_guard<std::mutex> lock(mu_);
    artifact_uris_[info.run_id] = info.artifact_uri;
    return info;
  });
}

void RestStore::UpdateRun(const std::string& run_id, RunStatus status, std::optional<int64_t> end_time_ms) {
  json body = {{"run_id", run_id}, {"run_uuid", run_id}, {"status", std::string(RunStatusName(status))}};
  if (end_time_ms) body["end_time"] = *end_time_ms;
  Call("POST", "runs/update", body.dump());
}

RunRecord RestStore::GetRun(const std::string& run_id) {
  return Guarded("runs/get", [&]() -> RunRecord {
    const json response = Parse(Call("GET", "runs/get" + Query({{"run_id", run_id}}), ""), "runs/get");
    RunRecord record = RunFromJson(Field(response, "run", "runs/get"));
    std::lock_guard<std::mutex> lock(mu_);
    artifact_uris_[run_id] = record.info.artifact_uri;
    return record;
  });
}

std::vector<RunRecord> RestStore::SearchRuns(const std::vector<std::string>& experiment_ids) {
  return SearchRunsFiltered(experiment_ids, "");
}

std::vector<RunRecord> RestStore::SearchRunsByTag(const std::string& experiment_id, const std::string& key,
                                                  const std::string& value) {
  ValidateKey(key, "tag");  // no backtick: the filter quotes the key in backticks
  // ... and the value in single quotes, with no escape: a value holding a quote or backslash is matched here, over
  // every run of the experiment. The server's answer is checked here either way.
  const bool quotable = value.find('\'') == std::string::npos && value.find('\\') == std::string::npos;
  std::vector<RunRecord> runs =
      SearchRunsFiltered({experiment_id}, quotable ? StrCat("tags.`", key, "` = '", value, "'") : "");
  std::vector<RunRecord> out;
  for (RunRecord& run : runs) {
    auto it = run.tags.find(key);
    if (it != run.tags.end() && it->second == value) out.push_back(std::move(run));
  }
  return out;
}

std::vector<RunRecord> RestStore::SearchRunsFiltered(const std::vector<std::string>& experiment_ids,
                                                     const std::string& filter) {
  return Guarded("runs/search", [&]() -> std::vector<RunRecord> {
    std::vector<RunRecord> out;
    std::string token;
    for (int page = 0; page < 100000; ++page) {
      json request = {{"experiment_ids", experiment_ids},
                      {"max_results", 1000},
                      {"run_view_type", "ACTIVE_ONLY"},
                      {"order_by", json::array({"attributes.start_time DESC"})}};
      if (!filter.empty()) request["filter"] = filter;
      if (!token.empty()) request["page_token"] = token;
      const json response = Parse(Call("POST", "runs/search", request.dump()), "runs/search");
      if (response.contains("runs")) {
        for (const auto& r : response.at("runs")) out.push_back(RunFromJson(r));
      }
      token = JsonStr(response, "next_page_token");
      if (token.empty()) break;
    }
    return out;
  });
}

void RestStore::LogBatch(const std::string& run_id, const std::vector<Metric>& metrics,
                         const std::vector<KeyValue>& params, const std::vector<KeyValue>& tags) {
  for (const auto& body : BuildLogBatchBodies(run_id, metrics, params, tags)) Call("POST", "runs/log-batch", body);
}

void RestStore::RecordLoggedModel(const std::string& run_id, const std::string& model_json) {
  // What MLflow's client sends (RestStore.record_logged_model): the server checks the entry and appends it.
  Call("POST", "runs/log-model", json{{"run_id", run_id}, {"model_json", model_json}}.dump());
}

std::vector<Metric> RestStore::GetMetricHistory(const std::string& run_id, const std::string& key) {
  return Guarded("metrics/get-history", [&]() -> std::vector<Metric> {
    std::vector<Metric> out;
    std::string token;
    for (int page = 0; page < 1000000; ++page) {
      std::string query = Query({{"run_id", run_id},
                                 {"metric_key", key},
                                 {"max_results", std::to_string(kHistoryPageSize)}});
      if (!token.empty()) query += "&page_token=" + HttpClient::Escape(token);
      const json response = Parse(Call("GET", "metrics/get-history" + query, ""), "metrics/get-history");
      if (response.contains("metrics")) {
        for (const auto& m : response.at("metrics")) out.push_back(MetricFromJson(m));
      }
      token = JsonStr(response, "next_page_token");
      if (token.empty()) break;
    }
    return out;
  });
}

std::string RestStore::ArtifactUri(const std::string& run_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = artifact_uris_.find(run_id);
    if (it != artifact_uris_.end()) return it->second;
  }
  return GetRun(run_id).info.artifact_uri;
}

std::string RestStore::ProxyPath(const std::string& uri, const std::string& owner) {
  const std::string scheme = "mlflow-artifacts:";
  LAKERUN_CHECK_AS(NotImplemented, uri.rfind(scheme, 0) == 0, owner, ": artifact_uri '", uri,
                   "' is neither an object store lakerun writes to (s3://, gs://, abfss://, az://) nor served by the "
                   "tracking server's artifact proxy (mlflow-artifacts:/...); start the server with --serve-artifacts");
  std::string rest = uri.substr(scheme.size());
  if (rest.rfind("//", 0) == 0) {  // mlflow-artifacts://host:port/path
    const size_t slash = rest.find('/', 2);
    rest = slash == std::string::npos ? "" : rest.substr(slash);
  }
  while (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  return rest;
}

namespace {

// The files under `local_path` (or the file itself) with their paths under `artifact_path`.
std::vector<std::pair<std::string, std::string>> CollectUploads(const std::string& local_path,
                                                                const std::string& artifact_path,
                                                                const std::string& owner) {
  FileSystem& fs = LocalFileSystem();
  auto info = fs.Stat(local_path);
  LAKERUN_CHECK(info.has_value(), "artifact '", local_path, "' for ", owner, " does not exist");
  std::vector<std::pair<std::string, std::string>> uploads;  // local file, artifact-relative path
  if (!info->is_directory) {
    const std::string name = BaseName(local_path);
    uploads.push_back({local_path, artifact_path.empty() ? name : artifact_path + "/" + name});
    return uploads;
  }
  std::vector<std::pair<std::string, std::string>> stack = {{local_path, artifact_path}};
  while (!stack.empty()) {
    auto [dir, rel] = stack.back();
    stack.pop_back();
    for (const auto& entry : fs.List(dir)) {
      const std::string child_rel = rel.empty() ? entry.name : rel + "/" + entry.name;
      if (entry.is_directory) {
        stack.push_back({JoinPath(dir, entry.name), child_rel});
      } else {
        uploads.push_back({JoinPath(dir, entry.name), child_rel});
      }
    }
  }
  return uploads;
}

}  // namespace

void RestStore::Upload(const std::string& root, const std::vector<std::pair<std::string, std::string>>& uploads,
                       const std::string& owner) {
  // A root in an object store (s3://, gs://, abfss://...) is written directly, as MLflow's own client does, with this
  // process's object-store credentials; any other root goes through the server's artifact proxy.
  if (IsObjectStorePath(root)) {
    for (const auto& [file, rel] : uploads) CopyFile(LocalFileSystem(), file, UriFileSystem(), JoinPath(root, rel));
    return;
  }
  const std::string base = ProxyPath(root, owner);
  for (const auto& [file, rel] : uploads) {
    const std::string path = kArtifactsApi + EscapePath(base) + "/" + EscapePath(rel);
    const HttpResponse response = http_.PutFile(path, file);
    if (response.status < 200 || response.status >= 300) {
      LAKERUN_THROW(IoError, "MLflow server ", http_.base_url(), ": uploading artifact ", file, " to ", path,
                    " returned HTTP ", response.status, ": ", response.body.substr(0, 300));
    }
  }
}

void RestStore::LogArtifact(const std::string& run_id, const std::string& local_path,
                            const std::string& artifact_path) {
  ValidateArtifactPath(artifact_path);
  const std::string owner = StrCat("run '", run_id, "'");
  Upload(ArtifactUri(run_id), CollectUploads(local_path, artifact_path, owner), owner);
}

std::optional<std::string> RestStore::LogLoggedModel(const std::string& run_id, const std::string& name,
                                                     const std::string& local_dir, int64_t step) {
  if (!logged_models_supported_.load()) return std::nullopt;
  const std::string experiment_id = GetRun(run_id).info.experiment_id;
  const json request = {{"experiment_id", experiment_id}, {"name", name}, {"source_run_id", run_id}};
  const HttpResponse created = http_.Send("POST", std::string(kApi) + "logged-models", request.dump());
  if (created.status == 404 || created.status == 405) {  // an MLflow 2 server: the history tag is all it knows
    logged_models_supported_ = false;
    return std::nullopt;
  }
  if (created.status < 200 || created.status >= 300) ThrowError("POST", "logged-models", created);
  const json info = Field(Field(Parse(created.body, "logged-models"), "model", "logged-models"), "info",
                          "logged-models");
  const std::string model_id = JsonStr(info, "model_id");
  const std::string owner = StrCat("logged model '", model_id, "' of run '", run_id, "'");
  LAKERUN_CHECK_AS(IoError, !model_id.empty(), "MLflow server ", http_.base_url(),
                   ": logged-models returned no model_id");
  // As MLflow 3's log_model: the files under the model's own artifact location, then READY, then the run's output.
  Upload(JsonStr(info, "artifact_uri"), CollectUploads(local_dir, "", owner), owner);
  Call("PATCH", "logged-models/" + model_id,
       json{{"model_id", model_id}, {"status", "LOGGED_MODEL_READY"}}.dump());
  Call("POST", "runs/outputs",
       json{{"run_id", run_id}, {"models", json::array({json{{"model_id", model_id}, {"step", step}}})}}.dump());
  return model_id;
}

std::vector<ArtifactEntry> RestStore::ListArtifacts(const std::string& run_id, const std::string& path) {
  return Guarded("artifacts/list", [&]() -> std::vector<ArtifactEntry> {
    const json response = Parse(Call("GET", "artifacts/list" + Query({{"run_id", run_id}, {"path", path}}), ""),
                                "artifacts/list");
    std::vector<ArtifactEntry> out;
    if (response.contains("files")) {
      for (const auto& f : response.at("files")) {
        out.push_back({JsonStr(f, "path"), f.value("is_dir", false), JsonInt(f, "file_size")});
      }
    }
    return out;
  });
}

RegisteredModel RestStore::GetOrCreateRegisteredModel(const std::string& name) {
  return Guarded("registered-models/create", [&]() -> RegisteredModel {
    LAKERUN_CHECK(!name.empty(), "registered model name must not be empty");
    const HttpResponse created =
        http_.Send("POST", std::string(kApi) + "registered-models/create", json{{"name", name}}.dump());
    json model;
    if (created.status >= 200 && created.status < 300) {
      model = Field(Parse(created.body, "registered-models/create"), "registered_model", "registered-models/create");
    } else {
      std::string code;
      try {
        code = JsonStr(json::parse(created.body), "error_code");
      } catch (const json::exception&) {
      }
      if (code != "RESOURCE_ALREADY_EXISTS") ThrowError("POST", "registered-models/create", created);
      model = Field(Parse(Call("GET", "registered-models/get" + Query({{"name", name}}), ""), "registered-models/get"),
                    "registered_model", "registered-models/get");
    }
    RegisteredModel out;
    out.name = JsonStr(model, "name");
    out.description = JsonStr(model, "description");
    out.creation_timestamp_ms = JsonInt(model, "creation_timestamp");
    out.last_updated_timestamp_ms = JsonInt(model, "last_updated_timestamp");
    return out;
  });
}

ModelVersion RestStore::CreateModelVersion(const std::string& name, const std::string& source,
                                           const std::string& run_id) {
  return Guarded("model-versions/create", [&]() -> ModelVersion {
    json body = {{"name", name}, {"source", source}};
    if (!run_id.empty()) body["run_id"] = run_id;
    const json response = Parse(Call("POST", "model-versions/create", body.dump()), "model-versions/create");
    return ModelVersionFromJson(Field(response, "model_version", "model-versions/create"));
  });
}

}  // namespace lakerun::track
