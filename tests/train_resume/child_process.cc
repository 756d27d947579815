#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "lakerun/base/error.h"

extern char** environ;

namespace lakerun::train_resume {

using Clock = std::chrono::steady_clock;

std::string Exit::Describe() const {
  if (!finished) return "did not finish in time";
  if (signal != 0) return StrCat("killed by signal ", signal);
  return StrCat("exit code ", exit_code);
}

Child::Child(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const int rc = posix_spawn(&pid_, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  LAKERUN_CHECK_AS(IoError, rc == 0, "cannot start ", argv.at(0), ": ", std::strerror(rc));
}

Child::~Child() {
  if (!Ended()) {
    ::killpg(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
}

bool Child::Ended() {
  if (reaped_) return true;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return reaped_;
}

void Child::Signal(int sig) {
  if (!Ended()) ::kill(pid_, sig);
}

Exit Child::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Exit e;
  while (!Ended()) {
    if (Clock::now() > deadline) {
      ::killpg(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
      return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  e.finished = true;
  if (WIFEXITED(status_)) e.exit_code = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) e.signal = WTERMSIG(status_);
  return e;
}

bool Alive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream s;
  s << in.rdbuf();
  const std::string stat = s.str();
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

std::vector<pid_t> WaitGone(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<pid_t> alive;
  while (true) {
    alive.clear();
    for (pid_t p : pids) {
      if (Alive(p)) alive.push_back(p);
    }
    if (alive.empty() || Clock::now() > deadline) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace lakerun::train_resume
