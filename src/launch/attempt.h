// One attempt of a launch on this node (launch/launcher.cc): start the node's ranks (vfork + exec, or forked from a
// template), then supervise them in one poll(2) loop over each rank's stdout and stderr pipes, each rank's pidfd
// (readable when it exits), the signal pipe and, on several nodes, what the node group found; with hang detection
// (launch/hang_watch.h) about once a second. Every poll has a deadline: the SIGKILL escalation, the attempt's
// timeout, the bounded wait for ranks after SIGKILL, or the bounded drain of pipes once every rank is gone.
#pragma once

#include <poll.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lakerun/launch/launcher.h"
#include "launch/fork_template.h"
#include "launch/hang_judge.h"
#include "launch/hang_watch.h"
#include "launch/node_failure.h"
#include "launch/node_group.h"
#include "launch/orphan_guard.h"
#include "launch/output.h"
#include "launch/process.h"
#include "launch/signal_watch.h"
#include "launch/wording.h"

namespace lakerun::launch::internal {

struct RankProcess {
  int rank = 0;
  Child child;
  int fds[2] = {-1, -1};  // stdout, stderr read ends
  bool running = false;
  // Fork start: false until the rank reports that it is our child (re-parented), in its own process group.
  bool ready = true;
  int status = 0;
  std::optional<RankExit> exit;  // once reaped
};

enum class AttemptEnd {
  kSuccess,
  kFailure,      // a rank of this node failed
  kPeerFailure,  // another node's rank failed, or an agent was lost (AttemptOutcome::peer)
  kInterrupted,
  kTimedOut,
};

struct AttemptOutcome {
  AttemptEnd end = AttemptEnd::kSuccess;
  RankExit failure;
  // Set when the attempt hung: what the report says instead of the blamed rank's exit.
  std::string hang;
  std::optional<NodeFailure> peer;
  int signal = 0;
  std::vector<std::optional<RankExit>> exits;  // AttemptReport::exits
};

class Attempt {
 public:
  // `group`: the node agents of a job of several nodes (nullptr: this launcher is the whole job).
  Attempt(const LaunchOptions& options, OutputRouter& router, SignalWatch& signals, OrphanGuard& guard,
          NodeGroup* group, HangWatch& hang);

  ~Attempt();

  // Starts every rank. vfork suspends only the calling thread until the child has exec'd, so the ranks are started
  // from up to kSpawnThreads threads at once: on a loaded machine each start waits for CPU (the child to run, then
  // the parent to run again), and those waits overlap instead of adding up. If any start fails, the ranks already
  // started are stopped by ~Attempt and the first failure (lowest rank) is thrown.
  void Spawn(const std::string& path, const std::vector<std::vector<std::string>>& envs);

  // Fork start: the pipes as for exec, then the template, which receives every rank's write ends with its request.
  void SpawnTemplate(const std::string& path, const std::vector<std::vector<std::string>>& envs);

  // A fork-started rank that has not reported yet may still be in the template's process group: signal the process.
  void Kill(const RankProcess& p, int sig);

  // One poll(2) loop until every rank is gone and their pipes are drained (or given up on): each turn applies the
  // deadlines, waits on the poll set until the nearest one, then handles what became ready.
  AttemptOutcome Supervise();

 private:
  // What each entry of a poll set watches.
  enum class Watched { kStdout, kStderr, kPidfd, kTemplateSocket, kTemplatePidfd, kSignals };
  struct PollSet {
    std::vector<pollfd> fds;
    std::vector<std::pair<Watched, int>> what;  // with the rank, for kStdout, kStderr and kPidfd
    void Add(int fd, short events, Watched watched, int rank = -1) {
      fds.push_back({fd, events, 0});
      what.emplace_back(watched, rank);
    }
  };

  // The rank's number in the job (its local number plus the node's first rank).
  int Global(int local_rank) const { return (group_ ? group_->first_rank() : 0) + local_rank; }

  // Another node's failure (or a lost agent) stops this node's ranks; so does a hang node 0 found here.
  void WatchPeers();

  // This node's ranks, by local rank, for hang detection.
  std::vector<LocalRank> LocalRanks() const;

