// RestStore: the Store interface over MLflow's REST API (reference: docs/tracking.md, "MLflow server").
//
// Base URL http(s)://host:port[/prefix]; calls go to <base>/api/2.0/mlflow/...; artifacts to the server's artifact
// proxy <base>/api/2.0/mlflow-artifacts/artifacts/<exp>/<run>/artifacts/<path>. Server errors become lakerun errors:
// RESOURCE_DOES_NOT_EXIST, INVALID_PARAMETER_VALUE and RESOURCE_ALREADY_EXISTS -> InvalidArgument, 401/403 ->
// ConfigError (credentials), anything else -> IoError; each names the call, the URL and the server's message.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "lakerun/track/store.h"
#include "track/http_client.h"

namespace lakerun::track {

class RestStore final : public Store {
 public:
  RestStore(std::string uri, const StoreOptions& options);

  const std::string& uri() const override { return uri_; }

  std::optional<Experiment> GetExperimentByName(const std::string& name) override;
  std::optional<Experiment> GetExperiment(const std::string& experiment_id) override;
  std::string CreateExperiment(const std::string& name) override;
  std::vector<Experiment> ListExperiments() override;

  RunInfo CreateRun(const CreateRunRequest& request) override;
  void UpdateRun(const std::string& run_id, RunStatus status, std::optional<int64_t> end_time_ms) override;
  RunRecord GetRun(const std::string& run_id) override;
  std::vector<RunRecord> SearchRuns(const std::vector<std::string>& experiment_ids) override;
  std::vector<RunRecord> SearchRunsByTag(const std::string& experiment_id, const std::string& key,
                                         const std::string& value) override;

  void LogBatch(const std::string& run_id, const std::vector<Metric>& metrics, const std::vector<KeyValue>& params,
                const std::vector<KeyValue>& tags) override;
  std::vector<Metric> GetMetricHistory(const std::string& run_id, const std::string& key) override;

  void LogArtifact(const std::string& run_id, const std::string& local_path,
                   const std::string& artifact_path) override;
  std::vector<ArtifactEntry> ListArtifacts(const std::string& run_id, const std::string& path) override;
  void RecordLoggedModel(const std::string& run_id, const std::string& model_json) override;
  std::optional<std::string> LogLoggedModel(const std::string& run_id, const std::string& name,
                                            const std::string& local_dir, int64_t step) override;

  RegisteredModel GetOrCreateRegisteredModel(const std::string& name) override;
  ModelVersion CreateModelVersion(const std::string& name, const std::string& source,
                                  const std::string& run_id) override;

  /// Page size for get-history (the server needs max_results, see docs/tracking.md).
  static constexpr int kHistoryPageSize = 25000;

 private:
  /// runs/search over every page; `filter` is MLflow's filter string ("" for none).
  std::vector<RunRecord> SearchRunsFiltered(const std::vector<std::string>& experiment_ids, const std::string& filter);
  /// Sends a call and returns the parsed JSON text of a 2xx response; throws the mapped error otherwise.
  std::string Call(const std::string& method, const std::string& endpoint, const std::string& body);
  /// Like Call, but returns std::nullopt for RESOURCE_DOES_NOT_EXIST / HTTP 404.
  std::optional<std::string> CallOptional(const std::string& method, const std::string& endpoint,
                                          const std::string& body);
  [[noreturn]] void ThrowError(const std::string& method, const std::string& endpoint, const HttpResponse& response);
  std::string ArtifactUri(const std::string& run_id);
  /// "<exp>/<run>/artifacts" for an artifact_uri "mlflow-artifacts:/<exp>/<run>/artifacts" of `owner` (a run or a
  /// logged model, for messages); NotImplemented for roots the proxy does not serve.
  std::string ProxyPath(const std::string& uri, const std::string& owner);
  /// Uploads (local file, path under `root`) pairs to the artifact root `root` of `owner`: straight to an object
  /// store, else through the server's artifact proxy.
  void Upload(const std::string& root, const std::vector<std::pair<std::string, std::string>>& uploads,
              const std::string& owner);

  std::string uri_;
  StoreOptions options_;
  HttpClient http_;
  std::mutex mu_;
  std::map<std::string, std::string> artifact_uris_;  // run id -> artifact_uri, guarded by mu_
  std::atomic<bool> logged_models_supported_{true};   // false once the server answered like MLflow 2
};

}  // namespace lakerun::track
