// The supervision loop of lakerun::launch::Launch (launcher.h).
//
// One thread, one poll(2) loop per attempt over: each rank's stdout and stderr pipes, each rank's pidfd (readable
// when it exits) and the signal pipe. Every poll has a deadline: the SIGKILL escalation, the attempt timeout, the
// bounded wait for ranks after SIGKILL, or the bounded drain of pipes once every rank is gone.
#include "lakerun/launch/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/launch/gpu.h"
#include "launch/fork_template.h"
#include "launch/hang_judge.h"
#include "launch/hang_watch.h"
#include "launch/node_group.h"
#include "launch/orphan_guard.h"
#include "launch/output.h"
#include "launch/proc_inspect.h"
#include "launch/process.h"
#include "launch/rank_env.h"
#include "launch/rendezvous_store.h"
#include "launch/signal_watch.h"

namespace lakerun::launch {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string RankExit::Describe() const {
  if (signal == 0) return "exited with code " + std::to_string(exit_code);
  std::string text = "was killed by signal " + std::to_string(signal) + " (" + internal::SignalName(signal) + ")";
  switch (signal) {
    case SIGKILL: text += ", likely out of memory (the kernel's OOM killer sends SIGKILL)"; break;
    case SIGABRT: text += ": it aborted (abort(), a failed assertion or an uncaught C++ exception)"; break;
    case SIGSEGV: text += ": segmentation fault"; break;
    case SIGBUS: text += ": bus error"; break;
    case SIGFPE: text += ": arithmetic error"; break;
    default: break;
  }
  return text;
}

namespace {

// After SIGKILL a process normally disappears at once; one stuck in the kernel (D state) may not. Bounded.
constexpr milliseconds kReapAfterKill{10000};
// Threads that start ranks at once (Attempt::Spawn).
constexpr int kSpawnThreads = 8;
// Once every rank has exited, pipes still held by escaped descendants are drained for at most this long.
constexpr milliseconds kDrainAfterExit{2000};
// Poll period when pidfd_open is unavailable.
constexpr milliseconds kPollFallback{20};
// How often a node agent looks at what its watcher found about the other nodes (NodeGroup::Failure, no I/O).
constexpr milliseconds kPeerPoll{50};
// A hung job exits as one that ran past --timeout.
constexpr int kHangExitCode = 124;
// gdb's bound when the launcher takes a hung rank's stacks.
constexpr milliseconds kStackBound{15000};

struct RankProcess {
  int rank = 0;
  internal::Child child;
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
  std::optional<internal::NodeFailure> peer;
  int signal = 0;
  std::vector<std::optional<RankExit>> exits;  // AttemptReport::exits
};

std::string Plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string Seconds(milliseconds ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g s", ms.count() / 1000.0);
  return buffer;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

class Attempt {
 public:
  // `group`: the node agents of a job of several nodes (nullptr: this launcher is the whole job).
  Attempt(const LaunchOptions& options, internal::OutputRouter& router, internal::SignalWatch& signals,
          internal::OrphanGuard& guard, internal::NodeGroup* group, internal::HangWatch& hang)
      : options_(options), router_(router), signals_(signals), guard_(guard), group_(group), hang_(hang) {}

  ~Attempt() {
    // Only reached with live ranks when an exception escapes: never leave them behind (bounded wait).
    for (auto& p : ranks_) {
      if (p.running) Kill(p, SIGKILL);
    }
    const auto deadline = Clock::now() + kReapAfterKill;
    if (template_running_) {
      internal::KillGroup(template_->process().pid, SIGKILL);
      int status;
      while (::waitpid(template_->process().pid, &status, WNOHANG) == 0 && Clock::now() < deadline) ::usleep(1000);
    }
    for (auto& p : ranks_) {
      int status;
      while (p.running && ::waitpid(p.child.pid, &status, WNOHANG) == 0 && Clock::now() < deadline) {
        ::usleep(1000);
      }
    }
    for (auto& p : ranks_) {
      CloseFd(p.fds[0]);
      CloseFd(p.fds[1]);
      CloseFd(p.child.pidfd);
    }
    {
      std::lock_guard<std::mutex> lock(spawn_mu_);
      release_spawners_ = true;
    }
    spawn_cv_.notify_all();
    for (auto& t : spawners_) t.join();
  }

  // Starts every rank. vfork suspends only the calling thread until the child has exec'd, so the ranks are started
  // from up to kSpawnThreads threads at once: on a loaded machine each start waits for CPU (the child to run, then
  // the parent to run again), and those waits overlap instead of adding up. If any start fails, the ranks already
  // started are stopped by ~Attempt and the first failure (lowest rank) is thrown.
  void Spawn(const std::string& path, const std::vector<std::vector<std::string>>& envs) {
    const int n = static_cast<int>(envs.size());
    ranks_.resize(n);
    if (options_.start_method == StartMethod::kFork) {
      SpawnTemplate(path, envs);
      return;
    }
    std::vector<std::array<int, 2>> child_ends(n, {-1, -1});  // the pipes' write ends, the child's stdout/stderr
    auto close_child_ends = [&] {
      for (auto& ends : child_ends) {
        CloseFd(ends[0]);
        CloseFd(ends[1]);
      }
    };
    for (int rank = 0; rank < n; ++rank) {
      RankProcess& p = ranks_[rank];
      p.rank = rank;
      int out[2], err[2];
      if (::pipe2(out, O_CLOEXEC) != 0) {
        const int e = errno;
        close_child_ends();
        LAKERUN_THROW(IoError, "launch: pipe for rank ", rank, ": ", std::strerror(e));
      }
      if (::pipe2(err, O_CLOEXEC) != 0) {
        const int e = errno;
        ::close(out[0]);
        ::close(out[1]);
        close_child_ends();
        LAKERUN_THROW(IoError, "launch: pipe for rank ", rank, ": ", std::strerror(e));
      }
      p.fds[0] = out[0];
      p.fds[1] = err[0];
      child_ends[rank] = {out[1], err[1]};
    }

    std::vector<std::exception_ptr> errors(n);
    std::atomic<int> next{0};
    auto spawn_some = [&] {
      for (int rank = next++; rank < n; rank = next++) {
        try {
          internal::SpawnRequest request;
          request.path = path;
          request.argv = options_.command;
          request.env = envs[rank];
          request.stdout_fd = child_ends[rank][0];
          request.stderr_fd = child_ends[rank][1];
          request.register_fd = guard_.registration_fd();  // the child registers its group itself, before exec
          ranks_[rank].child = internal::SpawnInOwnGroup(request);
        } catch (...) {
          errors[rank] = std::current_exception();
        }
      }
    };
    // A child's PR_SET_PDEATHSIG fires when the *thread* that started it exits, so the helpers do not exit after
    // their starts: they stay parked until ~Attempt, when every rank is gone.
    for (int t = 1; t < std::min(n, kSpawnThreads); ++t) {
      try {
        spawners_.emplace_back([this, &spawn_some] {
          spawn_some();
          std::unique_lock<std::mutex> lock(spawn_mu_);
          ++spawners_done_;
          spawn_cv_.notify_all();
          spawn_cv_.wait(lock, [this] { return release_spawners_; });
        });
      } catch (const std::system_error&) {
        break;  // no more threads: this one starts the rest
      }
    }
    spawn_some();
    {
      std::unique_lock<std::mutex> lock(spawn_mu_);
      spawn_cv_.wait(lock, [this] { return spawners_done_ == static_cast<int>(spawners_.size()); });
    }
    close_child_ends();

    std::exception_ptr first_error;
    for (int rank = 0; rank < n; ++rank) {
      RankProcess& p = ranks_[rank];
      if (errors[rank]) {
        if (!first_error) first_error = errors[rank];
        continue;
      }
      p.running = true;
      ::fcntl(p.fds[0], F_SETFL, O_NONBLOCK);
      ::fcntl(p.fds[1], F_SETFL, O_NONBLOCK);
    }
    if (first_error) std::rethrow_exception(first_error);
  }

  // Fork start: the pipes as for exec, then the template, which receives every rank's write ends with its request.
  void SpawnTemplate(const std::string& path, const std::vector<std::vector<std::string>>& envs) {
    const int n = static_cast<int>(envs.size());
    std::vector<std::array<int, 2>> child_ends(n, {-1, -1});
    for (int rank = 0; rank < n; ++rank) {
      RankProcess& p = ranks_[rank];
      p.rank = rank;
      p.ready = false;
      int out[2], err[2];
      if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        const int e = errno;
        for (auto& ends : child_ends) {
          CloseFd(ends[0]);
          CloseFd(ends[1]);
        }
        LAKERUN_THROW(IoError, "launch: pipe for rank ", rank, ": ", std::strerror(e));
      }
      p.fds[0] = out[0];
      p.fds[1] = err[0];
      ::fcntl(p.fds[0], F_SETFL, O_NONBLOCK);
      ::fcntl(p.fds[1], F_SETFL, O_NONBLOCK);
      child_ends[rank] = {out[1], err[1]};
    }
    template_ = std::make_unique<internal::ForkTemplate>(path, options_.command, envs, std::move(child_ends),
                                                         guard_.registration_fd());
    template_running_ = true;
    ::fcntl(template_->socket(), F_SETFL, O_NONBLOCK);
    template_->Flush();
  }

  // A fork-started rank that has not reported yet may still be in the template's process group: signal the process.
  void Kill(const RankProcess& p, int sig) {
    if (p.ready) {
      internal::KillGroup(p.child.pid, sig);
    } else if (p.child.pid > 0) {
      ::kill(p.child.pid, sig);
    }
  }

  // One poll(2) loop until every rank is gone and their pipes are drained (or given up on): each turn applies the
  // deadlines, waits on the poll set until the nearest one, then handles what became ready.
  AttemptOutcome Supervise() {
    if (options_.timeout.count() > 0) attempt_deadline_ = Clock::now() + options_.timeout;
    while (!Finished()) {
      if (GiveUpOnUnkillable()) continue;
      ApplyDeadlines();
      WatchPeers();
      WatchForHangs();
      PollSet set = BuildPollSet();
      const int ready = ::poll(set.fds.data(), set.fds.size(), WaitMs());
      if (ready < 0 && errno != EINTR) LAKERUN_THROW(IoError, "launch: poll: ", std::strerror(errno));
      if (ready > 0) HandleReady(set);
      for (auto& p : ranks_) {
        if (p.running && p.child.pidfd < 0) Reap(p);
      }
      if (template_running_ && template_->process().pidfd < 0) ReapTemplate();
    }
    return Conclude();
  }

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
  void WatchPeers() {
    if (group_ == nullptr || stopping_) return;
    std::optional<internal::NodeFailure> failure = group_->Failure();
    if (failure && failure->node == group_->node_rank() && failure->hang && failure->rank >= Global(0) &&
        failure->rank < Global(static_cast<int>(ranks_.size()))) {
      const internal::RankObservation blamed{failure->rank, failure->node, failure->pid, {},
                                             RankState(failure->rank - Global(0))};
      ReportHang(blamed, failure->cause, {});
      return;
    }
    if (!failure || failure->node == group_->node_rank()) return;
    outcome_.end = AttemptEnd::kPeerFailure;
    outcome_.peer = failure;
    router_.Note(failure->Describe() + "; stopping the " + Plural(RunningCount(), "rank") + " of this node (" +
                 "SIGTERM, SIGKILL after " + Seconds(options_.grace_period) + ")");
    BeginStop();
  }

  // This node's ranks, by local rank, for hang detection.
  std::vector<internal::LocalRank> LocalRanks() const {
    std::vector<internal::LocalRank> ranks;
    for (const auto& p : ranks_) ranks.push_back({p.child.pid, !p.running && p.exit.has_value()});
    return ranks;
  }

  // Every rank's progress as this agent knows it: its own ranks' now, the other nodes' from their last heartbeats.
  std::vector<internal::RankObservation> ObserveWorld() {
    std::vector<internal::RankObservation> world = hang_.Observe(LocalRanks());
    if (group_ != nullptr) {
      group_->ShareProgress(internal::EncodeObservations(world));
      for (const auto& [text, age] : group_->PeerProgress()) {
        for (internal::RankObservation& r : internal::DecodeObservations(text)) {
          r.progress.quiet += age;  // as quiet as it was then, and as long since
          world.push_back(r);
        }
      }
    }
    return world;
  }

  // About once a second: does the job hang? On one node the launcher judges; on several, node 0's agent judges the
  // whole job from the progress the others' heartbeats carry (they only share theirs). A hang of a rank of node K is
  // published as the attempt's failure; node K's agent then takes its stacks and every agent stops its ranks.
  void WatchForHangs() {
    if (stopping_ || ranks_.empty() || !hang_.Due()) return;
    const std::vector<internal::RankObservation> world = ObserveWorld();
    if (group_ != nullptr && group_->node_rank() != 0) return;
    const std::optional<internal::HangVerdict> verdict = internal::JudgeHang(world, hang_.timeout());
    if (!verdict) return;
    const bool deadlock = verdict->culprits.empty();
    const internal::RankObservation& blamed = deadlock ? verdict->waiting.front() : verdict->culprits.front();
    const std::string cause = deadlock ? verdict->DescribeDeadlock(hang_.timeout())
                                       : verdict->DescribeCulprit(blamed) + " (--hang-timeout " +
                                             Seconds(hang_.timeout()) + ")";
    if (group_ != nullptr && blamed.node != group_->node_rank()) {
      group_->Publish({blamed.node, group_->host_of(blamed.node), blamed.rank, blamed.pid, cause, kHangExitCode,
                       /*hang=*/true});
      return;  // its agent reports it; WatchPeers stops this node's ranks once the failure is in the store
    }
    ReportHang(blamed, cause, verdict->culprits);
  }

  // The /proc state of local rank `local` now (for a hang another agent found).
  internal::ProcessState RankState(int local) const {
    const RankProcess& p = ranks_[static_cast<size_t>(local)];
    return p.running ? internal::SampleProcess(p.child.pid).state : internal::ProcessState::kExited;
  }

  // Blames `blamed` (a rank of this node) for the hang `cause` describes, prints its stacks, stops the job.
  void ReportHang(const internal::RankObservation& blamed, const std::string& cause,
                  const std::vector<internal::RankObservation>& culprits) {
    outcome_.end = AttemptEnd::kFailure;
    outcome_.failure = RankExit{blamed.rank, kHangExitCode, 0};
    outcome_.hang = cause;
    PublishLocal(blamed.rank - Global(0), blamed.pid, cause, kHangExitCode, /*hang=*/true);
    router_.Note("rank " + std::to_string(blamed.rank) + " (pid " + std::to_string(blamed.pid) + ") " + cause);
    std::vector<int> others;
    for (size_t i = 1; i < culprits.size(); ++i) others.push_back(culprits[i].rank);
    if (!others.empty()) router_.Note("also behind: " + Plural(static_cast<int>(others.size()), "rank") + " (" +
                                      internal::RankList(others) + ")");
    if (blamed.state != internal::ProcessState::kExited && blamed.pid > 0) {
      router_.Note("stacks of rank " + std::to_string(blamed.rank) + " (pid " + std::to_string(blamed.pid) + "):");
      for (const std::string& line : internal::CaptureStacks(blamed.pid, kStackBound)) router_.Note("  " + line);
    }
    router_.Note("stopping the " + Plural(RunningCount(), "rank") + " (SIGTERM, SIGKILL after " +
                 Seconds(options_.grace_period) + ")");
    BeginStop();
  }

  // A rank that failed inside a collective (its collective timeout, or a peer's connection reset) was held up by
  // whichever rank made no progress meanwhile: "" when there is none, else what to add to its report.
  std::string HeldUpBy(const RankProcess& p) {
    if (!hang_.enabled()) return "";
    std::vector<internal::RankObservation> world = ObserveWorld();
    auto self = std::find_if(world.begin(), world.end(),
                             [&](const internal::RankObservation& r) { return r.rank == Global(p.rank); });
    if (self == world.end() || !self->progress.in_collective) return "";
    self->state = internal::ProcessState::kUnknown;  // it waited, then exited: a waiter, not a culprit
    const milliseconds waited((self->progress.quiet.count() + 500) / 1000 * 1000);
    const std::optional<internal::HangVerdict> verdict =
        internal::JudgeHang(world, std::max(milliseconds(1000), waited / 2), internal::Working::kIsNot);
    if (!verdict || verdict->culprits.empty()) return "";
    const internal::RankObservation& culprit = verdict->culprits.front();
    return " after waiting " + Seconds(waited) + " in collective #" + std::to_string(self->progress.entered) +
           "; it was held up by rank " + std::to_string(culprit.rank) + " (pid " + std::to_string(culprit.pid) +
           (group_ != nullptr ? ", node " + std::to_string(culprit.node) : std::string()) + "), which " +
           verdict->DescribeCulprit(culprit);
  }

  // Tells the other nodes' agents what failed here: rank `local_rank` (-1: the agent itself).
  void PublishLocal(int local_rank, int pid, const std::string& cause, int exit_code, bool hang = false) {
    if (group_ == nullptr) return;
    internal::NodeFailure failure;
    failure.node = group_->node_rank();
    failure.host = group_->host();
    failure.rank = local_rank < 0 ? -1 : Global(local_rank);
    failure.pid = pid;
    failure.cause = cause;
    failure.exit_code = exit_code;
    failure.hang = hang;
    group_->Publish(failure);
  }

  int RunningCount() const {
    return static_cast<int>(
        std::count_if(ranks_.begin(), ranks_.end(), [](const RankProcess& p) { return p.running; }));
  }

  // SIGTERM is followed by SIGCONT: a stopped rank would hold it until SIGKILL.
  void StopAll(int sig) {
    for (auto& p : ranks_) {
      if (p.running) Kill(p, sig);
      if (p.running && sig == SIGTERM) Kill(p, SIGCONT);
    }
    if (template_running_) internal::KillGroup(template_->process().pid, sig);
  }

  // SIGTERM to every rank, SIGKILL after the grace period.
  void BeginStop() {
    stopping_ = true;
    StopAll(SIGTERM);
    kill_at_ = Clock::now() + options_.grace_period;
  }

  void Escalate() {
    StopAll(SIGKILL);
    killed_ = true;
    kill_at_.reset();
    give_up_at_ = Clock::now() + kReapAfterKill;
  }

  // True once every rank (and the template) is gone and the pipes are drained, or the bounded drain has passed.
  bool Finished() {
    const bool any_running = RunningCount() > 0 || template_running_;
    const bool any_pipe =
        std::any_of(ranks_.begin(), ranks_.end(), [](const RankProcess& p) { return p.fds[0] >= 0 || p.fds[1] >= 0; });
    if (!any_running && !drain_until_) drain_until_ = Clock::now() + kDrainAfterExit;
    return !any_running && (!any_pipe || Clock::now() >= *drain_until_);
  }

  // Ranks still there kReapAfterKill after SIGKILL (stuck in the kernel) are given up on: true when that happened.
  bool GiveUpOnUnkillable() {
    const bool any_running = RunningCount() > 0 || template_running_;
    if (!any_running || !give_up_at_ || Clock::now() < *give_up_at_) return false;
    template_running_ = false;
    for (auto& p : ranks_) {
      if (p.running) {
        router_.Note("rank " + std::to_string(Global(p.rank)) + " (pid " + std::to_string(p.child.pid) +
                     ") did not exit " + Seconds(kReapAfterKill) + " after SIGKILL (stuck in the kernel?); " +
                     "giving up on it");
        p.running = false;
      }
    }
    return true;
  }

  // The SIGKILL escalation and the attempt's --timeout.
  void ApplyDeadlines() {
    if (kill_at_ && Clock::now() >= *kill_at_) Escalate();
    if (!stopping_ && attempt_deadline_ && Clock::now() >= *attempt_deadline_) {
      outcome_.end = AttemptEnd::kTimedOut;
      PublishLocal(-1, ::getpid(), "stopped the job: its ranks ran past --timeout " + Seconds(options_.timeout), 124);
      router_.Note("the ranks ran past --timeout " + Seconds(options_.timeout) + "; stopping " +
                   Plural(RunningCount(), "rank"));
      BeginStop();
    }
  }

  PollSet BuildPollSet() const {
    PollSet set;
    for (const auto& p : ranks_) {
      if (p.fds[0] >= 0) set.Add(p.fds[0], POLLIN, Watched::kStdout, p.rank);
      if (p.fds[1] >= 0) set.Add(p.fds[1], POLLIN, Watched::kStderr, p.rank);
      // A forked rank is our child only once the template is gone; until then its pidfd could not be reaped.
      if (p.running && p.child.pidfd >= 0 && (p.ready || !template_running_)) {
        set.Add(p.child.pidfd, POLLIN, Watched::kPidfd, p.rank);
      }
    }
    if (template_ && template_socket_open_) {
      set.Add(template_->socket(), static_cast<short>(POLLIN | (template_->WantsWrite() ? POLLOUT : 0)),
              Watched::kTemplateSocket);
    }
    if (template_running_ && template_->process().pidfd >= 0) {
      set.Add(template_->process().pidfd, POLLIN, Watched::kTemplatePidfd);
    }
    if (signals_.fd() >= 0) set.Add(signals_.fd(), POLLIN, Watched::kSignals);
    return set;
  }

  // Milliseconds until the nearest deadline, at most 1 s; the fallback period while some process has no pidfd.
  int WaitMs() const {
    Clock::time_point wake = Clock::now() + milliseconds(1000);
    for (const auto& t : {kill_at_, give_up_at_, drain_until_, stopping_ ? std::nullopt : attempt_deadline_}) {
      if (t) wake = std::min(wake, *t);
    }
    const bool any_without_pidfd =
        std::any_of(ranks_.begin(), ranks_.end(), [](const RankProcess& p) { return p.running && p.child.pidfd < 0; });
    if (any_without_pidfd) wake = std::min(wake, Clock::now() + kPollFallback);
    if (group_ != nullptr && !stopping_) wake = std::min(wake, Clock::now() + kPeerPoll);
    if (template_running_ && template_->process().pidfd < 0) wake = std::min(wake, Clock::now() + kPollFallback);
    return static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<milliseconds>(wake - Clock::now()).count() + 1));
  }

