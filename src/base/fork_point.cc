// The template's side of fork start (lakerun/base/fork_point.h; protocol in fork_protocol.h).
#include "lakerun/base/fork_point.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "base/fork_protocol.h"

namespace lakerun {
namespace {

using fork_start::kForkFdEnv;
using fork_start::kForkLauncherPidEnv;

// Thread ids of this process other than the caller's, with their names.
std::vector<std::string> OtherThreads() {
  std::vector<std::string> threads;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  const std::string self = std::to_string(::gettid());
  while (dirent* entry = ::readdir(dir)) {
    const std::string tid = entry->d_name;
    if (tid == "." || tid == ".." || tid == self) continue;
    std::string name;
    if (FILE* f = std::fopen(("/proc/self/task/" + tid + "/comm").c_str(), "r")) {
      char buffer[64] = {};
      if (std::fgets(buffer, sizeof(buffer), f) != nullptr) name = buffer;
      std::fclose(f);
      while (!name.empty() && name.back() == '\n') name.pop_back();
    }
    threads.push_back(tid + " (" + name + ")");
  }
  ::closedir(dir);
  return threads;
}

// True when `ancestor` is this process's parent, grandparent, ... (a launcher that started PROGRAM through a wrapper
// such as `sh -c`). Walks /proc/<pid>/stat's parent field.
bool IsDescendantOf(pid_t ancestor) {
  pid_t pid = ::getppid();
  for (int depth = 0; depth < 64 && pid > 1; ++depth) {
    if (pid == ancestor) return true;
    std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (f == nullptr) return false;
    char buffer[512] = {};
    const size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
    std::fclose(f);
    const char* close = std::strrchr(buffer, ')');  // the command name may contain spaces and parentheses
    if (n == 0 || close == nullptr) return false;
    char state;
    int parent;
    if (std::sscanf(close + 1, " %c %d", &state, &parent) != 2) return false;
    pid = parent;
  }
  return false;
}

bool IsForkSocket(int fd) {
  int type = 0;
  socklen_t length = sizeof(type);
  return fd >= 0 && ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 && type == SOCK_SEQPACKET;
}

[[noreturn]] void FailTemplate(int socket, const std::string& text) {
  fork_start::SendMessage(socket, "X" + text);
  std::fprintf(stderr, "[lakerun] fork start: %s\n", text.c_str());
  std::fflush(stderr);
  _exit(125);
}

// In a freshly forked rank: wait until the template's exit has made the launcher (a child subreaper) our parent,
// then arm PR_SET_PDEATHSIG against it. Armed earlier, the flag would fire at that very re-parenting. If the
// launcher died meanwhile we were re-parented elsewhere and must not run on unsupervised.
void BecomeLauncherChild(pid_t launcher) {
  const timespec pause{0, 100 * 1000};  // 100 us
  for (int i = 0; i < 300000 && ::getppid() != launcher; ++i) {  // at most ~30 s (the template forks, then exits)
    ::nanosleep(&pause, nullptr);
  }
  if (::getppid() != launcher) _exit(126);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != launcher) _exit(126);
}

}  // namespace

void ForkPoint() {
  const char* fd_text = std::getenv(kForkFdEnv);
  if (fd_text == nullptr || *fd_text == '\0') return;
  const int socket = std::atoi(fd_text);
  const char* launcher_text = std::getenv(kForkLauncherPidEnv);
  const pid_t launcher = launcher_text != nullptr ? static_cast<pid_t>(std::atol(launcher_text)) : 0;
  ::fcntl(socket, F_SETFD, FD_CLOEXEC);  // nothing this process or a rank execs inherits it
  ::unsetenv(kForkFdEnv);  // neither the ranks nor their children are templates
  ::unsetenv(kForkLauncherPidEnv);
  if (launcher <= 0 || !IsForkSocket(socket) || !IsDescendantOf(launcher)) {
    // Not started by a live fork-start launcher (a stale variable): run as a plain process.
    return;
  }
  std::vector<std::string> threads = OtherThreads();
  if (!threads.empty()) {
    // Libraries that are fork-safe stop their threads in pthread_atfork handlers (OpenBLAS's pool, started when it
    // is loaded unless OPENBLAS_NUM_THREADS=1, restarts at its next call). A throw-away fork runs those handlers;
    // what still runs after it would be missing from every rank.
    const pid_t probe = ::fork();
    if (probe == 0) _exit(0);
    if (probe > 0) {
      int status;
      while (::waitpid(probe, &status, 0) < 0 && errno == EINTR) {
      }
    }
    threads = OtherThreads();
  }
  if (!threads.empty()) {
    std::string names;
    for (const auto& t : threads) names += (names.empty() ? "" : ", ") + t;
    FailTemplate(socket, std::to_string(threads.size() + 1) +
                             " threads are running at the fork point (lakerun::dist::Init() or "
                             "lakerun::ForkPoint()), and a fork copies only the calling thread; other "
                             "threads: " + names + ". Start no thread before that point, or use --start-method exec");
  }
  // Buffered output would otherwise be written once per rank.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);

  std::string message;
  std::vector<int> fds;
  while (true) {
    const int got = fork_start::ReceiveMessage(socket, &message, &fds);
    if (got == 0) _exit(0);  // the launcher went away
    if (got < 0) FailTemplate(socket, std::string("reading the launcher's request: ") + std::strerror(-got));
    if (message == "Z") _exit(0);  // every rank forked: leave them to the launcher
    fork_start::ForkRequest request;
    if (!fork_start::DecodeRequest(message, &request) || fds.size() != 2) {
      FailTemplate(socket, "malformed request from the launcher (" + std::to_string(message.size()) + " bytes, " +
                               std::to_string(fds.size()) + " descriptors)");
    }
    const pid_t pid = ::fork();
    if (pid < 0) FailTemplate(socket, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      BecomeLauncherChild(launcher);
      if (::setpgid(0, 0) != 0) _exit(126);
      if (::dup2(fds[0], 1) < 0 || ::dup2(fds[1], 2) < 0) _exit(126);
      ::close(fds[0]);
      ::close(fds[1]);
      for (const std::string& entry : request.set) {
        const size_t eq = entry.find('=');
        ::setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
      }
      for (const std::string& key : request.unset) ::unsetenv(key.c_str());
      fork_start::SendMessage(socket, fork_start::EncodeRankPid('R', request.rank, 0));
      ::close(socket);
      return;  // continue as this rank
    }
    ::close(fds[0]);
    ::close(fds[1]);
    if (fork_start::SendMessage(socket, fork_start::EncodeRankPid('F', request.rank, pid)) != 0) _exit(1);
  }
}

}  // namespace lakerun
