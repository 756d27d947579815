// lakerun::launch::Launch — start N ranks of a program on this machine and supervise them.
//
// This is the engine behind `lakerun launch` (docs/launch.md) and lakerun::launch::Run (function.h):
//  - hosts the rendezvous store (lakerun/rdzv/store_server.h) before any rank starts, with the job's secret
//    (lakerun/rdzv/secret.h), and gives every rank torchrun's environment (rank_env.h lists it) plus the secret, so
//    unmodified torchrun programs, C++ or Python, run as they are (Python ranks through the compatibility listener);
//  - starts each rank with vfork+exec (no shell) in its own process group, with PR_SET_PDEATHSIG(SIGKILL), so no
//    rank outlives the launcher even when the launcher is SIGKILLed;
//  - prefixes every output line with "[rankN] " (stdout to stdout, stderr to stderr), optionally also writing
//    one raw file per rank and stream;
//  - fails fast: the first rank that exits non-zero or dies by a signal is named with its cause and the last lines
//    of its stderr; the others get SIGTERM, then SIGKILL after the grace period; SIGINT/SIGTERM sent to the
//    launcher are forwarded the same way;
//  - restarts the whole group up to max_restarts times.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lakerun::rdzv {
class StoreServer;
}

namespace lakerun::launch {

/// The open loopback listener for ranks whose store client cannot authenticate (--rdzv-compat): c10d's TCPStore,
/// i.e. unmodified PyTorch programs. It is a store of its own: lakerun ranks never read its keys, so what a local
/// user writes there reaches only those ranks, as it would under torchrun.
enum class RdzvCompat {
  /// On when the store's address is loopback (single-node jobs), else off.
  kAuto,
  /// On; refused unless the store's address is loopback.
  kOn,
  /// Off: every rank must authenticate (lakerun programs only).
  kOff,
};

/// How the ranks' processes come to be (--start-method).
enum class StartMethod {
  /// PROGRAM is exec'd once per rank: works for any program, C++ or Python.
  kExec,
  /// PROGRAM is exec'd once, as a template, and the ranks are forked from it when it reaches its fork point
  /// (lakerun::dist::Init(), lakerun::launch::MaybeRunRank() or lakerun::ForkPoint(); see lakerun/base/fork_point.h):
  /// libraries are loaded once instead of once per rank. For C++ programs on lakerun only.
  kFork,
};

/// How one rank ended.
struct RankExit {
  int rank = -1;
  int exit_code = 0;  ///< valid when signal == 0
  int signal = 0;     ///< the signal that killed it, or 0
  /// "exit code 3", "killed by signal 9 (SIGKILL), likely out of memory", ...
  std::string Describe() const;
};

/// How one attempt ended, for LaunchOptions::after_attempt.
struct AttemptReport {
  /// The attempt, 0 first: its ranks' LAKERUN_RESTART_COUNT.
  int attempt = 0;
  /// How each rank ended, by rank. With --start-method fork, a template that died before forking rank 0 ended as
  /// rank 0. nullopt for a rank that never started, or that did not exit after SIGKILL and was given up on.
  std::vector<std::optional<RankExit>> exits;
};

/// LaunchOptions::node_rank of an agent whose node rank the rendezvous assigns (torchrun's c10d backend without
/// --node-rank): the agent that can listen at --master-addr:--master-port hosts the store and is node 0; the others
/// are numbered 1, 2, ... in the order they join.
inline constexpr int kNodeRankAtRendezvous = -1;

struct LaunchOptions {
  /// Number of ranks to start on this machine (-n). Must be >= 1.
  int processes = 1;
  /// PROGRAM and its arguments. A PROGRAM without '/' is looked up in PATH.
  std::vector<std::string> command;
  /// Time between SIGTERM and SIGKILL when stopping ranks (--grace-period).
  std::chrono::milliseconds grace_period{std::chrono::seconds(5)};
  /// How ranks start (--start-method exec|fork).
  StartMethod start_method = StartMethod::kExec;
  /// Whole-group restarts after a failure (--max-restarts).
  int max_restarts = 0;
  /// Ranks whose output reaches the console (--ranks); empty = all. Log files always get every rank.
  std::vector<int> show_ranks;
  /// If set, DIR/rank<N>.stdout and DIR/rank<N>.stderr receive each rank's raw output (all attempts appended).
  std::string log_dir;
  /// One GPU per rank via CUDA_VISIBLE_DEVICES (gpu.h); -n above the visible GPUs is capped with a warning.
  bool use_gpu = false;
  /// Address the store listens for (MASTER_ADDR). On a job of several nodes: node 0's address, which every node
  /// reaches.
  std::string master_addr = "127.0.0.1";
  /// The store's port (MASTER_PORT); 0 = a free one (one node only: every node of a job of several must name it).
  int master_port = 0;
  /// Nodes of the job (--nnodes), each running one launcher, its node agent (docs/launch.md, "Many nodes"). 1: this
  /// launcher is the whole job.
  int nnodes = 1;
  /// This node's rank, 0..nnodes-1 (--node-rank), or kNodeRankAtRendezvous. Node 0's agent hosts the store; ranks
  /// are numbered in node order.
  int node_rank = 0;
  /// The job's id (--rdzv-id): every node of a job must give the same one; a node with another is refused.
  std::string rdzv_id = "none";
  /// Bounds the wait for every node's agent to join (and to start each attempt together).
  std::chrono::milliseconds join_timeout{std::chrono::seconds(300)};
  /// An agent (or the store) not heard from for this long is lost: the job stops, naming its node.
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(15)};
  /// Run id (TORCHELASTIC_RUN_ID / LAKERUN_RUN_ID); empty = a random one.
  std::string run_id;
  /// Wall-clock limit of each attempt; zero = none. A job that runs past it fails with exit code 124.
  std::chrono::milliseconds timeout{0};
  /// Hang detection (--hang-timeout; zero turns it off): when some ranks have waited this long in a collective while
  /// another made no progress and did no work (CPU, I/O) for as long, the job fails with exit code 124, naming that
  /// rank (node, pid, state, the collective it last entered) and printing its stacks. Ranks on lakerun::dist report their collectives; other
  /// programs are not judged.
  std::chrono::milliseconds hang_timeout{std::chrono::seconds(60)};
  /// Extra variables for every rank (override the inherited environment, not the launcher's own variables).
  std::map<std::string, std::string> extra_env;
  /// Forward SIGINT/SIGTERM received by this process to the ranks (only signals whose disposition is default).
  bool forward_signals = true;
  /// With forward_signals, also forward SIGINT/SIGTERM when this process has a handler of its own for them (an
  /// interpreter's, like Python's SIGINT handler): the handler is set aside while Launch runs and put back before it
  /// returns, and the caller, seeing LaunchResult::interrupted_by, delivers the signal to it as it sees fit. An
  /// ignored signal stays ignored. Several launches at once: the first one's choice holds until the last returns.
  bool take_signal_handlers = false;
  /// Where prefixed output goes.
  int stdout_fd = 1;
  int stderr_fd = 2;
  /// File holding the rendezvous secret (--rdzv-secret-file). Empty: LAKERUN_RDZV_SECRET or
  /// LAKERUN_RDZV_SECRET_FILE from the environment, else a secret generated for this job.
  std::string rdzv_secret_file;
  /// The compatibility listener for c10d TCPStore clients (--rdzv-compat).
  RdzvCompat rdzv_compat = RdzvCompat::kAuto;
  /// A store the caller already started (the function API), and the secret it requires; nullptr = Launch starts its
  /// own. The compatibility listener opens beside either (the Python function API's ranks call
  /// torch.distributed.init_process_group(), whose TCPStore client cannot authenticate).
  rdzv::StoreServer* store = nullptr;
  std::string store_secret;
  /// steady_clock time the launcher started, for the timing line (LAKERUN_LAUNCH_TIMING=1); default = Launch entry.
  std::optional<std::chrono::steady_clock::time_point> started_at;
  /// Called on the launcher's thread once every rank of an attempt is gone, before the group restarts or Launch
  /// returns: the `lakerun` command ends there the tracking runs a rank left RUNNING when it died. The lines it
  /// returns are printed as the launcher's notes; an exception it throws is printed as a warning, and the launch goes
  /// on as if it had returned nothing.
  std::function<std::vector<std::string>(const AttemptReport&)> after_attempt;
};

