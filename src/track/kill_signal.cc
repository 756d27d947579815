#include "track/kill_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"

namespace lakerun::track {
namespace {

// SIGHUP: the terminal or SSH session closed; SIGPIPE: the output went to a pipe whose reader left (`| head`).
// Both end a process by default just as SIGTERM does, so the runs end KILLED rather than stay RUNNING.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

std::atomic<int> g_write_fd{-1};

extern "C" void OnKillSignal(int sig) {
  const int saved_errno = errno;
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(sig);
    (void)!::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

void OnTerminate();

class Registry {
 public:
  static Registry& Get() {
    static Registry* registry = new Registry();  // never destroyed: signals may arrive during static destruction
    return *registry;
  }

  uint64_t Register(KillSignalHandler::Callback callback) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t token = next_token_++;
    callbacks_[token] = std::move(callback);
    if (callbacks_.size() == 1) Start();
    return token;
  }

  void Unregister(uint64_t token) {
    std::thread to_join;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (callbacks_.erase(token) == 0 || !callbacks_.empty()) return;
      to_join = Stop();
    }
    if (to_join.joinable()) {
      if (to_join.get_id() == std::this_thread::get_id()) {
        to_join.detach();  // a callback ended its own run; the watcher exits on its own right after
      } else {
        to_join.join();
      }
    }
  }

 private:
  void Start() {
    int fds[2];
    LAKERUN_CHECK_AS(IoError, ::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0, "cannot create the signal pipe");
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    g_write_fd.store(write_fd_);
    stop_ = false;
    installed_.clear();
    for (int sig : kSignals) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;  // someone else handles it
      struct sigaction action {};
      action.sa_handler = OnKillSignal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      ::sigaction(sig, &action, nullptr);
      installed_.push_back(sig);
    }
    watcher_ = std::thread([this, fd = read_fd_] { Watch(fd); });
    previous_terminate_ = std::set_terminate(OnTerminate);
  }

 public:
  // Runs every callback with signal number 0 on the terminating thread, then the previous terminate handler.
  [[noreturn]] void Terminate() {
    std::terminate_handler previous = previous_terminate_;
    static std::atomic<bool> once{false};
    if (!once.exchange(true)) RunCallbacks(0);
    if (previous != nullptr && previous != OnTerminate) previous();
    std::abort();
  }

 private:

  std::thread Stop() {
    if (std::get_terminate() == OnTerminate) std::set_terminate(previous_terminate_);
    for (int sig : installed_) {
      struct sigaction action {};
      action.sa_handler = SIG_DFL;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
    installed_.clear();
    g_write_fd.store(-1);
    stop_ = true;
    ::close(write_fd_);  // wakes the watcher (EOF); it closes read_fd_
    write_fd_ = -1;
    return std::move(watcher_);
  }

  void Watch(int fd) {
    while (true) {
      pollfd p{fd, POLLIN, 0};
      const int rc = ::poll(&p, 1, 500);
      if (rc < 0 && errno != EINTR) break;
      if (rc <= 0) {
        if (stop_) break;
        continue;
      }
      unsigned char byte = 0;
      const ssize_t n = ::read(fd, &byte, 1);
      if (n == 0) break;  // write end closed: stopping
      if (n < 0) continue;
      HandleSignal(byte);
    }
    ::close(fd);
  }

  void RunCallbacks(int sig) {
    std::vector<KillSignalHandler::Callback> callbacks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = callbacks_.rbegin(); it != callbacks_.rend(); ++it) callbacks.push_back(it->second);
    }
    if (sig == 0) {
      LAKERUN_LOG(Warning) << "std::terminate called; flushing " << callbacks.size()
                           << " tracking run(s) and marking them FAILED";
    } else {
      LAKERUN_LOG(Warning) << "received signal " << sig << "; flushing " << callbacks.size()
                           << " tracking run(s) and marking them KILLED";
    }
    for (auto& callback : callbacks) {
      try {
        callback(sig);
      } catch (const std::exception& e) {
        LAKERUN_LOG(Error) << "while ending a tracking run (signal " << sig << "): " << e.what();
      }
    }
  }

  void HandleSignal(int sig) {
    RunCallbacks(sig);
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    // The default action ends the process as soon as the signal is delivered; if it is somehow held back, exit as
    // the shell would report a death by that signal.
    for (int i = 0; i < 500; ++i) ::usleep(10000);
    ::_exit(128 + sig);
  }

  std::mutex mu_;
  std::map<uint64_t, KillSignalHandler::Callback> callbacks_;  // guarded by mu_; ordered by registration
  uint64_t next_token_ = 1;
  std::vector<int> installed_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread watcher_;
  std::terminate_handler previous_terminate_ = nullptr;
};

void OnTerminate() { Registry::Get().Terminate(); }

}  // namespace

uint64_t KillSignalHandler::Register(Callback callback) { return Registry::Get().Register(std::move(callback)); }
void KillSignalHandler::Unregister(uint64_t token) { Registry::Get().Unregister(token); }

}  // namespace lakerun::track
