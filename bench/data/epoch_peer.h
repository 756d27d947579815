// A peer process that runs one epoch per request, so a benchmark can alternate it with its own epochs and both see
// the same machine load (bench/data/torch_dataloader_peer.py --serve speaks this protocol).
//
// Protocol, one line each way: the peer prints "ready" once its data is loaded; then for every "epoch" line on its
// stdin it runs one epoch and prints "epoch samples_per_s=<rate>". It exits at the end of its stdin.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace lakerun::bench {

class EpochPeer {
 public:
  // Starts argv (argv[0] is looked up in PATH) and waits up to `timeout_s` for its "ready". On failure ok() is
  // false and error() says why; lines the peer printed that are not part of the protocol are kept in error().
  EpochPeer(const std::vector<std::string>& argv, double timeout_s);
  ~EpochPeer();  // closes its stdin, then waits up to 5 s before SIGKILL
  EpochPeer(const EpochPeer&) = delete;
  EpochPeer& operator=(const EpochPeer&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // One epoch's samples per second, or 0 (and ok() false) when the peer failed or took longer than `timeout_s`.
  double Epoch(double timeout_s);

 private:
  // The next protocol line within `timeout_s`; other lines go to error_. False on EOF, error or timeout.
  bool ReadLine(double timeout_s, std::string* line);
  void Fail(const std::string& why);

  pid_t pid_ = -1;
  int to_peer_ = -1;
  int from_peer_ = -1;
  std::string buffered_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace lakerun::bench
