// Tracker: the entry point for logging experiments MLflow-style from a training program.
//
//   using namespace lakerun::track;
//   Tracker tracker = Tracker::FromEnvironment();            // MLFLOW_TRACKING_URI, MLFLOW_EXPERIMENT_NAME, RANK
//   StartRunOptions start;
//   start.run_name = "resnet-lr3";
//   Run run = tracker.StartRun(start);
//   run.LogParam("lr", "0.001");
//   for (int step = 0; step < steps; ++step) run.LogMetric("train/loss", loss, step);   // only enqueues
//   run.LogArtifact("checkpoints/last.ckpt");
//   run.End();                       // or let the destructor end it: FINISHED, or FAILED during stack unwinding
//
// Environment (read by FromEnvironment; explicit options win):
//   MLFLOW_TRACKING_URI     store URI (default ./mlruns)      MLFLOW_EXPERIMENT_NAME  experiment (default "Default")
//   MLFLOW_RUN_ID           StartRun attaches to this run      MLFLOW_TRACKING_TOKEN / _USERNAME / _PASSWORD  auth
//   RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, ...   a rank other than 0 makes the tracker a no-op
//                           (TrackerOptions::log_on_every_rank), read as lakerun::dist reads it
//                           (lakerun/base/rank_environment.h)
//   LAKERUN_RUN_ID, LAKERUN_RESTART_COUNT   under `lakerun launch`: one run per job (below)
//   LAKERUN_RUN_INFO_DIR    under the `lakerun launch` command: every run is announced there while open, so that
//                           the command ends a run its process died without ending (open_runs.h)
//
// One run per job: under `lakerun launch`, rank 0's first top-level run is tagged lakerun.job_id = LAKERUN_RUN_ID
// and lakerun.restart_count = the attempt. When the launcher restarts the job (LAKERUN_RESTART_COUNT > 0), that
// StartRun continues the job's run (found by its lakerun.job_id tag in the experiment; status back to RUNNING) instead
// of creating another, and sets lakerun.restart_count to the new attempt. MLFLOW_RUN_ID and StartRunOptions::run_id
// still win.
//
// Thread-safety: a Tracker may be shared; see run.h for Run.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "lakerun/track/run.h"
#include "lakerun/track/store.h"

namespace lakerun::track {

/// Tags of the run of a `lakerun launch` job (above): the launcher's run id, and the attempt that last started it.
inline constexpr const char* kJobIdTag = "lakerun.job_id";
inline constexpr const char* kRestartCountTag = "lakerun.restart_count";
/// Tags of the process logging a run, set when it starts or continues the run (TrackerOptions::record_process): its
/// host name, its pid, and what tells it from a later process with the same pid ("<boot id>:<pid namespace>:<start
/// time in clock ticks>"). `lakerun runs` shows a RUNNING run whose process ran on this host and is gone as stale.
inline constexpr const char* kHostTag = "lakerun.host";
inline constexpr const char* kPidTag = "lakerun.pid";
inline constexpr const char* kProcessStartTag = "lakerun.process_start";

/// What a log call does when the background queue is full.
enum class QueueFullPolicy {
  kBlock,  ///< wait until the background thread makes room (back-pressure; nothing is lost)
  kDrop,   ///< drop the point, count it in Run::dropped(), and warn once
};

struct TrackerOptions {
  std::string tracking_uri;      ///< empty: MLFLOW_TRACKING_URI, else ./mlruns
  std::string experiment_name;   ///< empty: MLFLOW_EXPERIMENT_NAME, else "Default" (id "0")
  /// Capacity of the per-run queue of pending log entries between the caller and the background thread.
  size_t queue_capacity = 1 << 18;
  QueueFullPolicy on_full = QueueFullPolicy::kBlock;
  /// Bound on Flush()/End()/the signal handler waiting for the background thread to store what is queued.
  std::chrono::milliseconds flush_timeout{120000};
  /// By default only rank 0 logs (rank as lakerun::DetectRankEnvironment reads it: RANK with WORLD_SIZE,
  /// SLURM_PROCID in an srun step, OMPI_COMM_WORLD_RANK, PMI_RANK; a single process is rank 0); other ranks get a
  /// no-op tracker. With this set every rank logs, each to its own run (only rank 0's is the job's run).
  bool log_on_every_rank = false;
  /// Install SIGINT/SIGTERM/SIGHUP/SIGPIPE handling while a run is active: flush, mark KILLED, re-raise with the default action.
  bool handle_signals = true;
  /// Add mlflow.user / mlflow.source.* / mlflow.source.git.commit tags to new runs.
  bool add_system_tags = true;
  /// Tag new and continued runs with the process logging them (kHostTag, kPidTag, kProcessStartTag).
  bool record_process = true;
  /// Overrides for system tags (tests): empty means detect.
  std::string user;
  std::string source_name;
  std::string git_commit;          ///< used as mlflow.source.git.commit when set
  bool detect_git_commit = true;   ///< else: read .git/HEAD of the working directory's tree (no git subprocess)
  StoreOptions store;
};

struct StartRunOptions {
  std::string run_name;                    ///< empty: a generated "adjective-noun-NNN" name
  std::map<std::string, std::string> tags;
  /// Nested run: the parent's id goes to tag mlflow.parentRunId.
  std::string parent_run_id;
  /// Attach to an existing run instead of creating one (FromEnvironment fills it from MLFLOW_RUN_ID). Empty: a new
  /// run, or, in a restarted `lakerun launch` job, the job's run (above).
  std::string run_id;
};

class Tracker {
 public:
  /// Reads the environment (see above) into `options` where they leave a field empty.
  static Tracker FromEnvironment(TrackerOptions options = {});
  /// A tracker for `uri` (file store path or http(s) server); the experiment comes from options. Throws ConfigError
  /// naming the variable when the rank environment is malformed (RANK=one).
  explicit Tracker(const std::string& uri, TrackerOptions options = {});
  ~Tracker();
  Tracker(Tracker&&) noexcept;
  Tracker& operator=(Tracker&&) noexcept;

  /// False for the no-op tracker of a non-zero rank: runs it starts do nothing.
  bool enabled() const;
  /// The experiment runs go to (created on first use when missing).
  const std::string& experiment_id();
  /// Starts (or attaches to) a run; its logging is asynchronous, see run.h.
  Run StartRun(StartRunOptions options = {});
  /// Starts a child run whose tag mlflow.parentRunId names `parent`.
  Run StartNestedRun(const Run& parent, StartRunOptions options = {});
  /// Registers the model logged at `artifact_path` of run `run_id` as a new version of `name` (created if missing).
  ModelVersion RegisterModel(const std::string& run_id, const std::string& artifact_path, const std::string& name);
  /// The underlying store (for reads). InternalError on a disabled tracker.
  Store& store();

 private:
  Tracker() = default;
  // The id of the run of this restarted job (its first, by lakerun.job_id), or "" when the job has none yet.
  std::string FindJobRun();
  // The store's URI as another process may open it (lakerun/track/open_runs.h).
  std::string StoreLocation() const;
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace lakerun::track
