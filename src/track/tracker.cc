#include "lakerun/track/tracker.h"

#include <cstdlib>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/base/logging.h"
#include "lakerun/base/rank_environment.h"
#include "track/file_store.h"
#include "track/ids.h"
#include "track/open_run_file.h"
#include "track/run_state.h"
#include "track/system_tags.h"
#include "track/validation.h"

namespace lakerun::track {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

struct Tracker::State {
  TrackerOptions options;
  bool enabled = true;
  std::shared_ptr<Store> store;
  std::function<int64_t()> clock_ms;
  std::mutex mu;
  std::string experiment_id;   // guarded by mu; resolved on first use
  std::string attach_run_id;   // guarded by mu; MLFLOW_RUN_ID, used by the first top-level StartRun
  RankEnvironment place;       // this process's rank, and the job and attempt `lakerun launch` gives it
  bool top_level_started = false;  // guarded by mu; the first top-level StartRun is the job's run

  // Under `lakerun launch`, rank 0's first top-level run is the job's: tagged with the job id at creation and
  // continued by the attempts that follow a restart.
  bool TracksTheJob() const { return place.launcher == Launcher::kLakerun && place.rank == 0 && !place.job_id.empty(); }
};

Tracker Tracker::FromEnvironment(TrackerOptions options) {
  if (options.tracking_uri.empty()) options.tracking_uri = DefaultTrackingUri();
  if (options.experiment_name.empty()) options.experiment_name = Env("MLFLOW_EXPERIMENT_NAME");
  Tracker tracker(options.tracking_uri, options);
  if (tracker.state_->enabled) tracker.state_->attach_run_id = Env("MLFLOW_RUN_ID");
  return tracker;
}

Tracker::Tracker(const std::string& uri, TrackerOptions options) : state_(std::make_shared<State>()) {
  if (options.experiment_name.empty()) options.experiment_name = "Default";
  options.tracking_uri = uri.empty() ? DefaultTrackingUri() : uri;
  // The rank as lakerun::dist reads it (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, ...).
  state_->place = DetectRankEnvironment();
  state_->enabled = options.log_on_every_rank || state_->place.rank == 0;
  state_->clock_ms = options.store.clock_ms ? options.store.clock_ms : SystemClockMs;
  state_->options = options;
  if (!state_->enabled) {
    LAKERUN_LOG(Debug) << "tracking disabled on rank " << state_->place.rank << " of " << state_->place.world_size
                       << " (" << LauncherName(state_->place.launcher) << "; only rank 0 logs)";
    return;
  }
  state_->store = OpenStore(options.tracking_uri, options.store);
}

Tracker::~Tracker() = default;
Tracker::Tracker(Tracker&&) noexcept = default;
Tracker& Tracker::operator=(Tracker&&) noexcept = default;

bool Tracker::enabled() const { return state_ && state_->enabled; }

Store& Tracker::store() {
  LAKERUN_INTERNAL_ASSERT(enabled(), "store() of a disabled (non-zero rank) tracker");
  return *state_->store;
}

const std::string& Tracker::experiment_id() {
  static const std::string empty;
  if (!enabled()) return empty;
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!state_->experiment_id.empty()) return state_->experiment_id;
  Store& store = *state_->store;
  const std::string& name = state_->options.experiment_name;
  if (auto existing = store.GetExperimentByName(name)) {
    state_->experiment_id = existing->experiment_id;
  } else {
    try {
      state_->experiment_id = store.CreateExperiment(name);
    } catch (const InvalidArgument&) {
      // Created meanwhile (another process, or "Default" appearing with the store's root).
      auto again = store.GetExperimentByName(name);
      if (!again) throw;
      state_->experiment_id = again->experiment_id;
    }
  }
  return state_->experiment_id;
}

