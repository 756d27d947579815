// Value types of lakerun::track: the records MLflow stores for experiments, runs, metrics and models.
//
// These mirror MLflow's entities (mlflow/entities) closely enough that a file store written by lakerun and one written
// by MLflow, or a tracking server's JSON, map onto them without loss. Times are milliseconds since the Unix epoch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::track {

/// MLflow's RunStatus; the integers are the ones a file store's meta.yaml holds.
enum class RunStatus { kRunning = 1, kScheduled = 2, kFinished = 3, kFailed = 4, kKilled = 5 };

/// "RUNNING", "FINISHED", ... as MLflow's REST API spells them.
std::string_view RunStatusName(RunStatus status);
/// Inverse of RunStatusName; std::nullopt for an unknown name.
std::optional<RunStatus> ParseRunStatusName(std::string_view name);
/// Inverse of static_cast<int>(status); std::nullopt for an unknown number.
std::optional<RunStatus> RunStatusFromInt(int value);

/// One point of a metric's history.
struct Metric {
  std::string key;
  double value = 0;
  int64_t timestamp_ms = 0;
  int64_t step = 0;
};

/// True when `a` is shown as a run's latest value in preference to `b`: MLflow takes the max by
/// (step, timestamp, value), not the last point logged. NaN compares below every number.
bool MetricIsLater(const Metric& a, const Metric& b);

/// A param or tag.
struct KeyValue {
  std::string key;
  std::string value;
};

struct Experiment {
  std::string experiment_id;
  std::string name;
  std::string artifact_location;
  std::string lifecycle_stage = "active";
  int64_t creation_time_ms = 0;
  int64_t last_update_time_ms = 0;
  std::map<std::string, std::string> tags;
};

struct RunInfo {
  std::string run_id;
  std::string experiment_id;
  std::string run_name;
  std::string user_id;
  RunStatus status = RunStatus::kRunning;
  int64_t start_time_ms = 0;
  std::optional<int64_t> end_time_ms;  ///< absent while the run is running
  std::string artifact_uri;
  std::string lifecycle_stage = "active";  ///< "deleted" once deleted (mlflow runs delete, or with its experiment)
  std::optional<int64_t> deleted_time_ms;  ///< when it was deleted, where the store records it (file store)
};

/// A run with its data: params, tags and the latest value of each metric.
struct RunRecord {
  RunInfo info;
  std::map<std::string, Metric> latest_metrics;
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> tags;
};

struct RegisteredModel {
  std::string name;
  std::string description;
  int64_t creation_timestamp_ms = 0;
  int64_t last_updated_timestamp_ms = 0;
};

struct ModelVersion {
  std::string name;
  int64_t version = 0;
  std::string source;
  std::string run_id;
  std::string status = "READY";
  std::string current_stage = "None";
  int64_t creation_timestamp_ms = 0;
};

/// A file or directory under a run's artifact root.
struct ArtifactEntry {
  std::string path;  ///< relative to the artifact root
  bool is_dir = false;
  int64_t file_size = 0;
};

}  // namespace lakerun::track
