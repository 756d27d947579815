#include "launch/fork_template.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lakerun/base/error.h"

namespace lakerun::launch::internal {

using namespace ::lakerun::fork_start;

ForkTemplate::ForkTemplate(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::vector<std::string>>& rank_envs,
                           std::vector<std::array<int, 2>> rank_pipes, int register_fd) {
  LAKERUN_CHECK(!rank_envs.empty() && rank_envs.size() == rank_pipes.size(), "fork start: ", rank_envs.size(),
                " environments for ", rank_pipes.size(), " ranks");
  for (size_t r = 0; r < rank_envs.size(); ++r) {
    Pending p;
    p.bytes = EncodeRequest(EnvironmentChange(rank_envs[0], rank_envs[r], static_cast<int>(r)));
    p.fds = rank_pipes[r];
    queue_.push_back(std::move(p));
  }
  auto close_queued = [this] {
    for (auto& p : queue_) {
      for (int& fd : p.fds) {
        if (fd >= 0) ::close(fd);
        fd = -1;
      }
    }
  };
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    const int e = errno;
    close_queued();
    LAKERUN_THROW(IoError, "launch --start-method fork: prctl(PR_SET_CHILD_SUBREAPER): ", std::strerror(e));
  }
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
    const int e = errno;
    close_queued();
    LAKERUN_THROW(IoError, "launch --start-method fork: socketpair: ", std::strerror(e));
  }
  socket_ = ends[0];
  SpawnRequest request;
  request.path = path;
  request.argv = argv;
  request.env = rank_envs[0];
  request.env.push_back(std::string(kForkFdEnv) + "=" + std::to_string(kForkFd));
  request.env.push_back(std::string(kForkLauncherPidEnv) + "=" + std::to_string(::getpid()));
  request.stdout_fd = rank_pipes[0][0];
  request.stderr_fd = rank_pipes[0][1];
  request.pass_fd = ends[1];
  request.register_fd = register_fd;
  try {
    process_ = SpawnInOwnGroup(request);
  } catch (...) {
    ::close(ends[1]);
    close_queued();
    ::close(socket_);
    socket_ = -1;
    throw;
  }
  ::close(ends[1]);
}

ForkTemplate::~ForkTemplate() {
  for (auto& p : queue_) {
    for (int fd : p.fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  if (socket_ >= 0) ::close(socket_);
  if (process_.pidfd >= 0) ::close(process_.pidfd);
}

void ForkTemplate::ReleaseRanks() {
  queue_.push_back(Pending{"Z", {-1, -1}});
  Flush();
}

void ForkTemplate::Flush() {
  while (!queue_.empty()) {
    Pending& p = queue_.front();
    const int fd_count = p.fds[0] >= 0 ? 2 : 0;
    const int error = SendMessage(socket_, p.bytes, p.fds.data(), fd_count, MSG_DONTWAIT);
    if (error == EAGAIN || error == EWOULDBLOCK) return;
    if (error == EPIPE || error == ECONNRESET) return;  // the template is gone; its exit status tells why
    if (error != 0) {
      LAKERUN_THROW(IoError, "launch --start-method fork: sending to the template: ", std::strerror(error));
    }
    for (int& fd : p.fds) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    queue_.pop_front();
  }
}

ForkTemplate::Event ForkTemplate::Read() {
  Event event;
  std::string message;
  std::vector<int> fds;
  int got = ReceiveMessage(socket_, &message, &fds);
  if (got == -ECONNRESET) {
    // The template closed its end with our requests unread (it failed before its fork point). The kernel reports
    // that once, ahead of the messages it had sent before closing (its 'X' among them): read those next.
    got = ReceiveMessage(socket_, &message, &fds);
  }
  for (int fd : fds) ::close(fd);  // the template sends none
  if (got == -EAGAIN || got == -EINTR) return event;
  if (got <= 0) {
    event.kind = Event::kClosed;
    return event;
  }
  if (message[0] == 'X') {
    event.kind = Event::kFailed;
    event.text = message.substr(1);
    return event;
  }
  char type;
  if (!DecodeRankPid(message, &type, &event.rank, &event.pid)) {
    event.kind = Event::kFailed;
    event.text = "unreadable message from the template (" + std::to_string(message.size()) + " bytes)";
    return event;
  }
  event.kind = type == 'F' ? Event::kForked : Event::kReady;
  return event;
}

}  // namespace lakerun::launch::internal
