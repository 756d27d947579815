// FileStore: MLflow's file-store layout (reference: docs/tracking.md, "File store layout").
//
//   <root>/.trash/                     <root>/0/meta.yaml (experiment "Default")
//   <root>/<exp_id>/meta.yaml          <root>/<exp_id>/<run_id>/{meta.yaml,metrics/,params/,tags/,artifacts/}
//   <root>/models/<name>/meta.yaml     <root>/models/<name>/version-<n>/meta.yaml
//
// Writes go through lakerun::FileSystem: meta.yaml files atomically (temp + rename, as MLflow's overwrite_yaml),
// metric points appended one line each, params and tags as raw values. The root, Default and .trash are created on
// the first write, never on reads. Thread-safety: calls may come from several threads; two processes must not write
// the same run at once (the Tracker logs from rank 0 only).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "lakerun/track/store.h"

namespace lakerun::track {

class FileStore final : public Store {
 public:
  /// `root`: the tracking directory (relative paths resolve against the working directory). `uri`: as opened.
  FileStore(std::string uri, std::string root, const StoreOptions& options);

  const std::string& uri() const override { return uri_; }
  const std::string& root() const { return root_; }

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

  RegisteredModel GetOrCreateRegisteredModel(const std::string& name) override;
  ModelVersion CreateModelVersion(const std::string& name, const std::string& source,
                                  const std::string& run_id) override;

  /// The local directory holding a run's artifacts.
  std::string ArtifactDir(const std::string& run_id);

 private:
  void EnsureRoot();
  std::string ExperimentDir(const std::string& experiment_id) const;
  /// The directory of an experiment, active or deleted (under .trash); "" when there is none.
  std::string FindExperimentDir(const std::string& experiment_id);
  /// The directory of a run, in an active or a deleted experiment; InvalidArgument naming the id when no experiment
  /// holds it.
  std::string RunDir(const std::string& run_id);
  std::optional<Experiment> ReadExperiment(const std::string& dir);
  RunInfo ReadRunInfo(const std::string& run_dir);
  void WriteRunInfo(const std::string& run_dir, const RunInfo& info);
  /// Key -> raw value for every file under `dir` (slash keys from sub-directories).
  std::map<std::string, std::string> ReadKeyValueDir(const std::string& dir);
  void CollectFiles(const std::string& dir, const std::string& prefix, std::vector<std::string>* keys);
  std::vector<Metric> ReadMetricFile(const std::string& path, const std::string& key);
  /// Active runs of the experiments for which `wanted(run_dir)` is true, newest first; a damaged run is skipped
  /// with a warning.
  std::vector<RunRecord> SearchRunsWhere(const std::vector<std::string>& experiment_ids,
                                         const std::function<bool(const std::string& run_dir)>& wanted);
  void WriteValueFile(const std::string& path, const std::string& value);
  void CopyFile(const std::string& from, const std::string& to);
  std::string FileUri(const std::string& path) const { return "file://" + path; }

  std::string uri_;
  std::string root_;  // absolute, no trailing '/'
  StoreOptions options_;
  FileSystem& fs_;
  std::mutex mu_;
  bool root_ready_ = false;                          // guarded by mu_
  std::map<std::string, std::string> run_dirs_;      // run id -> run dir, guarded by mu_
  std::mutex history_mu_;                            // one read-modify-write of a log-model history at a time
};

/// The local path a file-store URI names: "file:PATH", "file:///abs", "file://localhost/abs" or a bare path.
std::string FileStorePath(const std::string& uri);

}  // namespace lakerun::track
