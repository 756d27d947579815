// A node agent's view of its ranks' progress, for hang detection (docs/launch.md, "Hung ranks"): the progress board
// its ranks write (lakerun/rdzv/progress.h) plus what /proc shows of each (launch/proc_inspect.h), sampled about
// once a second from the supervision loop. Judging is launch/hang_judge.h's; acting on a verdict is the launcher's.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/rdzv/progress.h"
#include "launch/hang_judge.h"

namespace lakerun::launch::internal {

struct HangWatchOptions {
  int local_ranks = 1;
  int first_rank = 0;  // global rank of local rank 0
  int node = 0;
  /// --hang-timeout; 0 turns hang detection off (no board, no observations).
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

/// A local rank as the launcher knows it.
struct LocalRank {
  int pid = 0;
  bool exited = false;
};

class HangWatch {
 public:
  /// Throws IoError when the board's shared memory cannot be made.
  explicit HangWatch(const HangWatchOptions& options);

  bool enabled() const { return board_ != nullptr; }
  std::chrono::milliseconds timeout() const { return options_.timeout; }
  /// The variables that hand local rank L its slot; when disabled, an empty board (so a rank does not write into
  /// the board of a launcher this one runs under).
  std::map<std::string, std::string> RankEnvironment(int local_rank) const;
  /// Empties the board and the CPU samples: the ranks of a new attempt start.
  void BeginAttempt();
  /// True when the last observation is at least the sampling period old.
  bool Due() const;
  /// Reads the board and /proc for every local rank (by local rank).
  std::vector<RankObservation> Observe(const std::vector<LocalRank>& ranks);

 private:
  HangWatchOptions options_;
  std::unique_ptr<rdzv::ProgressBoard> board_;
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> observed_at_;
  // By local rank, at observed_at_:
  std::vector<int64_t> cpu_ticks_;
  std::vector<int64_t> io_bytes_;
  std::vector<Clock::time_point> worked_at_;  // the last observation that saw it work (or the attempt's start)
};

}  // namespace lakerun::launch::internal
