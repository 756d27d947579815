#include "lakerun_testing/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <memory>
#include <fstream>
#include <sstream>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun_testing/ports.h"

extern char** environ;

namespace lakerun::testing {

using Clock = std::chrono::steady_clock;

int Exit::status() const {
  if (!finished) return -1;
  return signal != 0 ? 128 + signal : exit_code;
}

std::string Exit::Describe() const {
  if (!finished) return "did not finish in time";
  if (signal != 0) return StrCat("killed by signal ", signal);
  return StrCat("exit code ", exit_code);
}

Child::Child(const std::vector<std::string>& argv, const std::string& log_path, ChildOptions options)
    : log_path_(log_path) {
  LAKERUN_CHECK_AS(InvalidArgument, !argv.empty(), "Child: empty argv");
  // Everything the child needs is built here: between fork and exec only async-signal-safe calls are allowed.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : options.set_env) env[k] = v;
  for (const auto& k : options.unset_env) env.erase(k);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& s : env_strings) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options.append_log ? O_APPEND : O_TRUNC);

  pid_ = ::fork();
  LAKERUN_CHECK_AS(IoError, pid_ >= 0, "cannot fork to start ", argv[0], ": ", std::strerror(errno));
  if (pid_ == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log_path.c_str(), flags, 0644);
    const int err = options.discard_stderr ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : fd;
    if (fd < 0 || err < 0 || ::dup2(fd, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also here, so the group exists before the parent signals it
}

Child::~Child() {
  if (!Ended()) {
    ::killpg(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
  ::killpg(pid_, SIGKILL);  // anything the child left in its group
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
  ::killpg(pid_, SIGKILL);
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

ProgramRun RunProgram(const std::vector<std::string>& argv, const std::string& log_path,
                      std::chrono::milliseconds timeout, ChildOptions options) {
  Child child(argv, log_path, std::move(options));
  const Exit exit = child.Wait(timeout);
  if (!exit.finished) {
    ADD_FAILURE() << argv[0] << " ran past " << timeout.count() << " ms and was killed (log: " << log_path << ")";
  }
  ProgramRun run;
  run.exit_code = exit.status();
  std::ifstream in(log_path);
  std::stringstream s;
  s << in.rdbuf();
  run.output = s.str();
  return run;
}

ProgramRun RunRanksDirectly(const std::vector<std::string>& argv, int world, const std::string& log_prefix,
                            std::chrono::milliseconds timeout, ChildOptions options) {
  const std::string port = std::to_string(FreeLoopbackPort());
  std::vector<std::unique_ptr<Child>> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ChildOptions o = options;
    o.set_env.insert({{"RANK", std::to_string(rank)}, {"LOCAL_RANK", std::to_string(rank)},
                      {"WORLD_SIZE", std::to_string(world)}, {"LOCAL_WORLD_SIZE", std::to_string(world)},
                      {"GROUP_RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}});
    ranks.push_back(std::make_unique<Child>(argv, log_prefix + std::to_string(rank) + ".out", std::move(o)));
  }
  const auto deadline = Clock::now() + timeout;
  ProgramRun run{0, ""};
  for (auto& child : ranks) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const Exit exit = child->Wait(std::max(left, std::chrono::milliseconds(0)));
    if (!exit.finished) ADD_FAILURE() << argv[0] << " (pid " << child->pid() << ") ran past " << timeout.count() << " ms";
    if (run.exit_code == 0) run.exit_code = exit.status();
    std::ifstream in(child->log_path());
    std::stringstream s;
    s << in.rdbuf();
    run.output += s.str();
  }
  return run;
}

}  // namespace lakerun::testing
