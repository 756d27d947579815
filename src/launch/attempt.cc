#include "launch/attempt.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <system_error>

#include "lakerun/base/error.h"
#include "launch/proc_inspect.h"

namespace lakerun::launch::internal {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

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

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Attempt::Attempt(const LaunchOptions& options, OutputRouter& router, SignalWatch& signals, OrphanGuard& guard,
                 NodeGroup* group, HangWatch& hang)
    : options_(options), router_(router), signals_(signals), guard_(guard), group_(group), hang_(hang) {}

Attempt::~Attempt() {
  // Only reached with live ranks when an exception escapes: never leave them behind (bounded wait).
  for (auto& p : ranks_) {
    if (p.running) Kill(p, SIGKILL);
  }
  const auto deadline = Clock::now() + kReapAfterKill;
  if (template_running_) {
    KillGroup(template_->process().pid, SIGKILL);
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

void Attempt::Spawn(const std::string& path, const std::vector<std::vector<std::string>>& envs) {
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
        SpawnRequest request;
        request.path = path;
        request.argv = options_.command;
        request.env = envs[rank];
        request.stdout_fd = child_ends[rank][0];
        request.stderr_fd = child_ends[rank][1];
        request.register_fd = guard_.registration_fd();  // the child registers its group itself, before exec
        ranks_[rank].child = SpawnInOwnGroup(request);
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

void Attempt::SpawnTemplate(const std::string& path, const std::vector<std::vector<std::string>>& envs) {
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
  template_ = std::make_unique<ForkTemplate>(path, options_.command, envs, std::move(child_ends),
                                                       guard_.registration_fd());
  template_running_ = true;
  ::fcntl(template_->socket(), F_SETFL, O_NONBLOCK);
  template_->Flush();
}

void Attempt::Kill(const RankProcess& p, int sig) {
  if (p.ready) {
    KillGroup(p.child.pid, sig);
  } else if (p.child.pid > 0) {
    ::kill(p.child.pid, sig);
  }
}

AttemptOutcome Attempt::Supervise() {
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

void Attempt::WatchPeers() {
  if (group_ == nullptr || stopping_) return;
  std::optional<NodeFailure> failure = group_->Failure();
  if (failure && failure->node == group_->node_rank() && failure->hang && failure->rank >= Global(0) &&
      failure->rank < Global(static_cast<int>(ranks_.size()))) {
    const RankObservation blamed{failure->rank, failure->node, failure->pid, {},
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

std::vector<LocalRank> Attempt::LocalRanks() const {
  std::vector<LocalRank> ranks;
  for (const auto& p : ranks_) ranks.push_back({p.child.pid, !p.running && p.exit.has_value()});
  return ranks;
}

std::vector<RankObservation> Attempt::ObserveWorld() {
  std::vector<RankObservation> world = hang_.Observe(LocalRanks());
  if (group_ != nullptr) {
    group_->ShareProgress(EncodeObservations(world));
    for (const auto& [text, age] : group_->PeerProgress()) {
      for (RankObservation& r : DecodeObservations(text)) {
        r.progress.quiet += age;  // as quiet as it was then, and as long since
        world.push_back(r);
      }
    }
  }
  return world;
}

void Attempt::WatchForHangs() {
  if (stopping_ || ranks_.empty() || !hang_.Due()) return;
  const std::vector<RankObservation> world = ObserveWorld();
  if (group_ != nullptr && group_->node_rank() != 0) return;
  const std::optional<HangVerdict> verdict = JudgeHang(world, hang_.timeout());
  if (!verdict) return;
  const bool deadlock = verdict->culprits.empty();
  const RankObservation& blamed = deadlock ? verdict->waiting.front() : verdict->culprits.front();
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

ProcessState Attempt::RankState(int local) const {
  const RankProcess& p = ranks_[static_cast<size_t>(local)];
  return p.running ? SampleProcess(p.child.pid).state : ProcessState::kExited;
}

void Attempt::ReportHang(const RankObservation& blamed, const std::string& cause,
                         const std::vector<RankObservation>& culprits) {
  outcome_.end = AttemptEnd::kFailure;
  outcome_.failure = RankExit{blamed.rank, kHangExitCode, 0};
  outcome_.hang = cause;
  PublishLocal(blamed.rank - Global(0), blamed.pid, cause, kHangExitCode, /*hang=*/true);
  router_.Note("rank " + std::to_string(blamed.rank) + " (pid " + std::to_string(blamed.pid) + ") " + cause);
  std::vector<int> others;
  for (size_t i = 1; i < culprits.size(); ++i) others.push_back(culprits[i].rank);
  if (!others.empty()) router_.Note("also behind: " + Plural(static_cast<int>(others.size()), "rank") + " (" +
                                    RankList(others) + ")");
  if (blamed.state != ProcessState::kExited && blamed.pid > 0) {
    router_.Note("stacks of rank " + std::to_string(blamed.rank) + " (pid " + std::to_string(blamed.pid) + "):");
    for (const std::string& line : CaptureStacks(blamed.pid, kStackBound)) router_.Note("  " + line);
  }
  router_.Note("stopping the " + Plural(RunningCount(), "rank") + " (SIGTERM, SIGKILL after " +
               Seconds(options_.grace_period) + ")");
  BeginStop();
}

std::string Attempt::HeldUpBy(const RankProcess& p) {
  if (!hang_.enabled()) return "";
  std::vector<RankObservation> world = ObserveWorld();
  auto self = std::find_if(world.begin(), world.end(),
                           [&](const RankObservation& r) { return r.rank == Global(p.rank); });
  if (self == world.end() || !self->progress.in_collective) return "";
  self->state = ProcessState::kUnknown;  // it waited, then exited: a waiter, not a culprit
  const milliseconds waited((self->progress.quiet.count() + 500) / 1000 * 1000);
  const std::optional<HangVerdict> verdict =
      JudgeHang(world, std::max(milliseconds(1000), waited / 2), Working::kIsNot);
  if (!verdict || verdict->culprits.empty()) return "";
  const RankObservation& culprit = verdict->culprits.front();
  return " after waiting " + Seconds(waited) + " in collective #" + std::to_string(self->progress.entered) +
         "; it was held up by rank " + std::to_string(culprit.rank) + " (pid " + std::to_string(culprit.pid) +
         (group_ != nullptr ? ", node " + std::to_string(culprit.node) : std::string()) + "), which " +
         verdict->DescribeCulprit(culprit);
}

void Attempt::PublishLocal(int local_rank, int pid, const std::string& cause, int exit_code, bool hang) {
  if (group_ == nullptr) return;
  NodeFailure failure;
  failure.node = group_->node_rank();
  failure.host = group_->host();
  failure.rank = local_rank < 0 ? -1 : Global(local_rank);
  failure.pid = pid;
  failure.cause = cause;
  failure.exit_code = exit_code;
  failure.hang = hang;
  group_->Publish(failure);
}

int Attempt::RunningCount() const {
  return static_cast<int>(
      std::count_if(ranks_.begin(), ranks_.end(), [](const RankProcess& p) { return p.running; }));
}

void Attempt::StopAll(int sig) {
  for (auto& p : ranks_) {
    if (p.running) Kill(p, sig);
    if (p.running && sig == SIGTERM) Kill(p, SIGCONT);
  }
  if (template_running_) KillGroup(template_->process().pid, sig);
}

void Attempt::BeginStop() {
  stopping_ = true;
  StopAll(SIGTERM);
  kill_at_ = Clock::now() + options_.grace_period;
}

void Attempt::Escalate() {
  StopAll(SIGKILL);
  killed_ = true;
  kill_at_.reset();
  give_up_at_ = Clock::now() + kReapAfterKill;
}

bool Attempt::Finished() {
  const bool any_running = RunningCount() > 0 || template_running_;
  const bool any_pipe =
      std::any_of(ranks_.begin(), ranks_.end(), [](const RankProcess& p) { return p.fds[0] >= 0 || p.fds[1] >= 0; });
  if (!any_running && !drain_until_) drain_until_ = Clock::now() + kDrainAfterExit;
  return !any_running && (!any_pipe || Clock::now() >= *drain_until_);
}

bool Attempt::GiveUpOnUnkillable() {
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

void Attempt::ApplyDeadlines() {
  if (kill_at_ && Clock::now() >= *kill_at_) Escalate();
  if (!stopping_ && attempt_deadline_ && Clock::now() >= *attempt_deadline_) {
    outcome_.end = AttemptEnd::kTimedOut;
    PublishLocal(-1, ::getpid(), "stopped the job: its ranks ran past --timeout " + Seconds(options_.timeout), 124);
    router_.Note("the ranks ran past --timeout " + Seconds(options_.timeout) + "; stopping " +
                 Plural(RunningCount(), "rank"));
    BeginStop();
  }
}

Attempt::PollSet Attempt::BuildPollSet() const {
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

int Attempt::WaitMs() const {
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

void Attempt::HandleReady(const PollSet& set) {
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

void Attempt::ReadOutput(RankProcess& p, int stream) {
  const ssize_t n = ::read(p.fds[stream], buffer_.data(), buffer_.size());
  if (n > 0) {
    router_.Feed(p.rank, static_cast<Stream>(stream),
                 std::string_view(buffer_.data(), static_cast<size_t>(n)));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    router_.Finish(p.rank, static_cast<Stream>(stream));
    CloseFd(p.fds[stream]);
  }
}

void Attempt::ServeTemplate(short revents) {
  if ((revents & POLLOUT) != 0) template_->Flush();
  // Drain every queued message first: an 'X' may sit behind 'F's when the template's exit is seen.
  while (template_socket_open_ && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    const ForkTemplate::Event event = template_->Read();
    if (event.kind == ForkTemplate::Event::kNothing) break;
    OnTemplateEvent(event);
  }
}

void Attempt::OnSignal() {
  const int sig = signals_.Take();
  if (sig == 0) return;
  if (!stopping_) {
    outcome_.end = AttemptEnd::kInterrupted;
    outcome_.signal = sig;
    PublishLocal(-1, ::getpid(), "was stopped by " + SignalName(sig), 128 + sig);
    router_.Note("received " + SignalName(sig) + "; forwarding it to " + Plural(RunningCount(), "rank") +
                 " (SIGKILL after " + Seconds(options_.grace_period) + ")");
    stopping_ = true;
    StopAll(sig);
    kill_at_ = Clock::now() + options_.grace_period;
  } else if (!killed_) {
    router_.Note("received " + SignalName(sig) + " again; killing the ranks now");
    Escalate();
  }
}

void Attempt::OnTemplateEvent(const ForkTemplate::Event& event) {
  using Event = ForkTemplate::Event;
  const bool known_rank = event.rank >= 0 && event.rank < static_cast<int>(ranks_.size());
  if (event.kind == Event::kForked && known_rank && !ranks_[event.rank].running) {
    RankProcess& p = ranks_[event.rank];
    p.child.pid = event.pid;
    p.child.pidfd = OpenPidfd(event.pid);
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

void Attempt::ReapTemplate() {
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
    const ForkTemplate::Event event = template_->Read();
    if (event.kind == ForkTemplate::Event::kNothing) break;
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

void Attempt::Reap(RankProcess& p) {
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

AttemptOutcome Attempt::Conclude() {
  for (auto& p : ranks_) {
    for (int s = 0; s < 2; ++s) {
      if (p.fds[s] >= 0) {
        router_.Finish(p.rank, static_cast<Stream>(s));
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

}  // namespace lakerun::launch::internal