Run Tracker::StartRun(StartRunOptions options) {
  if (!enabled()) return Run();
  Store& store = *state_->store;
  const TrackerOptions& topts = state_->options;
  std::string attach = options.run_id;
  bool job_run = false;
  if (options.parent_run_id.empty()) {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (attach.empty()) attach = std::exchange(state_->attach_run_id, "");
    job_run = !std::exchange(state_->top_level_started, true) && state_->TracksTheJob();
  }
  const RankEnvironment& place = state_->place;
  if (job_run) {
    options.tags[kRestartCountTag] = std::to_string(place.restart_count);
    if (attach.empty() && place.restart_count > 0) attach = FindJobRun();
  }
  if (topts.record_process) {
    const ProcessIdentity process = CurrentProcessIdentity();
    options.tags[kHostTag] = process.host;
    options.tags[kPidTag] = std::to_string(process.pid);
    if (!process.start.empty()) options.tags[kProcessStartTag] = process.start;
  }
  for (const auto& [key, value] : options.tags) {
    ValidateKey(key, "tag");
    ValidateTagValue(key, value);
  }
  RunInfo info;
  std::map<std::string, std::string> existing_params;
  if (!attach.empty()) {
    RunRecord record = store.GetRun(attach);
    info = record.info;
    existing_params = record.params;
    // The tags first (this process's, the attempt), so that a run shown RUNNING again names the process logging it.
    std::vector<KeyValue> tags;
    for (const auto& [key, value] : options.tags) tags.push_back({key, value});
    if (!tags.empty()) store.LogBatch(info.run_id, {}, {}, tags);
    store.UpdateRun(info.run_id, RunStatus::kRunning, std::nullopt);
    info.status = RunStatus::kRunning;
  } else {
    CreateRunRequest request;
    request.experiment_id = experiment_id();
    request.run_name = options.run_name.empty() ? NewRunName() : options.run_name;
    request.user_id = topts.user.empty() ? CurrentUser() : topts.user;
    request.start_time_ms = state_->clock_ms();
    std::map<std::string, std::string> tags;
    tags["mlflow.runName"] = request.run_name;
    if (topts.add_system_tags) {
      tags["mlflow.user"] = request.user_id;
      tags["mlflow.source.name"] = topts.source_name.empty() ? CurrentSourceName() : topts.source_name;
      tags["mlflow.source.type"] = "LOCAL";
      if (!topts.git_commit.empty()) {
        tags["mlflow.source.git.commit"] = topts.git_commit;
      } else if (topts.detect_git_commit) {
        // The working directory's tree, else the tree the program was built in (a build directory inside it).
        auto commit = GitCommitOf("");
        if (!commit && !tags["mlflow.source.name"].empty()) commit = GitCommitOf(DirName(tags["mlflow.source.name"]));
        if (commit) tags["mlflow.source.git.commit"] = *commit;
      }
    }
    if (!options.parent_run_id.empty()) tags["mlflow.parentRunId"] = options.parent_run_id;
    for (const auto& [key, value] : options.tags) tags[key] = value;
    if (job_run) tags[kJobIdTag] = place.job_id;
    for (const auto& [key, value] : tags) request.tags.push_back({key, value});
    info = store.CreateRun(request);
  }
  auto state = std::make_shared<Run::State>(state_->store, info, topts, state_->clock_ms);
  state->params = std::move(existing_params);
  state->announcement = AnnounceOpenRun(info.run_id, StoreLocation(), place.rank);
  return Run(std::move(state));
}

std::string Tracker::StoreLocation() const {
  // A file store by its absolute path: the process may change its working directory, the launcher has its own.
  const auto* file_store = dynamic_cast<const FileStore*>(state_->store.get());
  return file_store != nullptr ? "file://" + file_store->root() : state_->store->uri();
}

std::string Tracker::FindJobRun() {
  const RankEnvironment& place = state_->place;
  const std::vector<RunRecord> runs = state_->store->SearchRunsByTag(experiment_id(), kJobIdTag, place.job_id);
  if (runs.empty()) {
    LAKERUN_LOG(Info) << "tracking: attempt " << place.restart_count << " of job " << place.job_id
                      << " found no run of the job in experiment '" << state_->options.experiment_name
                      << "' (the attempt before ended before it started one); starting it";
    return "";
  }
  const RunRecord& first = runs.back();  // newest first: the job's first run, should there be several
  LAKERUN_LOG(Info) << "tracking: attempt " << place.restart_count << " of job " << place.job_id
                    << " continues its run " << first.info.run_id << " ('" << first.info.run_name << "')";
  return first.info.run_id;
}

Run Tracker::StartNestedRun(const Run& parent, StartRunOptions options) {
  LAKERUN_CHECK(!enabled() || parent.active(), "StartNestedRun: the parent run is not active");
  options.parent_run_id = parent.run_id();
  return StartRun(std::move(options));
}

ModelVersion Tracker::RegisterModel(const std::string& run_id, const std::string& artifact_path,
                                    const std::string& name) {
  LAKERUN_CHECK(enabled(), "RegisterModel on a disabled (non-zero rank) tracker");
  ValidateArtifactPath(artifact_path);
  Store& store = *state_->store;
  const RunRecord run = store.GetRun(run_id);
  std::string source = run.info.artifact_uri;
  if (!artifact_path.empty()) source += "/" + artifact_path;
  store.GetOrCreateRegisteredModel(name);
  return store.CreateModelVersion(name, source, run_id);
}

}  // namespace lakerun::track
