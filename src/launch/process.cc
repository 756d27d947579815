#include "launch/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "lakerun/base/error.h"

extern char** environ;

namespace lakerun::launch::internal {
namespace {

// Signals whose handlers the launcher may install; the child resets them before exec.
constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
  }
#endif
  return -1;
}

std::string ResolveProgram(const std::string& program) {
  LAKERUN_CHECK_AS(ConfigError, !program.empty(), "launch: no program given (expected `-- PROGRAM [ARGS...]`)");
  if (program.find('/') != std::string::npos) {
    LAKERUN_CHECK_AS(ConfigError, IsExecutableFile(program), "launch: program '", program,
                     "' is not an executable file");
    return program;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  LAKERUN_THROW(ConfigError, "launch: program '", program, "' not found in PATH (", path, ")");
}

Child SpawnInOwnGroup(const SpawnRequest& request) {
  // Everything the child touches is prepared here: after vfork only system calls run.
  std::vector<char*> argv;
  for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* path = request.path.c_str();
  const int out_fd = request.stdout_fd;
  const int err_fd = request.stderr_fd;
  const int pass_fd = request.pass_fd;
  const int register_fd = request.register_fd;
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) LAKERUN_THROW(IoError, "launch: cannot open /dev/null: ", std::strerror(errno));
  const pid_t parent = ::getpid();

  // Block every signal across vfork so no launcher handler runs in the child; the child restores the old mask.
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  volatile int child_errno = 0;
  const char* volatile child_step = "";
  pid_t pid = vfork();
  if (pid == 0) {
    if (::setpgid(0, 0) != 0) {
      child_errno = errno;
      child_step = "setpgid";
      _exit(127);
    }
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      child_errno = errno;
      child_step = "prctl(PR_SET_PDEATHSIG)";
      _exit(127);
    }
    // The launcher may have died before PR_SET_PDEATHSIG took effect: then nobody would kill us later.
    if (::getppid() != parent) _exit(127);
    if (register_fd >= 0) {
      // One write of 4 bytes to a pipe is atomic, so ranks started at once from several threads do not interleave.
      const int32_t group = static_cast<int32_t>(::getpid());
      if (::write(register_fd, &group, sizeof(group)) != static_cast<ssize_t>(sizeof(group))) {
        child_errno = errno != 0 ? errno : EIO;
        child_step = "registering with the orphan guard";
        _exit(127);
      }
    }
    if (::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
      child_errno = errno;
      child_step = "dup2";
      _exit(127);
    }
    for (int sig : kHandledSignals) {
      struct sigaction current;
      if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) {
        ::signal(sig, SIG_DFL);
      }
    }
    ::signal(SIGPIPE, SIG_DFL);
#if defined(SYS_close_range)
    // Like Popen(close_fds=True): descriptors opened without O_CLOEXEC (by a function-API program or its
    // libraries) must not leak into the ranks. Best effort: an older kernel lacks CLOSE_RANGE_CLOEXEC.
    ::syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
#endif
    // dup2 onto itself keeps FD_CLOEXEC, so the flag is cleared explicitly.
    if (pass_fd >= 0 && (::dup2(pass_fd, 3) < 0 || ::fcntl(3, F_SETFD, 0) != 0)) {
      child_errno = errno;
      child_step = "dup2(fork socket)";
      _exit(127);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ::execve(path, argv.data(), envp.data());
    child_errno = errno;
    child_step = "execve";
    _exit(127);
  }
  const int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::close(null_fd);
  if (pid < 0) LAKERUN_THROW(IoError, "launch: cannot start '", request.path, "': vfork: ", std::strerror(vfork_errno));
  if (child_errno != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    LAKERUN_THROW(IoError, "launch: cannot start '", request.path, "': ", const_cast<const char*>(child_step), ": ",
                  std::strerror(child_errno));
  }
  Child child;
  child.pid = pid;
  child.pidfd = OpenPidfd(pid);
  return child;
}

void KillGroup(pid_t pgid, int sig) {
  if (pgid > 0) ::killpg(pgid, sig);
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(sig);
  }
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace lakerun::launch::internal
