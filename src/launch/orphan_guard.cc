#include "launch/orphan_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace lakerun::launch::internal {
namespace {

constexpr int kMaxGroups = 8192;
constexpr int32_t kDisarm = 0;

[[noreturn]] void GuardMain(int read_fd) {
  // Keep only the pipe: an inherited socket or pipe would hold the launcher's resources open.
  if (::dup2(read_fd, 0) < 0) _exit(1);
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 1u, ~0u, 0u) != 0)
#endif
  {
    for (int fd = 1; fd < 65536; ++fd) ::close(fd);
  }
  ::setsid();
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  static pid_t groups[kMaxGroups];
  int count = 0;
  int32_t value;
  size_t have = 0;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&value);
  while (true) {
    const ssize_t n = ::read(0, bytes + have, sizeof(value) - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file: the launcher is gone
    have += static_cast<size_t>(n);
    if (have < sizeof(value)) continue;
    have = 0;
    if (value == kDisarm) _exit(0);
    if (count < kMaxGroups) groups[count++] = value;
  }
  for (int i = 0; i < count; ++i) ::killpg(groups[i], SIGKILL);
  _exit(0);
}

}  // namespace

OrphanGuard::OrphanGuard() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  // A raw clone(SIGCHLD) is fork() without the pthread_atfork handlers (libgomp, libtorch) that would otherwise
  // run in both processes; the guard needs none of them since it makes only system calls.
  const pid_t pid = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (pid == 0) GuardMain(fds[0]);
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return;
  }
  guard_pid_ = pid;
  write_fd_ = fds[1];
}

OrphanGuard::~OrphanGuard() {
  if (write_fd_ < 0) return;
  const int32_t disarm = kDisarm;
  [[maybe_unused]] ssize_t n = ::write(write_fd_, &disarm, sizeof(disarm));
  ::close(write_fd_);
  // The guard exits at once after reading the disarm message; reap it (bounded: it cannot block).
  for (int i = 0; i < 200; ++i) {
    int status;
    const pid_t r = ::waitpid(guard_pid_, &status, WNOHANG);
    if (r == guard_pid_ || (r < 0 && errno != EINTR)) return;
    ::usleep(5000);
  }
  ::kill(guard_pid_, SIGKILL);
  int status;
  ::waitpid(guard_pid_, &status, 0);
}

void OrphanGuard::Watch(pid_t pgid) {
  if (write_fd_ < 0) return;
  const int32_t value = static_cast<int32_t>(pgid);
  [[maybe_unused]] ssize_t n = ::write(write_fd_, &value, sizeof(value));
}

}  // namespace lakerun::launch::internal
