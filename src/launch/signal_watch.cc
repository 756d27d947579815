#include "launch/signal_watch.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "lakerun/base/error.h"

namespace lakerun::launch::internal {
namespace {

constexpr int kSlots = 64;
constexpr int kSignals[] = {SIGINT, SIGTERM};

std::atomic<int> g_write_fds[kSlots];
std::mutex g_mutex;
int g_watchers = 0;
struct sigaction g_previous[2];
bool g_installed[2] = {false, false};

void OnSignal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  for (auto& slot : g_write_fds) {
    const int fd = slot.load(std::memory_order_relaxed);
    if (fd >= 0) {
      [[maybe_unused]] ssize_t n = ::write(fd, &byte, 1);
    }
  }
  errno = saved;
}

struct InitSlots {
  InitSlots() {
    for (auto& slot : g_write_fds) slot.store(-1);
  }
} g_init_slots;

}  // namespace

SignalWatch::SignalWatch(bool enabled, bool take_handlers) {
  if (!enabled) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    LAKERUN_THROW(IoError, "launch: cannot create the signal pipe: ", std::strerror(errno));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kSlots; ++i) {
    int expected = -1;
    if (g_write_fds[i].compare_exchange_strong(expected, write_fd_)) {
      slot_ = i;
      break;
    }
  }
  LAKERUN_CHECK_AS(ConfigError, slot_ >= 0, "launch: more than ", kSlots, " launches watch signals at once");
  if (g_watchers++ == 0) {
    for (int i = 0; i < 2; ++i) {
      struct sigaction current;
      g_installed[i] = false;
      if (::sigaction(kSignals[i], nullptr, &current) != 0) continue;
      const bool is_default = current.sa_handler == SIG_DFL && !(current.sa_flags & SA_SIGINFO);
      const bool is_ignored = current.sa_handler == SIG_IGN && !(current.sa_flags & SA_SIGINFO);
      if (!is_default && (!take_handlers || is_ignored)) continue;
      struct sigaction action;
      std::memset(&action, 0, sizeof(action));
      action.sa_handler = OnSignal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      if (::sigaction(kSignals[i], &action, &g_previous[i]) == 0) g_installed[i] = true;
    }
  }
}

SignalWatch::~SignalWatch() {
  if (read_fd_ < 0) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (slot_ >= 0) g_write_fds[slot_].store(-1);
    if (--g_watchers == 0) {
      for (int i = 0; i < 2; ++i) {
        if (g_installed[i]) ::sigaction(kSignals[i], &g_previous[i], nullptr);
        g_installed[i] = false;
      }
    }
  }
  ::close(read_fd_);
  ::close(write_fd_);
}

int SignalWatch::Take() {
  if (read_fd_ < 0) return 0;
  int last = 0;
  unsigned char buffer[64];
  ssize_t n;
  while ((n = ::read(read_fd_, buffer, sizeof(buffer))) > 0) last = buffer[n - 1];
  return last;
}

}  // namespace lakerun::launch::internal