  void HandleReady(const PollSet& set) {
    for (size_t i = 0; i < set.fds.size(); ++i) {
      const short revents = set.fds[i].revents;
      if (revents == 0) continue;
      const auto [watched, rank] = set.what[i];
      switch (watched) {
        case Watched::kStdout: ReadOutput(ranks_[rank], 0); break;
        case Watched::kStderr: ReadOutput(ranks_[rank], 1); break;
        case Watched::kPidfd: Reap(ranks_[rank]); break;
        case Watched::kTemplatePidfd: ReapTemplate(); break;
        case Watched::kTemplateSocket: ServeTemplate(revents); break;
        case Watched::kSignals: OnSignal(); break;
      }
    }
  }

  void ReadOutput(RankProcess& p, int stream) {
    const ssize_t n = ::read(p.fds[stream], buffer_.data(), buffer_.size());
    if (n > 0) {
      router_.Feed(p.rank, static_cast<internal::Stream>(stream),
                   std::string_view(buffer_.data(), static_cast<size_t>(n)));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      router_.Finish(p.rank, static_cast<internal::Stream>(stream));
      CloseFd(p.fds[stream]);
    }
  }

  void ServeTemplate(short revents) {
    if ((revents & POLLOUT) != 0) template_->Flush();
    // Drain every queued message first: an 'X' may sit behind 'F's when the template's exit is seen.
    while (template_socket_open_ && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const internal::ForkTemplate::Event event = template_->Read();
      if (event.kind == internal::ForkTemplate::Event::kNothing) break;
      OnTemplateEvent(event);
    }
  }

