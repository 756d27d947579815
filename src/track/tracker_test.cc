// Tracker and Run over a file store: asynchronous logging, flush guarantees, statuses, ranks, attaching, errors.
#include "lakerun/track/tracker.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/open_runs.h"
#include "lakerun/track/report.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/scoped_env.h"
#include "lakerun_testing/temp_dir.h"
#include "track/system_tags.h"

namespace lakerun::track {
namespace {

using lakerun::testing::ScopedEnv;

TrackerOptions Quiet() {
  TrackerOptions options;
  options.handle_signals = false;
  options.experiment_name = "exp";
  return options;
}

TEST(TrackerTest, FlushStoresEverythingLoggedBefore) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run run = tracker.StartRun();
  for (int i = 0; i < 5000; ++i) run.LogMetric("loss", 1.0 / (i + 1), i);
  run.LogParam("lr", "0.1");
  run.Flush();
  const auto history = tracker.store().GetMetricHistory(run.run_id(), "loss");
  ASSERT_EQ(history.size(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(history[i].step, i);
  EXPECT_EQ(tracker.store().GetRun(run.run_id()).params.at("lr"), "0.1");
  EXPECT_EQ(tracker.store().GetRun(run.run_id()).info.status, RunStatus::kRunning);
  run.End();
  EXPECT_EQ(tracker.store().GetRun(run.run_id()).info.status, RunStatus::kFinished);
}

TEST(TrackerTest, ThePointLoggedTwiceInOneMillisecondIsStoredOnce) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run run = tracker.StartRun();
  run.LogMetric("epoch", 0, 7, 1000);
  run.LogMetric("epoch", 0, 7, 1000);  // the same point again (two hooks, one millisecond)
  run.LogMetric("epoch", 1, 7, 1000);  // another value at that step and time: a point of its own
  run.LogMetric("epoch", 1, 7, 1001);  // a later time: a point of its own
  run.LogMetric("other", 0, 7, 1000);  // another key
  run.Flush();
  EXPECT_EQ(tracker.store().GetMetricHistory(run.run_id(), "epoch").size(), 3u);
  EXPECT_EQ(tracker.store().GetMetricHistory(run.run_id(), "other").size(), 1u);
  run.End();
}

TEST(TrackerTest, NewRunsCarrySystemTagsAndAName) {
  testing::TempDir dir;
  TrackerOptions options = Quiet();
  options.user = "carol";
  Tracker tracker(dir.Join("mlruns"), options);
  track::Run run = tracker.StartRun();
  run.End();
  const RunRecord record = tracker.store().GetRun(run.run_id());
  EXPECT_FALSE(record.info.run_name.empty());
  EXPECT_EQ(record.tags.at("mlflow.runName"), record.info.run_name);
  EXPECT_EQ(record.tags.at("mlflow.user"), "carol");
  EXPECT_EQ(record.info.user_id, "carol");
  EXPECT_EQ(record.tags.at("mlflow.source.type"), "LOCAL");
  EXPECT_NE(record.tags.at("mlflow.source.name").find("track_test"), std::string::npos);
}

TEST(TrackerTest, ChangedParamFailsOnTheCallingThread) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run run = tracker.StartRun();
  run.LogParam("lr", "0.1");
  run.LogParam("lr", "0.1");
  EXPECT_THROW_WITH(run.LogParam("lr", "0.2"), InvalidArgument, "Changing param values is not allowed", "'0.2'");
  EXPECT_THROW_WITH(run.LogMetric("bad//key", 1.0), InvalidArgument, "metric", "bad//key");
  EXPECT_THROW_WITH(run.SetTag("", "v"), InvalidArgument, "tag name");
}

TEST(TrackerTest, DestructorDuringUnwindingMarksFailed) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  std::string run_id;
  try {
    track::Run run = tracker.StartRun();
    run_id = run.run_id();
    run.LogMetric("loss", 0.5, 3);
    throw std::runtime_error("training diverged");
  } catch (const std::runtime_error&) {
  }
  const RunRecord record = tracker.store().GetRun(run_id);
  EXPECT_EQ(record.info.status, RunStatus::kFailed);
  EXPECT_TRUE(record.info.end_time_ms.has_value());
  EXPECT_EQ(record.latest_metrics.at("loss").step, 3);
}

