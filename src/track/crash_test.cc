// Crash safety: child processes (track_crash_child) that throw, die of an uncaught exception, or get SIGTERM while
// logging leave every point logged before that moment in the file store, with status FAILED or KILLED; one killed
// with SIGKILL leaves its runs RUNNING, which `lakerun runs` shows as stale.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/runs_cli.h"
#include "lakerun/track/store.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::track {
namespace {

// track_crash_child is built beside this test binary.
std::string ChildProgram() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    const std::string beside = DirName(std::string(buf, static_cast<size_t>(n))) + "/track_crash_child";
    if (LocalFileSystem().Exists(beside)) return beside;
  }
  return lakerun::testing::BuiltProgram("track_crash_child");
}

// A child process with its stdout on a pipe; killed (SIGKILL) and reaped on destruction if still running.
class Child {
 public:
  Child(const std::string& mode, const std::string& root) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    const std::string program = ChildProgram();
    pid_ = ::fork();
    if (pid_ == 0) {
      // A shell may have started us with SIGINT ignored (background job); the child gets default dispositions.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl(program.c_str(), program.c_str(), mode.c_str(), root.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = ::fdopen(fds[0], "r");
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (out_) std::fclose(out_);
  }

  // Next stdout line, or "" at EOF. The child is killed by the destructor if a test gives up on it.
  std::string ReadLine() {
    char buf[256];
    if (std::fgets(buf, sizeof(buf), out_) == nullptr) return "";
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
  }

  void Signal(int sig) { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }

  // Waits up to `timeout` for the child to exit; returns its wait status, or -1 on timeout.
  int Wait(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

std::string RunIdFrom(Child& child) {
  const std::string line = child.ReadLine();
  EXPECT_EQ(line.rfind("run ", 0), 0u) << line;
  return line.size() > 4 ? line.substr(4) : "";
}

// Steps 0..n-1, each once, in order: nothing lost, nothing torn.
void ExpectContiguousSteps(const std::vector<Metric>& history, size_t at_least) {
  ASSERT_GE(history.size(), at_least);
  for (size_t i = 0; i < history.size(); ++i) ASSERT_EQ(history[i].step, static_cast<int64_t>(i));
}

TEST(CrashTest, ExceptionLeavesEveryPointAndFailedStatus) {
  lakerun::testing::TempDir dir;
  Child child("throw", dir.Join("mlruns"));
  const std::string run_id = RunIdFrom(child);
  const int status = child.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3);
  auto store = OpenStore(dir.Join("mlruns"));
  const RunRecord run = store->GetRun(run_id);
  EXPECT_EQ(run.info.status, RunStatus::kFailed);
  EXPECT_TRUE(run.info.end_time_ms.has_value());
  const auto history = store->GetMetricHistory(run_id, "loss");
  EXPECT_EQ(history.size(), 1000u);
  ExpectContiguousSteps(history, 1000);
}

TEST(CrashTest, UncaughtExceptionLeavesEveryPointAndFailedStatus) {
  lakerun::testing::TempDir dir;
  Child child("uncaught", dir.Join("mlruns"));
  const std::string run_id = RunIdFrom(child);
  const int status = child.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  auto store = OpenStore(dir.Join("mlruns"));
  EXPECT_EQ(store->GetRun(run_id).info.status, RunStatus::kFailed);
  ExpectContiguousSteps(store->GetMetricHistory(run_id, "loss"), 1000);
}

// Logs from a nested run until `sig` arrives; both runs end KILLED with every reported point stored.
void ExpectSignalEndsRunsKilled(int sig) {
  lakerun::testing::TempDir dir;
  Child child("signal", dir.Join("mlruns"));
  const std::string parent_id = RunIdFrom(child);
  const std::string run_id = RunIdFrom(child);
  long reported = 0;
  while (reported < 20000) {
    const std::string line = child.ReadLine();
    ASSERT_FALSE(line.empty()) << "child ended early";
    reported = std::stol(line.substr(line.find(' ') + 1));
  }
  child.Signal(sig);
  const int status = child.Wait(std::chrono::seconds(60));
  ASSERT_NE(status, -1) << "child did not exit after signal " << sig;
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), sig);  // re-raised with the default action
  auto store = OpenStore(dir.Join("mlruns"));
  const RunRecord run = store->GetRun(run_id);
  EXPECT_EQ(run.info.status, RunStatus::kKilled);
  EXPECT_TRUE(run.info.end_time_ms.has_value());
  EXPECT_EQ(run.tags.at("mlflow.parentRunId"), parent_id);
  const RunRecord parent = store->GetRun(parent_id);
  EXPECT_EQ(parent.info.status, RunStatus::kKilled);
  EXPECT_GE(*parent.info.end_time_ms, *run.info.end_time_ms);  // the nested run ends first
  // Every point the child had logged when it reported `reported` is stored, without gaps.
  ExpectContiguousSteps(store->GetMetricHistory(run_id, "loss"), static_cast<size_t>(reported));
}

TEST(CrashTest, RunsOfAProcessKilledWithSigkillAreListedAsStale) {
  lakerun::testing::TempDir dir;
  const std::string root = dir.Join("mlruns");
  Child child("signal", root);
  const std::string parent_id = RunIdFrom(child);
  const std::string run_id = RunIdFrom(child);
  ASSERT_EQ(child.ReadLine(), "logged 500");
  const std::string pid = std::to_string(child.pid());
  std::ostringstream alive;
  EXPECT_EQ(RunsShowMain({run_id, "--tracking-uri", root}, alive), 0);
  EXPECT_THAT(alive.str(), ::testing::HasSubstr("  status:     RUNNING\n"));  // its process is alive: not stale
  child.Signal(SIGKILL);
  const int status = child.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  std::ostringstream list;
  EXPECT_EQ(RunsListMain({"--tracking-uri", root, "--columns", "id,status"}, list), 0);
  const std::string stale = "RUNNING (stale: process " + pid + " on this host is gone)";
  EXPECT_THAT(list.str(), ::testing::HasSubstr(parent_id.substr(0, 8) + "  " + stale + "\n"));
  EXPECT_THAT(list.str(), ::testing::HasSubstr(run_id.substr(0, 8) + "  " + stale + "\n"));
  std::ostringstream show;
  EXPECT_EQ(RunsShowMain({run_id, "--tracking-uri", root}, show), 0);
  EXPECT_THAT(show.str(), ::testing::HasSubstr("  status:     " + stale + "\n"));
  // Reading changes nothing: the store still says RUNNING.
  EXPECT_EQ(OpenStore(root)->GetRun(run_id).info.status, RunStatus::kRunning);
}

TEST(CrashTest, SigtermMidLoggingLeavesEveryPointAndKilledStatus) { ExpectSignalEndsRunsKilled(SIGTERM); }

TEST(CrashTest, SigintMidLoggingLeavesEveryPointAndKilledStatus) { ExpectSignalEndsRunsKilled(SIGINT); }

TEST(CrashTest, SighupMidLoggingLeavesEveryPointAndKilledStatus) { ExpectSignalEndsRunsKilled(SIGHUP); }

TEST(CrashTest, SigpipeMidLoggingLeavesEveryPointAndKilledStatus) { ExpectSignalEndsRunsKilled(SIGPIPE); }

}  // namespace
}  // namespace lakerun::track
