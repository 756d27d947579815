// Whether a job hangs, and which rank hangs it: a pure function of every rank's progress (docs/launch.md, "Hung
// ranks"). Each node's agent observes its own ranks (launch/hang_watch.h); in a job of several nodes the agents
// exchange those observations in their heartbeats, so every agent judges the same world.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/rdzv/progress.h"

namespace lakerun::launch::internal {

/// A rank's scheduler state as /proc shows it.
/// kExited: the launcher reaped it (it exited 0 while others still run).
enum class ProcessState { kUnknown, kRunning, kSleeping, kDiskSleep, kStopped, kTraced, kZombie, kExited };

/// "stopped (SIGSTOP or SIGTSTP)", "in D state (uninterruptible sleep: waiting on I/O or the kernel)", ...
std::string DescribeState(ProcessState state);

/// What an agent knows of one of its ranks.
struct RankObservation {
  int rank = 0;  // global
  int node = 0;
  int pid = 0;
  rdzv::RankProgress progress;
  ProcessState state = ProcessState::kUnknown;
  /// CPU used over the agent's last observation period, in thousandths of one CPU (-1: not known).
  int cpu_permille = -1;
  /// Since the process last did work the agent can see: at least 5 % of a CPU over an observation period, or bytes
  /// read or written (-1: not known).
  std::chrono::milliseconds idle{-1};
};

/// One line per rank, for an agent's heartbeat; Decode skips what it cannot read.
std::string EncodeObservations(const std::vector<RankObservation>& observations);
std::vector<RankObservation> DecodeObservations(const std::string& text);

struct HangVerdict {
  /// The ranks that hold the others up, most likely first: stopped or in D state, then the furthest behind (a rank
  /// waiting in an earlier collective than the others is behind: ranks whose code calls different collectives show
  /// so). Empty when every rank waits in the same collective: the transport is stuck.
  std::vector<RankObservation> culprits;
  /// The ranks that waited in a collective for at least the timeout.
  std::vector<RankObservation> waiting;
  /// The sequence number and kind of the collective the longest-waiting rank is in.
  uint64_t collective = 0;
  rdzv::Collective kind = rdzv::Collective::kNone;

  /// What the launcher reports about `culprit` (a verb phrase after "node K (host), rank R (pid P) "): its state, how
  /// long it made no progress, the collective it last entered, and who waits for it.
  std::string DescribeCulprit(const RankObservation& culprit) const;
  /// The report when no rank is behind (culprits empty).
  std::string DescribeDeadlock(std::chrono::milliseconds timeout) const;
};

/// How a rank that marks no collective but still works (uses CPU, reads or writes) counts.
enum class Working { kIsProgress, kIsNot };

/// A hang: some rank has waited in a collective for at least `timeout`, and some rank made no progress for that
/// long without being in it (it has not entered it, or it is stopped or in D state inside it), or every rank waits.
/// nullopt while every rank that is not waiting still makes progress, or no rank reports progress. With
/// Working::kIsProgress a rank that marked nothing for `timeout` but worked within it (a long checkpoint write, an
/// evaluation on one rank, a loop that spins) is not blamed: only a stopped, exited or idle one is.
std::optional<HangVerdict> JudgeHang(const std::vector<RankObservation>& ranks, std::chrono::milliseconds timeout,
                                     Working working = Working::kIsProgress);

/// "0-2, 5" for ranks {0, 1, 2, 5}.
std::string RankList(std::vector<int> ranks);

}  // namespace lakerun::launch::internal
