// Processes the resume tests start: each in its own process group, output to files, every wait bounded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace lakerun::train_resume {

/// How a process ended.
struct Exit {
  bool finished = false;  ///< false: still running when the wait gave up (it was then killed)
  int exit_code = -1;     ///< valid when signal == 0
  int signal = 0;
  /// "exit code 1", "signal 9", "did not finish within 120 s".
  std::string Describe() const;
};

/// A started process, the leader of its own process group, stdout/stderr appended to `log_path`. The destructor
/// SIGKILLs its group and reaps it if it is still running.
class Child {
 public:
  /// Throws IoError naming the program when it cannot be started.
  Child(const std::vector<std::string>& argv, const std::string& log_path);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  /// Waits at most `timeout` for the process to end; on timeout kills its group and reports finished = false.
  Exit Wait(std::chrono::milliseconds timeout);
  /// Whether it has ended (reaps it when so).
  bool Ended();
  /// Sends `sig` to the process only (not its group).
  void Signal(int sig);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

/// True while `pid` exists and is not a zombie.
bool Alive(pid_t pid);
/// Waits at most `timeout` until none of `pids` is alive; returns those still alive.
std::vector<pid_t> WaitGone(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout);

}  // namespace lakerun::train_resume
