// `lakerun launch` with ranks that track (track_crash_child kill9): a run that rank 0 left RUNNING because it died of
// SIGKILL ends KILLED, at the time of its last logged point; a run that a restarted attempt continues ends FINISHED
// when the job succeeds. The launches are real processes, each bounded by RunProgram's timeout.
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/track/report.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::track {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::chrono::seconds kLaunchTimeout{90};

// The ids rank 0 printed ("[rank0] run <id>"), one per attempt that started its run.
std::vector<std::string> RunIds(const std::string& output) {
  std::vector<std::string> ids;
  const std::string marker = "[rank0] run ";
  for (size_t at = output.find(marker); at != std::string::npos; at = output.find(marker, at + 1)) {
    ids.push_back(output.substr(at + marker.size(), 32));
  }
  return ids;
}

int64_t LastPointTime(Store& store, const std::string& run_id) {
  int64_t last = 0;
  for (const Metric& point : store.GetMetricHistory(run_id, "loss")) last = std::max(last, point.timestamp_ms);
  return last;
}

class LaunchTrackingTest : public ::testing::Test {
 protected:
  testing::ProgramRun Launch(const std::vector<std::string>& flags, const std::string& kill_attempts = "") {
    std::vector<std::string> argv = {LAKERUN_CLI, "launch"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", TRACK_CRASH_CHILD, "kill9", root_});
    testing::ChildOptions options;
    options.set_env["TMPDIR"] = tmp_;  // where the command makes its directory of announcements
    if (!kill_attempts.empty()) options.set_env["LAKERUN_TEST_KILL_ATTEMPTS"] = kill_attempts;
    options.unset_env = {"MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME"};
    return testing::RunProgram(argv, dir_.Join("launch.log"), kLaunchTimeout, options);
  }

  void SetUp() override {
    root_ = dir_.Join("mlruns");
    tmp_ = dir_.Join("tmp");
    LocalFileSystem().CreateDirs(tmp_);
  }
  // The command removes its directory of announcements when it returns.
  void TearDown() override { EXPECT_TRUE(LocalFileSystem().List(tmp_).empty()); }

  testing::TempDir dir_;
  std::string root_;
  std::string tmp_;
};

TEST_F(LaunchTrackingTest, ARunLeftRunningBySigkillEndsKilledAtItsLastPoint) {
  const testing::ProgramRun run = Launch({"-n", "2"});
  EXPECT_EQ(run.exit_code, 128 + SIGKILL) << run.output;
  const std::vector<std::string> ids = RunIds(run.output);
  ASSERT_EQ(ids.size(), 1u) << run.output;
  EXPECT_THAT(run.output, HasSubstr("[lakerun] tracking: rank 0 (pid "));
  EXPECT_THAT(run.output, HasSubstr(" ended without ending its run " + ids[0] + " in file://" + root_ +
                                    "; marked it KILLED\n"));
  auto store = OpenStore(root_);
  const RunRecord record = store->GetRun(ids[0]);
  const std::string meta = LocalFileSystem().ReadFile(root_ + "/" + record.info.experiment_id + "/" + ids[0] +
                                                      "/meta.yaml");
  EXPECT_THAT(meta, HasSubstr("\nstatus: 5\n"));  // KILLED
  const int64_t last_point = LastPointTime(*store, ids[0]);
  EXPECT_THAT(meta, HasSubstr("\nend_time: " + std::to_string(last_point) + "\n"));
  EXPECT_EQ(store->GetMetricHistory(ids[0], "loss").size(), 100u);
  EXPECT_EQ(StatusText(record), "KILLED");  // ended, so no longer stale
}

TEST_F(LaunchTrackingTest, ARunTheNextAttemptContinuesEndsFinishedWhenTheJobSucceeds) {
  const testing::ProgramRun run = Launch({"-n", "1", "--max-restarts", "1"}, /*kill_attempts=*/"0");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const std::vector<std::string> ids = RunIds(run.output);
  ASSERT_EQ(ids.size(), 2u) << run.output;
  EXPECT_EQ(ids[0], ids[1]);  // the second attempt continued the job's run
  // Attempt 0's SIGKILL left it RUNNING and the launcher marked it KILLED before restarting; attempt 1 set it
  // RUNNING again and ended it.
  const std::string killed = "; marked it KILLED\n";
  const size_t marked = run.output.find(killed);
  ASSERT_NE(marked, std::string::npos) << run.output;
  EXPECT_LT(marked, run.output.find("restarting all 1 rank"));
  EXPECT_EQ(run.output.find("marked it", marked + killed.size()), std::string::npos) << run.output;
  auto store = OpenStore(root_);
  const RunRecord record = store->GetRun(ids[0]);
  EXPECT_EQ(record.info.status, RunStatus::kFinished);
  EXPECT_EQ(record.tags.at(kRestartCountTag), "1");
  EXPECT_EQ(store->GetMetricHistory(ids[0], "loss").size(), 200u);
  const std::string meta = LocalFileSystem().ReadFile(root_ + "/" + record.info.experiment_id + "/" + ids[0] +
                                                      "/meta.yaml");
  EXPECT_THAT(meta, HasSubstr("\nstatus: 3\n"));
  EXPECT_THAT(meta, Not(HasSubstr("\nend_time: null\n")));
}

}  // namespace
}  // namespace lakerun::track
