#include "epoch_peer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace lakerun::bench {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

EpochPeer::EpochPeer(const std::vector<std::string>& argv, double timeout_s) {
  ::signal(SIGPIPE, SIG_IGN);  // a peer that died makes Epoch() fail, not the benchmark
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    Fail(std::string("pipe: ") + std::strerror(errno));
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  to_peer_ = in[1];
  from_peer_ = out[0];
  if (rc != 0) {
    pid_ = -1;
    Fail("cannot start " + argv.front() + ": " + std::strerror(rc));
    return;
  }
  ok_ = true;
  std::string line;
  if (!ReadLine(timeout_s, &line) || line != "ready") Fail("no \"ready\" from " + argv.front());
}

EpochPeer::~EpochPeer() {
  if (to_peer_ >= 0) ::close(to_peer_);
  if (pid_ > 0) {
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    int status;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      ::usleep(10000);
    }
  }
  if (from_peer_ >= 0) ::close(from_peer_);
}

void EpochPeer::Fail(const std::string& why) {
  ok_ = false;
  error_ = why + (error_.empty() ? "" : "; it printed: " + error_);
}

bool EpochPeer::ReadLine(double timeout_s, std::string* line) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  while (true) {
    const size_t eol = buffered_.find('\n');
    if (eol != std::string::npos) {
      *line = buffered_.substr(0, eol);
      buffered_.erase(0, eol + 1);
      if (*line == "ready" || line->rfind("epoch ", 0) == 0) return true;
      error_ += *line + "\n";  // a warning or traceback: kept for the failure message
      continue;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{from_peer_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    char chunk[4096];
    const ssize_t got = ::read(from_peer_, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buffered_.append(chunk, static_cast<size_t>(got));
  }
}

double EpochPeer::Epoch(double timeout_s) {
  if (!ok_) return 0;
  static const char kRequest[] = "epoch\n";
  if (::write(to_peer_, kRequest, sizeof(kRequest) - 1) != static_cast<ssize_t>(sizeof(kRequest) - 1)) {
    Fail(std::string("writing to the peer: ") + std::strerror(errno));
    return 0;
  }
  std::string line;
  double rate = 0;
  if (!ReadLine(timeout_s, &line) || std::sscanf(line.c_str(), "epoch samples_per_s=%lf", &rate) != 1 || rate <= 0) {
    Fail("no epoch rate from the peer");
    return 0;
  }
  return rate;
}

}  // namespace lakerun::bench