  // SIGINT/SIGTERM to the launcher: forwarded to the ranks; a second one escalates to SIGKILL.
  void OnSignal() {
    const int sig = signals_.Take();
    if (sig == 0) return;
    if (!stopping_) {
      outcome_.end = AttemptEnd::kInterrupted;
      outcome_.signal = sig;
      PublishLocal(-1, ::getpid(), "was stopped by " + internal::SignalName(sig), 128 + sig);
      router_.Note("received " + internal::SignalName(sig) + "; forwarding it to " + Plural(RunningCount(), "rank") +
                   " (SIGKILL after " + Seconds(options_.grace_period) + ")");
      stopping_ = true;
      StopAll(sig);
      kill_at_ = Clock::now() + options_.grace_period;
    } else if (!killed_) {
      router_.Note("received " + internal::SignalName(sig) + " again; killing the ranks now");
      Escalate();
    }
  }

  void OnTemplateEvent(const internal::ForkTemplate::Event& event) {
    using Event = internal::ForkTemplate::Event;
    const bool known_rank = event.rank >= 0 && event.rank < static_cast<int>(ranks_.size());
    if (event.kind == Event::kForked && known_rank && !ranks_[event.rank].running) {
      RankProcess& p = ranks_[event.rank];
      p.child.pid = event.pid;
      p.child.pidfd = internal::OpenPidfd(event.pid);
      p.running = true;
      ++forked_;
      // The rank's own group (its pid) is watched before the rank can start anything: it waits for the template's
      // exit, which waits for ReleaseRanks. Until it leaves the template's group, that group's watch covers it.
      guard_.Watch(event.pid);
      if (forked_ == static_cast<int>(ranks_.size())) template_->ReleaseRanks();
      if (stopping_) Kill(p, killed_ ? SIGKILL : SIGTERM);
    } else if (event.kind == Event::kReady && known_rank && ranks_[event.rank].running) {
      ranks_[event.rank].ready = true;
    } else if (event.kind == Event::kFailed) {
      template_failure_ = event.text;
    } else if (event.kind == Event::kClosed) {
      template_socket_open_ = false;
    }
  }

