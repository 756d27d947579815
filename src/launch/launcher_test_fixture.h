// The fixture of the launcher's end-to-end tests (launcher_test.cc, fork_start_test.cc): starts `lakerun launch`
// (launch_test_launcher) or runs Launch() in this process with the test rank (testdata/test_rank.cc), with every
// wait bounded and every process a test started killed in TearDown, also on failure.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lakerun/launch/launcher.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

extern char** environ;

namespace lakerun::launch::testing {

using Clock = std::chrono::steady_clock;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// True while `pid` exists and is not a zombie.
inline bool Alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

struct Finished {
  int exit_code = -1;  // valid when signal == 0
  int signal = 0;
  std::string out, err;
};

class LauncherTest : public ::testing::Test {
 protected:
  // Starts the launcher in its own process group with `args`; stdout/stderr go to files.
  pid_t Start(const std::vector<std::string>& args, const std::string& tag = "run") {
    std::vector<std::string> argv = {LAUNCH_TEST_LAUNCHER};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = dir_.Join(tag + ".out"), err = dir_.Join(tag + ".err");
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    EXPECT_EQ(rc, 0) << "cannot start " << cargv[0];
    started_.emplace_back(pid, tag);
    return pid;
  }

  // Waits (bounded) for the launcher to end; on timeout kills its group and fails the test.
  Finished Wait(pid_t pid, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    Finished f;
    std::string tag;
    for (auto& [p, t] : started_) {
      if (p == pid) tag = t;
    }
    const auto deadline = Clock::now() + timeout;
    int status = 0;
    while (true) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (Clock::now() > deadline) {
        ::killpg(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        ADD_FAILURE() << "launcher did not finish within " << timeout.count() << " s";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& [p, t] : started_) {
      if (p == pid) p = -1;
    }
    if (WIFEXITED(status)) f.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) f.signal = WTERMSIG(status);
    f.out = ReadFile(dir_.Join(tag + ".out"));
    f.err = ReadFile(dir_.Join(tag + ".err"));
    return f;
  }

  Finished RunLauncher(const std::vector<std::string>& args, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    return Wait(Start(args), timeout);
  }

  // Options for Launch() in this process: `rank_args` for the test rank, a 60 s safety timeout.
  lakerun::launch::LaunchOptions Options(int n, std::vector<std::string> rank_args) {
    lakerun::launch::LaunchOptions options;
    options.processes = n;
    options.command = {rank_};
    options.command.insert(options.command.end(), rank_args.begin(), rank_args.end());
    options.timeout = std::chrono::seconds(60);
    return options;
  }

  // Runs Launch() in this process (the launcher's code without a process start), output captured in files.
  Finished RunInProcess(lakerun::launch::LaunchOptions options) {
    const std::string tag = "inproc" + std::to_string(inproc_runs_++);
    const std::string out = dir_.Join(tag + ".out"), err = dir_.Join(tag + ".err");
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    options.stdout_fd = out_fd;
    options.stderr_fd = err_fd;
    Finished f;
    f.exit_code = lakerun::launch::Launch(options).exit_code;
    ::close(out_fd);
    ::close(err_fd);
    f.out = ReadFile(out);
    f.err = ReadFile(err);
    return f;
  }

  // Pids the ranks wrote under pid_dir() (ranks and their grandchildren).
  std::vector<pid_t> RankPids() {
    std::vector<pid_t> pids;
    for (int rank = 0; rank < 8; ++rank) {
      for (int attempt = 0; attempt < 4; ++attempt) {
        std::ifstream in(PidFile(rank, attempt));
        pid_t pid;
        while (in >> pid) pids.push_back(pid);
      }
    }
    return pids;
  }
  std::string PidFile(int rank, int attempt) {
    return pid_dir() + "/rank" + std::to_string(rank) + ".attempt" + std::to_string(attempt) + ".pid";
  }
  const std::string& pid_dir() {
    if (pid_dir_.empty()) {
      pid_dir_ = dir_.Join("pids");
      ::mkdir(pid_dir_.c_str(), 0755);
    }
    return pid_dir_;
  }

  // Waits until every rank pid is gone (bounded); returns those still alive.
  std::vector<pid_t> Survivors(std::chrono::seconds timeout = std::chrono::seconds(10)) {
    const auto deadline = Clock::now() + timeout;
    std::vector<pid_t> alive;
    do {
      alive.clear();
      for (pid_t pid : RankPids()) {
        if (Alive(pid)) alive.push_back(pid);
      }
      if (alive.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (Clock::now() < deadline);
    return alive;
  }

  // Waits (bounded) until the given pid files exist.
  bool WaitForPidFiles(int ranks, int attempt = 0, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      bool all = true;
      for (int r = 0; r < ranks; ++r) all = all && Exists(PidFile(r, attempt));
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Starts `lakerun launch -n 3 LAUNCH_FLAGS -- test_rank RANK_FLAGS` with ranks that each fork a grandchild and
  // sleep, waits for all six pids, sends the launcher `sig` (SIGTERM: forwarded, exit 128+15; SIGKILL: the launcher
  // dies at once) and expects none of them to survive it.
  void SignalTheLauncherOfThreeRanks(int sig, const std::vector<std::string>& launch_flags,
                                     const std::vector<std::string>& rank_flags) {
    std::vector<std::string> args = {"-n", "3"};
    args.insert(args.end(), launch_flags.begin(), launch_flags.end());
    args.insert(args.end(), {"--", rank_});
    args.insert(args.end(), rank_flags.begin(), rank_flags.end());
    args.insert(args.end(), {"--pidfile", pid_dir(), "--grandchild", "--sleep", "60"});
    const pid_t launcher = Start(args);
    ASSERT_TRUE(WaitForPidFiles(3));
    ASSERT_EQ(RankPids().size(), 6u);
    ::kill(launcher, sig);
    Finished f = Wait(launcher, std::chrono::seconds(30));
    if (sig == SIGKILL) {
      EXPECT_EQ(f.signal, SIGKILL);
    } else {
      EXPECT_EQ(f.exit_code, 128 + sig) << f.err;
      EXPECT_THAT(f.err, ::testing::HasSubstr("received SIGTERM; forwarding it to 3 ranks"));
    }
    EXPECT_THAT(Survivors(), ::testing::IsEmpty());
  }

  void TearDown() override {
    for (auto& [pid, tag] : started_) {
      if (pid > 0) {
        ::killpg(pid, SIGKILL);
        int status;
        ::waitpid(pid, &status, 0);
      }
    }
    if (!pid_dir_.empty()) {
      for (pid_t pid : RankPids()) {
        if (Alive(pid)) ::kill(pid, SIGKILL);
      }
    }
  }

  std::string rank_ = LAUNCH_TEST_RANK;
  lakerun::testing::TempDir dir_;
  std::string pid_dir_;
  std::vector<std::pair<pid_t, std::string>> started_;
  int inproc_runs_ = 0;
};

// "[rankN] KEY=VALUE" lines of a --print-env run, per rank.
inline std::map<int, std::map<std::string, std::string>> ParseEnv(const std::string& out) {
  std::map<int, std::map<std::string, std::string>> env;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    int rank;
    char key_value[4096];
    if (std::sscanf(line.c_str(), "[rank%d] %4095[^\n]", &rank, key_value) != 2) continue;
    std::string kv = key_value;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[rank][kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace lakerun::launch::testing