struct LaunchResult {
  /// What `lakerun launch` exits with: 0; the first failed rank's exit code; 128+signal if it died by a signal or
  /// the launcher was stopped by one; 124 on timeout or a hang.
  int exit_code = 0;
  /// Restarts performed; the last attempt ran with TORCHELASTIC_RESTART_COUNT == restarts.
  int restarts = 0;
  /// The first failure of the last attempt (absent on success or when the launcher was interrupted).
  std::optional<RankExit> failure;
  /// On a job of several nodes: the node of that failure (this node's when it was local), and the whole report as
  /// printed ("node 1 (10.0.0.2), rank 3 (pid 812) was killed by signal 9 ..."); also set when the failure was an
  /// agent that was lost.
  int failure_node = -1;
  std::string failure_report;
  /// Last lines of the failed rank's stderr.
  std::vector<std::string> failure_stderr_tail;
  /// Signal that stopped the launcher (SIGINT/SIGTERM), or 0.
  int interrupted_by = 0;
  bool timed_out = false;
  /// The last attempt hung (LaunchOptions::hang_timeout): `failure` is the rank blamed, `failure_report` says why.
  bool hung = false;
  /// The run id the ranks saw.
  std::string run_id;
  /// The number of ranks actually started (after the GPU cap).
  int processes = 0;
};

/// Runs the job to completion. Throws ConfigError for bad options (naming the option), IoError if a
/// rank cannot be started; rank failures are reported in the result, not thrown.
LaunchResult Launch(const LaunchOptions& options);

}  // namespace lakerun::launch