  // Fork start: the template's exit, and what it said. A template that dies before forking every rank fails the
  // attempt as rank 0 (whose environment and output it had); one that exits 0 without forking never reached its
  // fork point, and a refusal ('X') is a usage error: both are thrown, as a rank that cannot be exec'd is.
  void ReapTemplate() {
    int status = 0;
    const pid_t r = ::waitpid(template_->process().pid, &status, WNOHANG);
    if (r != template_->process().pid) return;
    template_running_ = false;
    RankExit exit;
    exit.rank = 0;
    if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
    template_exit_ = exit;
    // What it said before exiting is already queued on the socket, but its exit may be seen first: read it all.
    while (template_socket_open_) {
      const internal::ForkTemplate::Event event = template_->Read();
      if (event.kind == internal::ForkTemplate::Event::kNothing) break;
      OnTemplateEvent(event);
    }
    if (!template_failure_.empty()) {
      LAKERUN_THROW(ConfigError, "launch --start-method fork: ", template_failure_);
    }
    if (forked_ == static_cast<int>(ranks_.size()) || stopping_) return;
    if (exit.signal == 0 && exit.exit_code == 0) {
      LAKERUN_THROW(ConfigError, "launch --start-method fork: ", options_.command.front(), " exited with code 0 ",
                    "without reaching its fork point (lakerun::dist::Init(), lakerun::launch::MaybeRunRank() or ",
                    "lakerun::ForkPoint()), so no rank was started; fork start needs a C++ program on ",
                    "lakerun, any other program runs with --start-method exec");
    }
    exit.rank = Global(0);
    outcome_.end = AttemptEnd::kFailure;
    outcome_.failure = exit;
    PublishLocal(0, template_->process().pid, exit.Describe() + " before its fork point",
                 exit.signal != 0 ? 128 + exit.signal : exit.exit_code);
    router_.Note("rank " + std::to_string(exit.rank) + " " + exit.Describe() +
                 " before its fork point (as the fork-start template)" +
                 (forked_ > 0 ? "; stopping the " + Plural(forked_, "rank") + " already forked" : ""));
    BeginStop();
  }

