// lakerun::launch::Launch (launcher.h): the store, the node group on several nodes, the ranks' environments, then
// attempts (launch/attempt.h supervises one) until one succeeds, restarts run out, or the launcher is stopped; the
// final report.
#include "lakerun/launch/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <system_error>

#include "lakerun/base/error.h"
#include "lakerun/launch/gpu.h"
#include "launch/attempt.h"
#include "launch/hang_watch.h"
#include "launch/node_group.h"
#include "launch/orphan_guard.h"
#include "launch/output.h"
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

using internal::Attempt;
using internal::AttemptEnd;
using internal::AttemptOutcome;
using internal::Plural;
using internal::Seconds;

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
  const bool given = options.node_rank >= 0 && options.node_rank < options.nnodes;
  LAKERUN_CHECK_AS(ConfigError, options.nnodes >= 1 && (at_rendezvous || given), "launch: --node-rank ",
                   options.node_rank, " is outside 0..", options.nnodes - 1);
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
