// The launcher's side of fork start (private to lakerun::launch; protocol in fork_protocol.h).
//
// ForkTemplate starts PROGRAM once as the template and feeds it one request per rank. The launcher's poll loop
// owns the waiting: it polls socket() (POLLOUT while WantsWrite()) and the template's pidfd, and calls Flush() and
// Read() when they are ready, so a template that prints much before its fork point never blocks against a
// launcher that is busy sending.
#pragma once

#include <sys/types.h>

#include <array>
#include <deque>
#include <string>
#include <vector>

#include "base/fork_protocol.h"
#include "launch/process.h"

namespace lakerun::launch::internal {

class ForkTemplate {
 public:
  struct Event {
    enum Kind { kNothing, kForked, kReady, kFailed, kClosed } kind = kNothing;
    int rank = -1;
    pid_t pid = -1;
    std::string text;  ///< kFailed: the template's explanation
  };

  /// Makes the launcher a child subreaper (once per process: ranks forked by the template are re-parented to it when
  /// the template exits) and starts the template in its own process group with `rank_envs[0]` plus the fork
  /// variables, its stdout/stderr on rank 0's pipes. Requests for every rank are queued; rank r's request carries
  /// `rank_pipes[r]` (write ends, which this object closes once sent or on destruction). The template exits, and so
  /// lets its ranks run, only after ReleaseRanks(). `register_fd`: as SpawnRequest::register_fd.
  ForkTemplate(const std::string& path, const std::vector<std::string>& argv,
               const std::vector<std::vector<std::string>>& rank_envs, std::vector<std::array<int, 2>> rank_pipes,
               int register_fd = -1);
  ~ForkTemplate();
  ForkTemplate(const ForkTemplate&) = delete;
  ForkTemplate& operator=(const ForkTemplate&) = delete;

  Child& process() { return process_; }
  int socket() const { return socket_; }
  bool WantsWrite() const { return !queue_.empty(); }
  /// Sends queued requests until the socket would block. Throws IoError when the template is unreachable.
  void Flush();
  /// Reads one message (call when socket() is readable).
  Event Read();
  /// Queues the final 'Z': the template exits once it has forked every rank. A forked rank runs nothing of its
  /// program before the template's exit has made it the launcher's child, so whatever the launcher does before this
  /// call (registering the ranks' groups with the orphan guard) precedes every rank's own code.
  void ReleaseRanks();

 private:
  struct Pending {
    std::string bytes;
    std::array<int, 2> fds{-1, -1};
  };
  Child process_;
  int socket_ = -1;
  std::deque<Pending> queue_;
};

}  // namespace lakerun::launch::internal