  // Reaps `p` if it has exited; the first failure stops the others.
  void Reap(RankProcess& p) {
    // Peek first: while the leader is an unreaped zombie its process-group id cannot be reused, so killing
    // what is left of its group (the rank's own children) cannot hit an unrelated process.
    siginfo_t info;
    std::memset(&info, 0, sizeof(info));
    if (::waitid(P_PID, static_cast<id_t>(p.child.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != p.child.pid) {
      return;
    }
    Kill(p, SIGKILL);
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(p.child.pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r != p.child.pid) return;
    p.running = false;
    p.status = status;
    CloseFd(p.child.pidfd);
    RankExit exit;
    exit.rank = Global(p.rank);
    if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
    p.exit = exit;
    const bool failed = exit.signal != 0 || exit.exit_code != 0;
    if (failed && !stopping_) {
      outcome_.end = AttemptEnd::kFailure;
      outcome_.failure = exit;
      const std::string held_up = HeldUpBy(p);
      if (!held_up.empty()) outcome_.hang = exit.Describe() + held_up;
      PublishLocal(p.rank, p.child.pid, exit.Describe() + held_up,
                   exit.signal != 0 ? 128 + exit.signal : exit.exit_code, !held_up.empty());
      const int others = RunningCount();
      router_.Note("rank " + std::to_string(exit.rank) + " " + exit.Describe() + held_up +
                   (others > 0 ? "; stopping the other " + Plural(others, "rank") + " (SIGTERM, SIGKILL after " +
                                     Seconds(options_.grace_period) + ")"
                               : ""));
      BeginStop();
    }
  }

  // Closes what is left of the pipes and collects every rank's exit.
  AttemptOutcome Conclude() {
    for (auto& p : ranks_) {
      for (int s = 0; s < 2; ++s) {
        if (p.fds[s] >= 0) {
          router_.Finish(p.rank, static_cast<internal::Stream>(s));
          CloseFd(p.fds[s]);
        }
      }
    }
    AttemptOutcome outcome = outcome_;
    for (const auto& p : ranks_) outcome.exits.push_back(p.exit);
    // Fork start: a template that died before forking rank 0 was rank 0 (its environment, and any run it started).
    if (!outcome.exits.empty() && !outcome.exits[0] && ranks_[0].child.pid <= 0) outcome.exits[0] = template_exit_;
    return outcome;
  }
  const LaunchOptions& options_;
  internal::OutputRouter& router_;
  internal::SignalWatch& signals_;
  internal::OrphanGuard& guard_;
  internal::NodeGroup* group_;
  internal::HangWatch& hang_;
  // Threads that started ranks (Spawn), parked until the destructor releases and joins them.
  std::vector<std::thread> spawners_;
  std::mutex spawn_mu_;
  std::condition_variable spawn_cv_;
  int spawners_done_ = 0;
  bool release_spawners_ = false;
  std::vector<RankProcess> ranks_;
  // Fork start only.
  std::unique_ptr<internal::ForkTemplate> template_;
  bool template_running_ = false;
  bool template_socket_open_ = true;
  int forked_ = 0;
  std::string template_failure_;
  std::optional<RankExit> template_exit_;  // once reaped, as rank 0
  // Supervise's state.
  std::optional<Clock::time_point> attempt_deadline_;  // --timeout
  std::optional<Clock::time_point> kill_at_;           // SIGKILL escalation
  std::optional<Clock::time_point> give_up_at_;        // bounded wait after SIGKILL
  std::optional<Clock::time_point> drain_until_;       // bounded drain after every rank exited
  bool stopping_ = false;
  bool killed_ = false;
  AttemptOutcome outcome_;
  std::array<char, 65536> buffer_;
};

// LaunchOptions::after_attempt, whose failure is a warning: the job's outcome is the ranks'.
void AfterAttempt(const LaunchOptions& options, int attempt, const std::vector<std::optional<RankExit>>& exits,
                  internal::OutputRouter& router) {
  if (!options.after_attempt) return;
  AttemptReport report;
  report.attempt = attempt;
  report.exits = exits;
  try {
    for (const std::string& line : options.after_attempt(report)) router.Note(line);
  } catch (const std::exception& e) {
    router.Note("warning: after attempt " + std::to_string(attempt) + ": " + e.what());
  }
}

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void AppendStderrTail(int rank, const std::vector<std::string>& tail, std::string* report) {
  if (tail.empty()) {
    *report += "\n[lakerun] rank " + std::to_string(rank) + " wrote nothing to stderr";
    return;
  }
  *report += "\n[lakerun] last lines of rank " + std::to_string(rank) + "'s stderr:";
  for (const auto& line : tail) *report += "\n[lakerun]   | " + line;
}

void CheckOptions(const LaunchOptions& options) {
  LAKERUN_CHECK_AS(ConfigError, options.processes >= 1, "launch: -n/--processes must be at least 1, got ",
                   options.processes);
  LAKERUN_CHECK_AS(ConfigError, !options.command.empty(),
                   "launch: no program given (expected `-- PROGRAM [ARGS...]`)");
  LAKERUN_CHECK_AS(ConfigError, options.grace_period.count() >= 0, "launch: --grace-period must not be negative, got ",
                   options.grace_period.count(), " ms");
  LAKERUN_CHECK_AS(ConfigError, options.max_restarts >= 0, "launch: --max-restarts must not be negative, got ",
                   options.max_restarts);
  LAKERUN_CHECK_AS(ConfigError, options.timeout.count() >= 0, "launch: --timeout must not be negative");
  const bool at_rendezvous = options.node_rank == kNodeRankAtRendezvous && options.nnodes > 1;
  LAKERUN_CHECK_AS(ConfigError,
                   options.nnodes >= 1 && (at_rendezvous || (options.node_rank >= 0 && options.node_rank < options.nnodes)),
                   "launch: --node-rank ", options.node_rank, " is outside 0..", options.nnodes - 1);
  LAKERUN_CHECK_AS(ConfigError, options.nnodes == 1 || options.master_port > 0, "launch: --nnodes ", options.nnodes,
                   " needs --master-port, the same on every node");
}

// --use-gpu: one visible GPU per rank, `*n` capped to the visible ones (with a warning). Empty without --use-gpu.
std::vector<std::string> ChooseGpus(const LaunchOptions& options, int* n) {
  if (!options.use_gpu) return {};
  VisibleGpus visible = DetectVisibleGpus();
  if (visible.ids.empty()) {
    LAKERUN_THROW(ConfigError, "launch: --use-gpu: no GPU is visible (CUDA_VISIBLE_DEVICES ",
                  std::getenv("CUDA_VISIBLE_DEVICES") ? "= '" + std::string(std::getenv("CUDA_VISIBLE_DEVICES")) + "'"
                                                      : std::string("unset"),
                  ", no /proc/driver/nvidia/gpus entries, `nvidia-smi -L` lists none); run without --use-gpu "
                  "for CPU ranks");
  }
  if (*n > static_cast<int>(visible.ids.size())) {
    internal::WriteAll(options.stderr_fd,
                       "[lakerun] warning: -n " + std::to_string(*n) + " is more than the " +
                           Plural(static_cast<int>(visible.ids.size()), "GPU") + " visible (from " + visible.source +
                           "); starting " + Plural(static_cast<int>(visible.ids.size()), "rank") +
                           ", one per GPU\n");
    *n = static_cast<int>(visible.ids.size());
  }
  return std::vector<std::string>(visible.ids.begin(), visible.ids.begin() + *n);
}

// What the ranks of one attempt of this node share, for their environments.
struct RankEnvBase {
  std::vector<std::string> inherited;
  std::vector<std::string> gpus;
  int first_rank = 0;
  int node_rank = 0;
  int world = 1;
  int cores = 1;
  bool console_is_terminal = false;
  std::string run_id;
  const internal::HangWatch* hang = nullptr;
};

std::vector<std::vector<std::string>> RankEnvironments(const LaunchOptions& options, const RankEnvBase& base,
                                                       int attempt, int n, const internal::HostedStore& store) {
  std::vector<std::vector<std::string>> envs;
  for (int rank = 0; rank < n; ++rank) {
    internal::RankEnvSpec spec;
    spec.rank = base.first_rank + rank;
    spec.local_rank = rank;
    spec.world_size = base.world;
    spec.local_world_size = n;
    spec.group_rank = base.node_rank;
    spec.group_world_size = options.nnodes;
    store.Describe(&spec);
    spec.restart_count = attempt;
    spec.max_restarts = options.max_restarts;
    spec.run_id = base.run_id;
    spec.gpu = base.gpus.empty() ? "" : base.gpus[rank];
    spec.cores = base.cores;
    spec.console_is_terminal = base.console_is_terminal;
    spec.extra = options.extra_env;
    for (auto& [key, value] : base.hang->RankEnvironment(rank)) spec.extra[key] = value;
    envs.push_back(internal::BuildRankEnvironment(base.inherited, spec));
  }
  return envs;
}

// What happened to the attempt's failed rank: its exit, or the hang it was blamed for.
std::string LocalCause(const AttemptOutcome& outcome) {
  return outcome.hang.empty() ? outcome.failure.Describe() : outcome.hang;
}

// One node: the first failure of the last attempt, with the last lines of the rank's stderr.
void ReportFailure(const LaunchOptions& options, int attempt, int n, const AttemptOutcome& outcome,
                   internal::OutputRouter& router, LaunchResult* result) {
  const RankExit& failure = outcome.failure;
  result->failure = failure;
  result->failure_stderr_tail = router.StderrTail(failure.rank);
  result->exit_code = failure.signal != 0 ? 128 + failure.signal : failure.exit_code;
  result->hung = !outcome.hang.empty();
  result->failure_report = "rank " + std::to_string(failure.rank) + " " + LocalCause(outcome);
  std::string report = "error: " + result->failure_report + " (first failure of " + Plural(n, "rank");
  if (options.max_restarts > 0) report += ", after " + Plural(attempt, "restart");
  report += "); exit code " + std::to_string(result->exit_code);
  AppendStderrTail(failure.rank, result->failure_stderr_tail, &report);
  router.Note(report);
}

internal::OutputRouter::Options RouterOptions(const LaunchOptions& options, int n, int first_rank, bool live) {
  internal::OutputRouter::Options router;
  router.ranks = n;
  router.first_rank = first_rank;
  router.stdout_fd = options.stdout_fd;
  router.stderr_fd = options.stderr_fd;
  router.show_ranks = options.show_ranks;
  router.log_dir = options.log_dir;
  router.live = live;
  return router;
}

// This agent, stopped by `sig` while it waited for the other nodes.
internal::NodeFailure AgentStopped(const internal::NodeGroup& group, int sig) {
  const std::string cause = "was stopped by " + internal::SignalName(sig);
  return {group.node_rank(), group.host(), -1, static_cast<int>(::getpid()), cause, 128 + sig};
}

void ReportTiming(Clock::time_point started, Clock::time_point store_ready, int n, internal::OutputRouter& router) {
  const auto ms = [&](Clock::time_point t) { return std::chrono::duration<double, std::milli>(t - started).count(); };
  const Clock::time_point all_exec = Clock::now();
  const int64_t main_realtime =
      RealtimeNs() - std::chrono::duration_cast<std::chrono::nanoseconds>(all_exec - started).count();
  char line[256];
  std::snprintf(line, sizeof(line),
                "timing: launcher_start_realtime_ns=%lld store_ready_ms=%.3f all_ranks_execed_ms=%.3f ranks=%d",
                static_cast<long long>(main_realtime), ms(store_ready), ms(all_exec), n);
  router.Note(line);
}

// A job of several nodes: this launcher joins the others as its node's agent (nullptr for one node).
std::unique_ptr<internal::NodeGroup> JoinNodes(const LaunchOptions& options, int n, internal::HostedStore& store) {
  if (options.nnodes == 1) return nullptr;
  internal::NodeGroupOptions group;
  group.nnodes = options.nnodes;
  group.node_rank = store.node_rank;
  group.nproc = n;
  group.rdzv_id = options.rdzv_id;
  group.store_address = options.master_addr + ":" + std::to_string(options.master_port);
  group.join_timeout = options.join_timeout;
  group.heartbeat_timeout = options.heartbeat_timeout;
  return std::make_unique<internal::NodeGroup>(group, store.agents());
}

// Leaves the node group however Launch ends; an agent that ends by an exception first tells the others, so they
// stop at once instead of waiting for its heartbeat to go quiet.
struct NodeLeaver {
  internal::NodeGroup* group;
  ~NodeLeaver() {
    if (group == nullptr) return;
    try {
      if (std::uncaught_exceptions() > 0) {
        group->Publish({group->node_rank(), group->host(), -1, static_cast<int>(::getpid()),
                        "stopped with an error (see its output)", 1});
        group->AgreedFailure();
      }
      group->Leave();
    } catch (const std::exception&) {
      // The others find this agent lost through its heartbeat.
    }
  }
};

// The failure every node reports for the attempt: the first one published in the store, else this node's own.
internal::NodeFailure NodeFailureOf(const AttemptOutcome& outcome, internal::NodeGroup& group) {
  if (std::optional<internal::NodeFailure> agreed = group.AgreedFailure()) return *agreed;
  if (outcome.peer) return *outcome.peer;
  const RankExit& exit = outcome.failure;
  return {group.node_rank(), group.host(), exit.rank, 0, LocalCause(outcome),
          exit.signal != 0 ? 128 + exit.signal : exit.exit_code, !outcome.hang.empty()};
}

// Every node's agent decides alike from the agreed failure: restart the whole job after a rank's failure while
// --max-restarts allows; never after a lost agent (it does not come back).
bool RestartNodes(const LaunchOptions& options, int attempt, int world, const AttemptOutcome& outcome,
                  internal::NodeGroup& group, internal::OutputRouter& router) {
  const internal::NodeFailure failure = NodeFailureOf(outcome, group);
  if (failure.rank < 0 || attempt >= options.max_restarts) return false;
  const std::string message = "restarting all " + Plural(world, "rank") + " of " + Plural(options.nnodes, "node") +
                              " (restart " + std::to_string(attempt + 1) + " of " +
                              std::to_string(options.max_restarts) + ") after: " + failure.Describe();
  router.Note(message);
  router.NoteInLogs(message);
  return true;
}

void ReportNodeFailure(const LaunchOptions& options, int attempt, int world, const AttemptOutcome& outcome,
                       internal::NodeGroup& group, internal::OutputRouter& router, LaunchResult* result) {
  const internal::NodeFailure failure = NodeFailureOf(outcome, group);
  result->exit_code = failure.exit_code;
  result->failure_node = failure.node;
  result->failure_report = failure.Describe();
  result->hung = failure.hang;
  std::string report = "error: " + failure.Describe() + " (first failure of " + Plural(world, "rank") + " on " +
                       Plural(options.nnodes, "node");
  if (options.max_restarts > 0) report += ", after " + Plural(attempt, "restart");
  report += "); exit code " + std::to_string(result->exit_code);
  const bool local = outcome.end == AttemptEnd::kFailure && failure.node == group.node_rank() &&
                     failure.rank == outcome.failure.rank;
  if (local) {
    result->failure = outcome.failure;
    result->failure_stderr_tail = router.StderrTail(failure.rank - group.first_rank());
    AppendStderrTail(failure.rank, result->failure_stderr_tail, &report);
  } else if (failure.rank >= 0 && failure.node != group.node_rank()) {
    report += "\n[lakerun] its output is in node " + std::to_string(failure.node) + "'s launcher output";
  }
  router.Note(report);
}

}  // namespace

LaunchResult Launch(const LaunchOptions& options) {
  const Clock::time_point started = options.started_at.value_or(Clock::now());
  CheckOptions(options);

  int n = options.processes;
  const std::vector<std::string> gpus = ChooseGpus(options, &n);
  const std::string path = internal::ResolveProgram(options.command.front());

  internal::HostedStore store = internal::HostStore(options);
  std::unique_ptr<internal::NodeGroup> group = JoinNodes(options, n, store);
  const int first_rank = group ? group->first_rank() : 0;
  const int world = group ? group->world_size() : n;
  for (int r : options.show_ranks) {
    LAKERUN_CHECK_AS(ConfigError, r >= 0 && r < world, "launch: --ranks: rank ", r, " is outside 0..", world - 1);
  }
  const Clock::time_point store_ready = Clock::now();

  LaunchResult result;
  result.run_id = !options.run_id.empty() ? options.run_id
                  : group                 ? options.rdzv_id  // as torchrun: the same on every node
                                          : internal::RandomRunId();
  result.processes = n;
  RankEnvBase rank_env;
  rank_env.inherited = internal::CurrentEnvironment();
  rank_env.gpus = gpus;
  rank_env.first_rank = first_rank;
  rank_env.node_rank = group ? group->node_rank() : 0;
  rank_env.world = world;
  rank_env.cores = internal::AvailableCores();
  // Progress bars: ranks draw one when the launcher's console is a terminal, and the router shows it live.
  rank_env.console_is_terminal = ::isatty(options.stderr_fd) == 1;
  rank_env.run_id = result.run_id;
  internal::HangWatch hang({n, first_rank, rank_env.node_rank, options.hang_timeout});
  rank_env.hang = &hang;
  internal::OutputRouter router(RouterOptions(options, n, first_rank, rank_env.console_is_terminal));
  internal::SignalWatch signals(options.forward_signals, options.take_signal_handlers);
  internal::OrphanGuard guard;
  const bool report_timing = std::getenv("LAKERUN_LAUNCH_TIMING") != nullptr;
  // A signal that arrives while the agent waits for the other nodes (between attempts, or after its ranks ended).
  int waiting_signal = 0;
  const auto interrupted = [&] {
    if (waiting_signal == 0) waiting_signal = signals.Take();
    return waiting_signal != 0;
  };
  NodeLeaver leaver{group.get()};

  for (int attempt = 0;; ++attempt) {
    AttemptOutcome outcome;
    if (group) outcome.peer = group->BeginAttempt(attempt, interrupted);
    if (outcome.peer) {
      outcome.end = AttemptEnd::kPeerFailure;
    } else if (waiting_signal == 0) {
      const std::vector<std::vector<std::string>> envs = RankEnvironments(options, rank_env, attempt, n, store);
      router.ResetTails();
      hang.BeginAttempt();
      Attempt run(options, router, signals, guard, group.get(), hang);
      run.Spawn(path, envs);
      if (report_timing && attempt == 0) ReportTiming(started, store_ready, n, router);
      outcome = run.Supervise();
      AfterAttempt(options, attempt, outcome.exits, router);
      if (outcome.end == AttemptEnd::kSuccess && group) {
        outcome.peer = group->FinishAttempt(interrupted);
        if (outcome.peer) outcome.end = AttemptEnd::kPeerFailure;
      }
    }
    if (waiting_signal != 0 && outcome.end != AttemptEnd::kPeerFailure) {
      outcome.end = AttemptEnd::kInterrupted;
      outcome.signal = waiting_signal;
      if (group) group->Publish(AgentStopped(*group, waiting_signal));
    }
    result.restarts = attempt;
    switch (outcome.end) {
      case AttemptEnd::kSuccess:
        result.exit_code = 0;
        return result;
      case AttemptEnd::kInterrupted:
        if (group) group->AgreedFailure();  // the other nodes learn it before this agent leaves
        result.interrupted_by = outcome.signal;
        result.exit_code = 128 + outcome.signal;
        router.Note("stopped by " + internal::SignalName(outcome.signal) + "; exit code " +
                    std::to_string(result.exit_code));
        return result;
      case AttemptEnd::kTimedOut:
        if (group) group->AgreedFailure();
        result.timed_out = true;
        result.exit_code = 124;
        router.Note("error: timed out after " + Seconds(options.timeout) + "; exit code 124");
        return result;
      case AttemptEnd::kFailure:
      case AttemptEnd::kPeerFailure:
        break;
    }
    if (group) {
      if (RestartNodes(options, attempt, world, outcome, *group, router)) continue;
      ReportNodeFailure(options, attempt, world, outcome, *group, router, &result);
      return result;
    }
    const std::string cause = "rank " + std::to_string(outcome.failure.rank) + " " + LocalCause(outcome);
    if (attempt < options.max_restarts) {
      const std::string message = "restarting all " + Plural(n, "rank") + " (restart " + std::to_string(attempt + 1) +
                                  " of " + std::to_string(options.max_restarts) + ") after: " + cause;
      router.Note(message);
      router.NoteInLogs(message);
      continue;
    }
    ReportFailure(options, attempt, n, outcome, router, &result);
    return result;
  }
}

}  // namespace lakerun::launch
