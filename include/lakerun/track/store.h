// The tracking store: where experiments, runs, metrics, artifacts and registered models live.
//
// Two implementations sit behind this interface:
//   - a file store (`file:PATH`, a bare path, default `./mlruns`) writing MLflow's file-store layout exactly, and
//   - a REST store (`http://`, `https://`) talking to an MLflow tracking server.
// Tracker and Run log through it from their background thread; the `lakerun runs` commands read through it.
//
//   auto store = lakerun::track::OpenStore("file:./mlruns");
//   for (const auto& run : store->SearchRuns({"0"})) std::cout << run.info.run_name << "\n";
//
// Errors: a missing experiment or run is InvalidArgument naming the id; an I/O or HTTP failure is IoError naming the
// file or URL. Thread-safety: a Store may be used from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/track/types.h"

namespace lakerun {
class FileSystem;
}

namespace lakerun::track {

/// How the REST store talks HTTP. Retries follow MLflow's Python client (7 retries, backoff factor 2, jitter 1 s);
/// every call is bounded: it ends within `max_retry_time` (attempts and the waits between them; an attempt's own
/// timeout is cut to what is left), and an error then names the server, the call and the last failure. The
/// environment overrides the defaults as MLflow's client reads it: MLFLOW_HTTP_REQUEST_TIMEOUT (seconds per
/// attempt) and MLFLOW_HTTP_REQUEST_MAX_RETRIES; LAKERUN_TRACKING_TIMEOUT (seconds) sets max_retry_time, e.g. for
/// large artifact uploads over a slow link.
struct HttpOptions {
  int max_retries = 7;
  std::chrono::milliseconds backoff_base{2000};  ///< sleep before retry n is backoff_base * 2^(n-1) + jitter
  std::chrono::milliseconds backoff_max{60000};  ///< cap on one sleep
  std::chrono::milliseconds jitter{1000};        ///< uniform random extra in [0, jitter]
  std::chrono::milliseconds max_retry_time{60000};
  std::chrono::milliseconds request_timeout{60000};
  std::chrono::milliseconds connect_timeout{10000};
  /// Credentials. Empty means: take MLFLOW_TRACKING_TOKEN / MLFLOW_TRACKING_USERNAME + _PASSWORD from the environment.
  std::string token;
  std::string username;
  std::string password;
  bool insecure_tls = false;  ///< also set by MLFLOW_TRACKING_INSECURE_TLS=true
  std::string ca_cert_path;   ///< also set by MLFLOW_TRACKING_SERVER_CERT_PATH
};

/// Injection points for deterministic output (golden tests) and test file systems.
struct StoreOptions {
  std::function<int64_t()> clock_ms;                 ///< default: system clock
  std::function<std::string()> new_run_id;           ///< default: uuid4 hex (32 lower-case hex chars)
  std::function<std::string()> new_experiment_id;    ///< default: an 18-digit random integer, as MLflow makes
  FileSystem* file_system = nullptr;                 ///< file store only; default LocalFileSystem()
  HttpOptions http;
};

struct CreateRunRequest {
  std::string experiment_id;
  std::string run_name;
  std::string user_id;
  int64_t start_time_ms = 0;
  std::vector<KeyValue> tags;
};

/// Limits of one MLflow log-batch call (mlflow/utils/validation.py).
struct LogBatchLimits {
  size_t max_metrics = 1000;
  size_t max_params = 100;
  size_t max_tags = 100;
  size_t max_entities = 1000;
  size_t max_body_bytes = 1000000;
};

class Store {
 public:
  virtual ~Store() = default;

  /// The URI this store was opened with.
  virtual const std::string& uri() const = 0;

  virtual std::optional<Experiment> GetExperimentByName(const std::string& name) = 0;
  virtual std::optional<Experiment> GetExperiment(const std::string& experiment_id) = 0;
  /// Creates an experiment and returns its id. InvalidArgument if the name exists.
  virtual std::string CreateExperiment(const std::string& name) = 0;
  /// Active experiments.
  virtual std::vector<Experiment> ListExperiments() = 0;