  // Every rank's progress as this agent knows it: its own ranks' now, the other nodes' from their last heartbeats.
  std::vector<RankObservation> ObserveWorld();

  // About once a second: does the job hang? On one node the launcher judges; on several, node 0's agent judges the
  // whole job from the progress the others' heartbeats carry (they only share theirs). A hang of a rank of node K is
  // published as the attempt's failure; node K's agent then takes its stacks and every agent stops its ranks.
  void WatchForHangs();

  // The /proc state of local rank `local` now (for a hang another agent found).
  ProcessState RankState(int local) const;

  // Blames `blamed` (a rank of this node) for the hang `cause` describes, prints its stacks, stops the job.
  void ReportHang(const RankObservation& blamed, const std::string& cause,
                  const std::vector<RankObservation>& culprits);

  // A rank that failed inside a collective (its collective timeout, or a peer's connection reset) was held up by
  // whichever rank made no progress meanwhile: "" when there is none, else what to add to its report.
  std::string HeldUpBy(const RankProcess& p);

  // Tells the other nodes' agents what failed here: rank `local_rank` (-1: the agent itself).
  void PublishLocal(int local_rank, int pid, const std::string& cause, int exit_code, bool hang = false);

  int RunningCount() const;

  // SIGTERM is followed by SIGCONT: a stopped rank would hold it until SIGKILL.
  void StopAll(int sig);

  // SIGTERM to every rank, SIGKILL after the grace period.
  void BeginStop();

  void Escalate();

  // True once every rank (and the template) is gone and the pipes are drained, or the bounded drain has passed.
  bool Finished();

  // Ranks still there kReapAfterKill after SIGKILL (stuck in the kernel) are given up on: true when that happened.
  bool GiveUpOnUnkillable();

  // The SIGKILL escalation and the attempt's --timeout.
  void ApplyDeadlines();

  PollSet BuildPollSet() const;

  // Milliseconds until the nearest deadline, at most 1 s; the fallback period while some process has no pidfd.
  int WaitMs() const;

  void HandleReady(const PollSet& set);

  void ReadOutput(RankProcess& p, int stream);

  void ServeTemplate(short revents);

  // SIGINT/SIGTERM to the launcher: forwarded to the ranks; a second one escalates to SIGKILL.
  void OnSignal();

  void OnTemplateEvent(const ForkTemplate::Event& event);

  // Fork start: the template's exit, and what it said. A template that dies before forking every rank fails the
  // attempt as rank 0 (whose environment and output it had); one that exits 0 without forking never reached its
  // fork point, and a refusal ('X') is a usage error: both are thrown, as a rank that cannot be exec'd is.
  void ReapTemplate();

  // Reaps `p` if it has exited; the first failure stops the others.
  void Reap(RankProcess& p);

  // Closes what is left of the pipes and collects every rank's exit.
  AttemptOutcome Conclude();

  const LaunchOptions& options_;
  OutputRouter& router_;
  SignalWatch& signals_;
  OrphanGuard& guard_;
  NodeGroup* group_;
  HangWatch& hang_;
  // Threads that started ranks (Spawn), parked until the destructor releases and joins them.
  std::vector<std::thread> spawners_;
  std::mutex spawn_mu_;
  std::condition_variable spawn_cv_;
  int spawners_done_ = 0;
  bool release_spawners_ = false;
  std::vector<RankProcess> ranks_;
  // Fork start only.
  std::unique_ptr<ForkTemplate> template_;
  bool template_running_ = false;
  bool template_socket_open_ = true;
  int forked_ = 0;
  std::string template_failure_;
  std::optional<RankExit> template_exit_;  // once reaped, as rank 0
  // Supervise's state.
  std::optional<std::chrono::steady_clock::time_point> attempt_deadline_;  // --timeout
  std::optional<std::chrono::steady_clock::time_point> kill_at_;           // SIGKILL escalation
  std::optional<std::chrono::steady_clock::time_point> give_up_at_;        // bounded wait after SIGKILL
  std::optional<std::chrono::steady_clock::time_point> drain_until_;       // bounded drain after every rank exited
  bool stopping_ = false;
  bool killed_ = false;
  AttemptOutcome outcome_;
  std::array<char, 65536> buffer_;
};

}  // namespace lakerun::launch::internal