TEST(TrackerTest, DestructorWithoutExceptionMarksFinished) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  std::string run_id;
  {
    track::Run run = tracker.StartRun();
    run_id = run.run_id();
  }
  EXPECT_EQ(tracker.store().GetRun(run_id).info.status, RunStatus::kFinished);
}

TEST(TrackerTest, NestedRunsPointAtTheirParent) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run parent = tracker.StartRun();
  track::Run child = tracker.StartNestedRun(parent);
  child.End(RunStatus::kKilled);
  const RunRecord record = tracker.store().GetRun(child.run_id());
  EXPECT_EQ(record.tags.at("mlflow.parentRunId"), parent.run_id());
  EXPECT_EQ(record.info.status, RunStatus::kKilled);
}

using Vars = std::map<std::string, std::string>;

// Every variable a launcher sets that DetectRankEnvironment reads, unset for one scope, then `vars` set.
class RankVars {
 public:
  explicit RankVars(const Vars& vars) {
    for (const char* name : {"LAKERUN_LAUNCHER", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                             "LAKERUN_RESTART_COUNT", "LAKERUN_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
                             "TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
                             "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID", "SLURM_STEPID",
                             "MLFLOW_RUN_ID"}) {
      auto it = vars.find(name);
      scoped_.push_back(std::make_unique<ScopedEnv>(name, it == vars.end() ? nullptr : it->second.c_str()));
    }
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> scoped_;
};

TEST(TrackerTest, NonZeroRankIsANoOpUnlessOverridden) {
  testing::TempDir dir;
  RankVars rank(Vars{{"RANK", "3"}, {"WORLD_SIZE", "4"}});
  Tracker tracker(dir.Join("mlruns"), Quiet());
  EXPECT_FALSE(tracker.enabled());
  track::Run run = tracker.StartRun();
  EXPECT_FALSE(run.active());
  run.LogMetric("loss", 1.0);
  run.LogParam("lr", "x");
  run.Flush();
  run.End();
  EXPECT_FALSE(LocalFileSystem().Exists(dir.Join("mlruns")));

  TrackerOptions every = Quiet();
  every.log_on_every_rank = true;
  Tracker all(dir.Join("mlruns"), every);
  EXPECT_TRUE(all.enabled());
}

// srun and mpirun do not set RANK: the tracker reads the rank where lakerun::dist reads it.
TEST(TrackerTest, OnlyRankZeroTracksUnderEveryLauncher) {
  testing::TempDir dir;
  const std::vector<std::map<std::string, std::string>> rank_one = {
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}},
      {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}},
      {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
      {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}},
      {{"LAKERUN_LAUNCHER", "1"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}}};
  for (const auto& vars : rank_one) {
    RankVars env(vars);
    EXPECT_FALSE(Tracker(dir.Join("mlruns"), Quiet()).enabled()) << vars.begin()->first;
    std::map<std::string, std::string> zero = vars;
    for (auto& [name, value] : zero) {
      if (value == "1" && name != "LAKERUN_LAUNCHER") value = "0";
    }
    RankVars env0(zero);
    EXPECT_TRUE(Tracker(dir.Join("mlruns"), Quiet()).enabled()) << vars.begin()->first;
  }
  {
    // A Slurm batch script (no srun step) is one process, and RANK alone names no job: both track.
    RankVars batch(Vars{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "batch"}});
    EXPECT_TRUE(Tracker(dir.Join("mlruns"), Quiet()).enabled());
    RankVars alone(Vars{{"RANK", "1"}});
    EXPECT_TRUE(Tracker(dir.Join("mlruns"), Quiet()).enabled());
  }
  RankVars bad(Vars{{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_THROW_WITH(Tracker(dir.Join("mlruns"), Quiet()), ConfigError, "Open MPI", "OMPI_COMM_WORLD_RANK='x'");
}

// The environment `lakerun launch` gives rank `rank` of job `job` in attempt `attempt`.
std::map<std::string, std::string> LaunchedRank(const std::string& job, int attempt, int rank = 0) {
  return {{"LAKERUN_LAUNCHER", "1"}, {"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"},
          {"LOCAL_RANK", std::to_string(rank)}, {"LOCAL_WORLD_SIZE", "2"},
          {"LAKERUN_RESTART_COUNT", std::to_string(attempt)}, {"TORCHELASTIC_RESTART_COUNT", std::to_string(attempt)},
          {"LAKERUN_RUN_ID", job}};
}

TEST(TrackerTest, ARestartedJobContinuesItsRun) {
  testing::TempDir dir;
  std::string run_id;
  {
    RankVars env(LaunchedRank("job-a", 0));
    Tracker tracker(dir.Join("mlruns"), Quiet());
    track::Run run = tracker.StartRun();
    run_id = run.run_id();
    run.LogMetric("loss", 2.0, 0);
    run.End(RunStatus::kKilled);  // what SIGTERM leaves; SIGKILL leaves RUNNING
  }
  for (int attempt = 1; attempt <= 2; ++attempt) {
    RankVars env(LaunchedRank("job-a", attempt));
    Tracker tracker(dir.Join("mlruns"), Quiet());
    track::Run run = tracker.StartRun();
    EXPECT_EQ(run.run_id(), run_id) << "attempt " << attempt;
    EXPECT_EQ(tracker.store().GetRun(run_id).info.status, RunStatus::kRunning);
    run.LogMetric("loss", 1.0 / attempt, attempt);
    // A second top-level run of the same attempt is a run of its own.
    track::Run other = tracker.StartRun();
    EXPECT_NE(other.run_id(), run_id);
    EXPECT_EQ(tracker.store().GetRun(other.run_id()).tags.count(kJobIdTag), 0u);
  }
  Tracker reader(dir.Join("mlruns"), Quiet());
  const RunRecord record = reader.store().GetRun(run_id);
  EXPECT_EQ(record.info.status, RunStatus::kFinished);
  EXPECT_EQ(record.tags.at(kJobIdTag), "job-a");
  EXPECT_EQ(record.tags.at(kRestartCountTag), "2");
  EXPECT_EQ(reader.store().GetMetricHistory(run_id, "loss").size(), 3u);
  EXPECT_EQ(reader.store().SearchRunsByTag(record.info.experiment_id, kJobIdTag, "job-a").size(), 1u);
}

TEST(TrackerTest, AJobRestartedBeforeItsRunStartedStartsOneAndOtherJobsKeepTheirs) {
  testing::TempDir dir;
  std::string job_a;
  {
    RankVars env(LaunchedRank("job-a", 0));
    Tracker tracker(dir.Join("mlruns"), Quiet());
    job_a = tracker.StartRun().run_id();
  }
  std::string job_b;
  for (int attempt = 1; attempt <= 2; ++attempt) {  // job b's attempt 0 died before it started a run
    RankVars env(LaunchedRank("job-b", attempt));
    Tracker tracker(dir.Join("mlruns"), Quiet());
    const std::string id = tracker.StartRun().run_id();
    EXPECT_NE(id, job_a);
    if (attempt == 1) job_b = id;
    EXPECT_EQ(id, job_b);
  }
  Tracker reader(dir.Join("mlruns"), Quiet());
  const RunRecord b = reader.store().GetRun(job_b);
  EXPECT_EQ(b.tags.at(kJobIdTag), "job-b");
  EXPECT_EQ(b.tags.at(kRestartCountTag), "2");
  EXPECT_EQ(reader.store().GetRun(job_a).tags.at(kRestartCountTag), "0");
  EXPECT_EQ(reader.store().SearchRuns({b.info.experiment_id}).size(), 2u);
}

TEST(TrackerTest, MlflowRunIdWinsOverTheJobsRunAndOtherRanksNeverTakeIt) {
  testing::TempDir dir;
  std::string job_run, chosen;
  {
    RankVars env(LaunchedRank("job-a", 0));
    Tracker tracker(dir.Join("mlruns"), Quiet());
    job_run = tracker.StartRun().run_id();
    chosen = tracker.StartRun().run_id();
  }
  {
    std::map<std::string, std::string> vars = LaunchedRank("job-a", 1);
    vars["MLFLOW_RUN_ID"] = chosen;
    RankVars env(vars);
    TrackerOptions options = Quiet();
    options.tracking_uri = dir.Join("mlruns");
    EXPECT_EQ(Tracker::FromEnvironment(options).StartRun().run_id(), chosen);
  }
  {
    RankVars env(LaunchedRank("job-a", 1, /*rank=*/1));
    TrackerOptions every = Quiet();
    every.log_on_every_rank = true;
    Tracker tracker(dir.Join("mlruns"), every);
    const std::string id = tracker.StartRun().run_id();
    EXPECT_NE(id, job_run);
    EXPECT_EQ(tracker.store().GetRun(id).tags.count(kJobIdTag), 0u);
  }
}

TEST(TrackerTest, FromEnvironmentReadsUriExperimentAndAttachesToRunId) {
  testing::TempDir dir;
  const std::string uri = "file:" + dir.Join("mlruns");
  std::string run_id;
  {
    ScopedEnv u("MLFLOW_TRACKING_URI", uri.c_str());
    ScopedEnv e("MLFLOW_EXPERIMENT_NAME", "from-env");
    ScopedEnv r("MLFLOW_RUN_ID", nullptr);
    TrackerOptions options;
    options.handle_signals = false;
    Tracker from_env = Tracker::FromEnvironment(options);
    track::Run run = from_env.StartRun();
    run_id = run.run_id();
    run.LogParam("lr", "0.1");
    run.LogMetric("loss", 2.0, 0);
    run.End(RunStatus::kFailed);
    auto experiment = from_env.store().GetExperimentByName("from-env");
    ASSERT_TRUE(experiment.has_value());
    EXPECT_EQ(run.experiment_id(), experiment->experiment_id);
  }
  {
    ScopedEnv u("MLFLOW_TRACKING_URI", uri.c_str());
    ScopedEnv r("MLFLOW_RUN_ID", run_id.c_str());
    TrackerOptions options;
    options.handle_signals = false;
    Tracker tracker = Tracker::FromEnvironment(options);
    track::Run run = tracker.StartRun();
    EXPECT_EQ(run.run_id(), run_id);
    EXPECT_THROW_WITH(run.LogParam("lr", "0.2"), InvalidArgument, "Changing param values");
    run.LogMetric("loss", 1.0, 1);
    run.End();
    const RunRecord record = tracker.store().GetRun(run_id);
    EXPECT_EQ(record.info.status, RunStatus::kFinished);
    EXPECT_EQ(record.latest_metrics.at("loss").value, 1.0);
    EXPECT_EQ(tracker.store().GetMetricHistory(run_id, "loss").size(), 2u);
  }
}

TEST(TrackerTest, StoreErrorsSurfaceAtFlushWithTheRunId) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run run = tracker.StartRun();
  run.LogArtifact(dir.Join("does-not-exist.bin"));
  EXPECT_THROW_WITH(run.Flush(), InvalidArgument, run.run_id(), "does-not-exist.bin");
  run.LogMetric("loss", 1.0);
  EXPECT_NO_THROW(run.Flush());  // the error was reported once; logging goes on
}

TEST(TrackerTest, DropPolicyCountsWhatDidNotFit) {
  testing::TempDir dir;
  TrackerOptions options = Quiet();
  options.queue_capacity = 4;
  options.on_full = QueueFullPolicy::kDrop;
  Tracker tracker(dir.Join("mlruns"), options);
  track::Run run = tracker.StartRun();
  for (int i = 0; i < 20000; ++i) run.LogMetric("m", i, i);
  run.Flush();
  const uint64_t stored = tracker.store().GetMetricHistory(run.run_id(), "m").size();
  EXPECT_EQ(stored + run.dropped(), 20000u);
  EXPECT_GT(stored, 0u);
}

TEST(TrackerTest, BlockPolicyLosesNothingWithATinyQueue) {
  testing::TempDir dir;
  TrackerOptions options = Quiet();
  options.queue_capacity = 4;
  options.on_full = QueueFullPolicy::kBlock;
  Tracker tracker(dir.Join("mlruns"), options);
  track::Run run = tracker.StartRun();
  for (int i = 0; i < 20000; ++i) run.LogMetric("m", i, i);
  run.End();
  EXPECT_EQ(run.dropped(), 0u);
  EXPECT_EQ(tracker.store().GetMetricHistory(run.run_id(), "m").size(), 20000u);
}

TEST(SystemTagsTest, ARecordedProcessIsAliveGoneOrUnknown) {
  const ProcessIdentity self = CurrentProcessIdentity();
  ASSERT_FALSE(self.host.empty());
  ASSERT_EQ(self.pid, ::getpid());
  ASSERT_EQ(std::count(self.start.begin(), self.start.end(), ':'), 2) << self.start;  // boot id, namespace, ticks
  EXPECT_EQ(CheckRecordedProcess(self.host, self.pid, self.start).state, ProcessState::kAlive);
  const size_t first = self.start.find(':');
  const size_t last = self.start.rfind(':');
  // The same pid, started at another time: the pid was given to another process since.
  const ProcessCheck reused = CheckRecordedProcess(self.host, self.pid, self.start.substr(0, last + 1) + "1");
  EXPECT_EQ(reused.state, ProcessState::kGone);
  EXPECT_EQ(reused.detail, "the pid now belongs to another process");
  const ProcessCheck rebooted =
      CheckRecordedProcess(self.host, self.pid, "00000000-0000-0000-0000-000000000000" + self.start.substr(first));
  EXPECT_EQ(rebooted.state, ProcessState::kGone);
  EXPECT_EQ(rebooted.detail, "the host restarted since");
  // Another host, another container's pid namespace, nothing to tell a reused pid by: unknown.
  EXPECT_EQ(CheckRecordedProcess("elsewhere.example", self.pid, self.start).state, ProcessState::kUnknown);
  const std::string other_namespace = self.start.substr(0, first) + ":1" + self.start.substr(last);
  EXPECT_EQ(CheckRecordedProcess(self.host, self.pid, other_namespace).state, ProcessState::kUnknown);
  EXPECT_EQ(CheckRecordedProcess(self.host, self.pid, "").state, ProcessState::kUnknown);
  // A process that ended: first a zombie (not reaped yet), then reaped.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  const std::string some_start = self.start.substr(0, last + 1) + "1";
  auto zombie = [&] {
    const ProcessCheck check = CheckRecordedProcess(self.host, child, some_start);
    return check.state == ProcessState::kGone && check.detail.empty();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!zombie() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(zombie());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(CheckRecordedProcess(self.host, child, some_start).state, ProcessState::kGone);
}

TEST(TrackerTest, RunsRecordTheirProcessAndAreStaleOnceItIsGone) {
  testing::TempDir dir;
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run run = tracker.StartRun();
  RunRecord record = tracker.store().GetRun(run.run_id());
  const ProcessIdentity self = CurrentProcessIdentity();
  EXPECT_EQ(record.tags.at(kHostTag), self.host);
  EXPECT_EQ(record.tags.at(kPidTag), std::to_string(::getpid()));
  EXPECT_EQ(record.tags.at(kProcessStartTag), self.start);
  EXPECT_EQ(StaleReason(record), std::nullopt);
  EXPECT_EQ(StatusText(record), "RUNNING");
  // The same record as another process, with this pid, would have left it.
  record.tags[kProcessStartTag] = self.start.substr(0, self.start.rfind(':') + 1) + "1";
  const std::string pid = std::to_string(::getpid());
  EXPECT_EQ(StatusText(record),
            "RUNNING (stale: process " + pid + " on this host is gone (the pid now belongs to another process))");
  record.info.status = RunStatus::kKilled;  // only a RUNNING run is stale
  EXPECT_EQ(StatusText(record), "KILLED");
  record.info.status = RunStatus::kRunning;
  record.tags[kHostTag] = "elsewhere.example";  // a run on another host stays RUNNING
  EXPECT_EQ(StatusText(record), "RUNNING");
  run.End();
  // Without record_process, no such tags.
  TrackerOptions options = Quiet();
  options.record_process = false;
  Tracker quiet(dir.Join("mlruns"), options);
  const RunRecord plain = quiet.store().GetRun(quiet.StartRun().run_id());
  EXPECT_EQ(plain.tags.count(kPidTag), 0u);
}

// A pid that no process has now: a child's, once reaped.
pid_t PidOfAnEndedProcess() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(OpenRunsTest, ARunIsAnnouncedWhileOpenAndWithdrawnWhenItEnds) {
  testing::TempDir dir;
  OpenRunsDir open_runs;
  ScopedEnv env(kRunInfoDirVariable, open_runs.path().c_str());
  Tracker tracker(dir.Join("mlruns"), Quiet());
  track::Run run = tracker.StartRun();
  track::Run nested = tracker.StartNestedRun(run);
  std::vector<OpenRunFile> open = ListOpenRuns(open_runs.path());
  ASSERT_EQ(open.size(), 2u);
  const OpenRunFile& announced = open[0].run_id == run.run_id() ? open[0] : open[1];
  EXPECT_EQ(announced.run_id, run.run_id());
  EXPECT_EQ(announced.tracking_uri, "file://" + dir.Join("mlruns"));  // absolute: the launcher has its own directory
  EXPECT_EQ(announced.rank, 0);
  EXPECT_EQ(announced.pid, ::getpid());
  EXPECT_EQ(announced.process_start, CurrentProcessIdentity().start);
  // Its process is alive: the launcher's side leaves the runs alone.
  EXPECT_TRUE(open_runs.EndRunsLeftOpen([](int) { return RunStatus::kKilled; }).empty());
  EXPECT_EQ(tracker.store().GetRun(run.run_id()).info.status, RunStatus::kRunning);
  nested.End();
  run.End(RunStatus::kFailed);
  EXPECT_TRUE(ListOpenRuns(open_runs.path()).empty());
}

TEST(OpenRunsTest, TheLauncherEndsTheRunsOfADeadProcessAtTheirLastPoint) {
  testing::TempDir dir;
  const std::string root = dir.Join("mlruns");
  auto store = OpenStore(root);
  const std::string experiment = store->CreateExperiment("exp");
  CreateRunRequest request;
  request.experiment_id = experiment;
  request.start_time_ms = 100;
  const RunInfo left = store->CreateRun(request);
  const RunInfo ended = store->CreateRun(request);
  const RunInfo metricless = store->CreateRun(request);
  // A restarted attempt logged step 2 after step 5: the last point is not the latest by step.
  store->LogBatch(left.run_id, {{"loss", 0.5, 300, 5}, {"loss", 0.7, 400, 2}}, {}, {});
  store->UpdateRun(ended.run_id, RunStatus::kFinished, 250);
  // What a SIGKILLed rank 0 leaves behind: its announcements, its process gone.
  OpenRunsDir open_runs;
  const ProcessIdentity self = CurrentProcessIdentity();
  const pid_t dead = PidOfAnEndedProcess();
  for (const RunInfo* run : {&left, &ended, &metricless}) {
    LocalFileSystem().WriteAtomically(open_runs.path() + "/" + run->run_id + "." + std::to_string(dead) + ".run",
                                      "run_id=" + run->run_id + "\ntracking_uri=file://" + root + "\nrank=0\nhost=" +
                                          self.host + "\npid=" + std::to_string(dead) + "\nprocess_start=" +
                                          self.start.substr(0, self.start.rfind(':') + 1) + "1\n");
  }
  LocalFileSystem().WriteAtomically(open_runs.path() + "/garbage.run", "not an announcement\n");
  std::vector<int> asked;
  const auto lines = open_runs.EndRunsLeftOpen([&](int rank) {
    asked.push_back(rank);
    return RunStatus::kKilled;
  });
  ASSERT_EQ(lines.size(), 2u);  // the run that had ended is left as it was
  EXPECT_THAT(lines[0], ::testing::HasSubstr("rank 0 (pid " + std::to_string(dead) + ") ended without ending its run"));
  EXPECT_THAT(lines[0], ::testing::HasSubstr("; marked it KILLED"));
  const RunRecord record = store->GetRun(left.run_id);
  EXPECT_EQ(record.info.status, RunStatus::kKilled);
  EXPECT_EQ(record.info.end_time_ms, 400);
  EXPECT_EQ(store->GetRun(ended.run_id).info.status, RunStatus::kFinished);
  EXPECT_EQ(store->GetRun(ended.run_id).info.end_time_ms, 250);
  EXPECT_EQ(store->GetRun(metricless.run_id).info.status, RunStatus::kKilled);
  EXPECT_GE(*store->GetRun(metricless.run_id).info.end_time_ms, 100);  // now
  EXPECT_EQ(asked, std::vector<int>(3, 0));
  EXPECT_EQ(LocalFileSystem().List(open_runs.path()).size(), 1u);  // only the garbage is left
}

TEST(OpenRunsTest, AProcessEndedBySignalOrExitCodeGivesItsRunsAStatus) {
  EXPECT_EQ(StatusAfterProcessEnd(0, SIGKILL), RunStatus::kKilled);
  EXPECT_EQ(StatusAfterProcessEnd(0, SIGTERM), RunStatus::kKilled);
  EXPECT_EQ(StatusAfterProcessEnd(0, SIGINT), RunStatus::kKilled);
  EXPECT_EQ(StatusAfterProcessEnd(0, SIGSEGV), RunStatus::kFailed);
  EXPECT_EQ(StatusAfterProcessEnd(0, SIGABRT), RunStatus::kFailed);
  EXPECT_EQ(StatusAfterProcessEnd(3, 0), RunStatus::kFailed);
  EXPECT_EQ(StatusAfterProcessEnd(0, 0), RunStatus::kFinished);
}

TEST(SystemTagsTest, ReadsGitHeadWithoutGit) {
  testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  const std::string commit = "3f786850e387550fdab836ed7e6dc881de23001b";
  fs.CreateDirs(dir.Join("repo/.git/refs/heads"));
  fs.CreateDirs(dir.Join("repo/src/deep"));
  fs.WriteAtomically(dir.Join("repo/.git/HEAD"), "ref: refs/heads/main\n");
  fs.WriteAtomically(dir.Join("repo/.git/refs/heads/main"), commit + "\n");
  EXPECT_EQ(GitCommitOf(dir.Join("repo/src/deep")), commit);
  // Packed refs, and a detached HEAD.
  fs.Remove(dir.Join("repo/.git/refs/heads/main"));
  fs.WriteAtomically(dir.Join("repo/.git/packed-refs"), "# pack-refs\n" + commit + " refs/heads/main\n");
  EXPECT_EQ(GitCommitOf(dir.Join("repo")), commit);
  fs.WriteAtomically(dir.Join("repo/.git/HEAD"), "0123456789012345678901234567890123456789\n");
  EXPECT_EQ(GitCommitOf(dir.Join("repo")), "0123456789012345678901234567890123456789");
  EXPECT_EQ(GitCommitOf(dir.path()), std::nullopt);
}

}  // namespace
}  // namespace lakerun::track
