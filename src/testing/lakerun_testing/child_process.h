// Processes that tests start: each leads its own process group, writes stdout and stderr to a log file, and every
// wait on it is bounded. A Child that goes out of scope SIGKILLs its group, so a failing test leaves nothing behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace lakerun::testing {

struct ChildOptions {
  /// Variables set (or replaced) in the child's environment.
  std::map<std::string, std::string> set_env{};
  /// Variables removed from it (after set_env).
  std::vector<std::string> unset_env{};
  /// Working directory; empty: the test's.
  std::string cwd{};
  /// Append to the log instead of truncating it.
  bool append_log = false;
  /// Send stderr to /dev/null instead of the log (the log then holds stdout alone).
  bool discard_stderr = false;
};

/// How a process ended.
struct Exit {
  bool finished = false;  ///< false: still running when the wait gave up (it was then killed)
  int exit_code = -1;     ///< valid when signal == 0
  int signal = 0;
  /// The shell's convention: the exit code, 128 + the signal, or -1 when it did not finish.
  int status() const;
  /// "exit code 1", "killed by signal 9", "did not finish in time".
  std::string Describe() const;
};

class Child {
 public:
  /// Starts argv[0] (a path) with argv. Throws IoError naming the program when it cannot be started; a child that
  /// cannot open its log or enter `cwd` exits 126, one whose exec fails exits 127.
  Child(const std::vector<std::string>& argv, const std::string& log_path, ChildOptions options = {});
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  /// Waits at most `timeout` for the process to end; on timeout kills its group and reports finished = false.
  /// Either way, whatever else is left in its process group is killed.
  Exit Wait(std::chrono::milliseconds timeout);
  /// Whether it has ended (reaps it when so).
  bool Ended();
  /// Sends `sig` to the process only (not its group).
  void Signal(int sig);

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  bool reaped_ = false;
  int status_ = 0;
};

/// True while `pid` exists and is not a zombie.
bool Alive(pid_t pid);
/// Waits at most `timeout` until none of `pids` is alive; returns those still alive.
std::vector<pid_t> WaitGone(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout);

struct ProgramRun {
  int exit_code = -1;  ///< Exit::status()
  std::string output;  ///< stdout and stderr, interleaved as written
};

/// Runs argv to its end, at most `timeout` (past it the process group is killed and the test fails).
ProgramRun RunProgram(const std::vector<std::string>& argv, const std::string& log_path,
                      std::chrono::milliseconds timeout, ChildOptions options = {});

}  // namespace lakerun::testing

namespace lakerun::testing {

/// Runs argv as `world` ranks on this host with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, ...; rank 0
/// hosts the store on a free loopback port), as a launcher would. Logs go to log_prefix + "<rank>.out"; the
/// output is every rank's, in rank order; exit_code is the first rank's non-zero status, else 0.
ProgramRun RunRanksDirectly(const std::vector<std::string>& argv, int world, const std::string& log_prefix,
                            std::chrono::milliseconds timeout, ChildOptions options = {});

}  // namespace lakerun::testing