  virtual RunInfo CreateRun(const CreateRunRequest& request) = 0;
  /// Sets status and end time.
  virtual void UpdateRun(const std::string& run_id, RunStatus status, std::optional<int64_t> end_time_ms) = 0;
  /// The run with params, tags and latest metrics. InvalidArgument naming the id if it does not exist.
  virtual RunRecord GetRun(const std::string& run_id) = 0;
  /// Active runs of the given experiments, newest first.
  virtual std::vector<RunRecord> SearchRuns(const std::vector<std::string>& experiment_ids) = 0;
  /// Active runs of `experiment_id` whose tag `key` has the value `value`, newest first (MLflow's filter
  /// tags.`key` = 'value'). Reads only the matching runs in full.
  virtual std::vector<RunRecord> SearchRunsByTag(const std::string& experiment_id, const std::string& key,
                                                 const std::string& value) = 0;

  /// Stores metrics (appended to their histories), params (immutable: a different value for an existing key is
  /// InvalidArgument naming the key and both values) and tags (overwritten). Any number of each: implementations
  /// split as their backend requires.
  virtual void LogBatch(const std::string& run_id, const std::vector<Metric>& metrics,
                        const std::vector<KeyValue>& params, const std::vector<KeyValue>& tags) = 0;
  /// Every point of one metric in the order stored.
  virtual std::vector<Metric> GetMetricHistory(const std::string& run_id, const std::string& key) = 0;

  /// Copies a local file or directory under the run's artifact root at `artifact_path` ("" = the root). A file keeps
  /// its base name: LogArtifact(id, "/tmp/a.txt", "dir") stores dir/a.txt; a directory's contents go under
  /// `artifact_path` (as mlflow.log_artifacts does).
  virtual void LogArtifact(const std::string& run_id, const std::string& local_path,
                           const std::string& artifact_path) = 0;
  /// Direct children of `path` ("" = root) under the run's artifact root.
  virtual std::vector<ArtifactEntry> ListArtifacts(const std::string& run_id, const std::string& path) = 0;
  /// Appends `model_json`, one entry of the run's mlflow.log-model.history tag (mlmodel.h: FormatLogModelHistoryEntry),
  /// to that tag, as MLflow's record_logged_model does: the file store rewrites the tag's JSON list with the entry at
  /// its end; the REST store calls runs/log-model, whose server appends it. InvalidArgument when the entry lacks a
  /// field MLflow requires (run_id, artifact_path, utc_time_created, flavors) or the run is deleted; CorruptDataError
  /// when the tag holds something other than a JSON list.
  virtual void RecordLoggedModel(const std::string& run_id, const std::string& model_json) = 0;
  /// MLflow 3's logged model: creates a LoggedModel named `name` from run `run_id`, uploads the model directory
  /// `local_dir` to its own artifact location, marks it READY and records it as the run's output at `step`. Returns
  /// its model id; std::nullopt where the store has no logged models (the file store, an MLflow 2 server), for which
  /// the run's artifacts and its mlflow.log-model.history tag are the whole record.
  virtual std::optional<std::string> LogLoggedModel(const std::string& run_id, const std::string& name,
                                                    const std::string& local_dir, int64_t step) {
    (void)run_id, (void)name, (void)local_dir, (void)step;
    return std::nullopt;
  }

  /// Returns the registered model, creating it if missing.
  virtual RegisteredModel GetOrCreateRegisteredModel(const std::string& name) = 0;
  /// Adds version max+1 of a registered model pointing at `source` (e.g. "runs:/<id>/model" resolved to a URI).
  virtual ModelVersion CreateModelVersion(const std::string& name, const std::string& source,
                                          const std::string& run_id) = 0;
};

/// Opens the store named by `uri`: "file:PATH", "file:///abs", a bare path, "http://…" or "https://…". An empty uri
/// means MLFLOW_TRACKING_URI, else "./mlruns". ConfigError for an unsupported scheme.
std::unique_ptr<Store> OpenStore(const std::string& uri, const StoreOptions& options = {});

/// The tracking URI a Tracker uses when given none: MLFLOW_TRACKING_URI, else "./mlruns".
std::string DefaultTrackingUri();

}  // namespace lakerun::track
