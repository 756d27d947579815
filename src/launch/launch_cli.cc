// `lakerun launch` flags (CLI11) -> LaunchOptions -> Launch().
//
// Every flag of several words takes torchrun's two spellings (--nproc-per-node and --nproc_per_node), with its value
// after '=' or as the next argument. An unknown flag before the program is an error that names the nearest flag,
// never taken for the program.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "lakerun/base/choices.h"
#include "lakerun/base/error.h"
#include "lakerun/launch/command.h"
#include "lakerun/launch/launcher.h"

namespace lakerun::launch {
namespace {

std::vector<int> ParseRankList(const std::string& text) {
  std::vector<int> ranks;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    char* stop = nullptr;
    const long value = std::strtol(item.c_str(), &stop, 10);
    LAKERUN_CHECK_AS(ConfigError, !item.empty() && *stop == '\0' && value >= 0, "launch: --ranks: '", item,
                     "' is not a rank number (expected e.g. --ranks 0,2)");
    ranks.push_back(static_cast<int>(value));
    start = end + 1;
  }
  return ranks;
}

std::chrono::milliseconds FromSeconds(double seconds, const char* flag) {
  LAKERUN_CHECK_AS(ConfigError, std::isfinite(seconds) && seconds >= 0, "launch: ", flag,
                   " must be a non-negative number of seconds, got ", seconds);
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

// "--a-b,--a_b": both of torchrun's spellings of a long flag of several words.
std::string BothSpellings(const std::string& dashed) {
  std::string underscored = dashed;
  for (size_t i = 2; i < underscored.size(); ++i) {
    if (underscored[i] == '-') underscored[i] = '_';
  }
  return underscored == dashed ? dashed : dashed + "," + underscored;
}

// Throws ConfigError for `arg`, a flag the app does not know, naming the nearest one it does.
[[noreturn]] void UnknownFlag(const CLI::App& app, const std::string& arg) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    for (const std::string& name : option->get_snames()) flags.push_back("-" + name);
  }
  const std::string flag = arg.substr(0, arg.find('='));
  const std::optional<std::string> nearest = NearestName(flag, flags);
  LAKERUN_THROW(ConfigError, "launch: unknown flag '", flag, "'",
                nearest ? " (did you mean " + *nearest + "?)" : std::string(),
                "; see `lakerun launch --help`. The program's own flags go after it, or after `--`");
}

constexpr NamedValue<RdzvCompat> kRdzvCompatNames[] = {
    {RdzvCompat::kAuto, "auto"}, {RdzvCompat::kOn, "on"}, {RdzvCompat::kOff, "off"}};

// torchrun's --nnodes: N, or MIN:MAX with MIN == MAX (a fixed count; no elastic membership).
int ParseNnodes(const std::string& text) {
  const size_t colon = text.find(':');
  auto number = [&](const std::string& item) {
    char* stop = nullptr;
    const long value = std::strtol(item.c_str(), &stop, 10);
    LAKERUN_CHECK_AS(ConfigError, !item.empty() && *stop == '\0' && value >= 1 && value <= 1 << 20,
                     "launch: --nnodes '", text, "' is not a node count (expected N or N:N, N >= 1)");
    return static_cast<int>(value);
  };
  if (colon == std::string::npos) return number(text);
  const int min = number(text.substr(0, colon));
  const int max = number(text.substr(colon + 1));
  LAKERUN_CHECK_AS(ConfigError, min == max, "launch: --nnodes ", text, ": only a fixed number of nodes is supported "
                   "(N or N:N); nodes joining or leaving a running job (MIN < MAX) are not");
  return min;
}

// torchrun's --rdzv-endpoint HOST:PORT (or [V6]:PORT): where node 0's agent hosts the store.
void ApplyEndpoint(const std::string& endpoint, LaunchOptions& options) {
  const size_t colon = endpoint.rfind(':');
  LAKERUN_CHECK_AS(ConfigError, colon != std::string::npos && colon > 0, "launch: --rdzv-endpoint '", endpoint,
                   "' is not HOST:PORT");
  std::string host = endpoint.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = endpoint.substr(colon + 1);
  char* stop = nullptr;
  const long value = std::strtol(port.c_str(), &stop, 10);
  LAKERUN_CHECK_AS(ConfigError, !port.empty() && *stop == '\0' && value >= 1 && value <= 65535,
                   "launch: --rdzv-endpoint '", endpoint, "': port '", port, "' is not 1..65535");
  options.master_addr = host;
  options.master_port = static_cast<int>(value);
}

// The flags of a job of several nodes, checked together.
// Without --node-rank, one node is node 0 and several are numbered at the rendezvous.
void CheckNodes(LaunchOptions& options, bool standalone, bool master_port_given, bool node_rank_given) {
  if (!node_rank_given) options.node_rank = options.nnodes > 1 ? kNodeRankAtRendezvous : 0;
  LAKERUN_CHECK_AS(ConfigError,
                   !node_rank_given || (options.node_rank >= 0 && options.node_rank < options.nnodes),
                   "launch: --node-rank ", options.node_rank, " is outside 0..", options.nnodes - 1, " (--nnodes ",
                   options.nnodes, ")");
  if (options.nnodes == 1) return;
  LAKERUN_CHECK_AS(ConfigError, !standalone, "launch: --standalone is one node; --nnodes ", options.nnodes,
                   " needs --master-addr and --master-port (or --rdzv-endpoint) naming node 0");
  LAKERUN_CHECK_AS(ConfigError, master_port_given && options.master_port > 0, "launch: --nnodes ", options.nnodes,
                   ": every node needs the store's port, --master-port (or --rdzv-endpoint HOST:PORT), the same on "
                   "every node");
}

}  // namespace

int RunLaunchCommand(int argc, char** argv) { return RunLaunchCommandWith(argc, argv, {}); }

int RunLaunchCommandWith(int argc, char** argv, const std::function<void(LaunchOptions&)>& customize) {
  const auto started = std::chrono::steady_clock::now();
  // Everything after the first "--" is the rank command, untouched by flag parsing.
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      split = i;
      break;
    }
  }
  LaunchOptions options;
  options.started_at = started;
  std::string ranks;
  double grace_seconds = 5;
  double timeout_seconds = 0;
  std::string start_method = "exec";
  std::string nnodes = "1";
  std::string rdzv_endpoint;
  std::string rdzv_backend = "c10d";
  double join_timeout_seconds = 300;
  double heartbeat_timeout_seconds = 15;
  double hang_timeout_seconds = 60;
  bool standalone = false;
  std::string rdzv_compat = "auto";

  CLI::App app{"start N ranks of PROGRAM on this node with torchrun's environment; on several nodes, one launcher "
               "per node",
               argv[0]};
  app.add_option("-n," + BothSpellings("--nproc-per-node") + ",--processes", options.processes,
                 "number of ranks to start (default 1)");
  app.add_option("--ranks", ranks, "show only these ranks' output, e.g. 0,2 (log files keep all)");
  app.add_option(BothSpellings("--log-dir"), options.log_dir, "also write DIR/rank<N>.stdout and DIR/rank<N>.stderr");
  app.add_flag(BothSpellings("--use-gpu"), options.use_gpu,
               "one GPU per rank via CUDA_VISIBLE_DEVICES; -n capped to visible GPUs");
  app.add_option(BothSpellings("--grace-period"), grace_seconds,
                 "seconds between SIGTERM and SIGKILL when stopping ranks (default 5)");
  app.add_option(BothSpellings("--max-restarts"), options.max_restarts,
                 "restart all ranks up to K times after a failure (default 0)");
  app.add_option("--timeout", timeout_seconds, "stop the ranks after this many seconds, exit 124 (default 0: none)");
  app.add_option(BothSpellings("--start-method"), start_method,
                 "exec: exec PROGRAM once per rank (any program; default); fork: exec it once and fork the ranks "
                 "from it at lakerun::dist::Init() (C++ programs on lakerun: libtorch loads once)");
  app.add_option(BothSpellings("--master-addr"), options.master_addr,
                 "address of the rendezvous store (default 127.0.0.1)");
  app.add_option(BothSpellings("--rdzv-secret-file"), options.rdzv_secret_file,
                 "file holding the rendezvous secret (mode 600); default LAKERUN_RDZV_SECRET, "
                 "LAKERUN_RDZV_SECRET_FILE, else one generated for this job");
  app.add_option(BothSpellings("--rdzv-compat"), rdzv_compat,
                 "auto|on|off: an open loopback listener at MASTER_PORT for ranks whose store client cannot "
                 "authenticate (unmodified PyTorch); auto: on when --master-addr is loopback");
  app.add_option(BothSpellings("--run-id"), options.run_id, "TORCHELASTIC_RUN_ID / LAKERUN_RUN_ID (default random)");
  app.add_option("--nnodes", nnodes, "nodes of the job, N or N:N (default 1); run one launcher per node");
  CLI::Option* node_rank = app.add_option(BothSpellings("--node-rank"), options.node_rank,
                 "this node's rank, 0..nnodes-1; node 0 hosts the store (default: one node is node 0; on several, "
                 "the node that can listen at the store's address is node 0 and the others are numbered as they "
                 "join)");
  CLI::Option* master_port =
      app.add_option(BothSpellings("--master-port"), options.master_port,
                     "the store's port on node 0 (default: a free one; required with --nnodes above 1)");
  app.add_option(BothSpellings("--rdzv-endpoint"), rdzv_endpoint,
                 "HOST:PORT of the store on node 0: --master-addr and --master-port in one");
  app.add_option(BothSpellings("--rdzv-backend"), rdzv_backend,
                 "torchrun's: c10d or static (both mean node 0's agent hosts the store); others are refused");
  app.add_option(BothSpellings("--rdzv-id"), options.rdzv_id,
                 "the job's id, the same on every node; a node with another is refused (default none)");
  app.add_option(BothSpellings("--join-timeout"), join_timeout_seconds,
                 "seconds to wait for every node to join, and to start each attempt together (default 300)");
  app.add_option(BothSpellings("--heartbeat-timeout"), heartbeat_timeout_seconds,
                 "seconds after which a node agent that is not heard from is lost and the job stops (default 15)");
  app.add_option(BothSpellings("--hang-timeout"), hang_timeout_seconds,
                 "seconds some ranks may wait in a collective while another makes no progress before the job is "
                 "stopped as hung, naming that rank and printing its stacks (default 60; 0: off)");
  app.add_flag("--standalone", standalone, "torchrun's: one node with its own store (the default)");
  app.footer(
      "usage: lakerun launch -n N [options] -- PROGRAM [ARGS...]\n"
      "Exit status: 0 on success; the first failed rank's exit code, or 128+signal if it died by a signal;\n"
      "128+signal if the launcher was stopped by SIGINT/SIGTERM; 124 on --timeout or a hang; 1 for launcher errors.\n"
      "See docs/launch.md.");
  // Parsing stops at the first argument that is not a known flag: PROGRAM when there is no "--", else whatever
  // stands before "--"; remaining() holds it and what follows, checked below.
  app.prefix_command();
  try {
    app.parse(split, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  const std::vector<std::string> remaining = app.remaining();
  if (!remaining.empty() && remaining.front().size() > 1 && remaining.front()[0] == '-') {
    UnknownFlag(app, remaining.front());
  }
  if (split < argc) {
    LAKERUN_CHECK_AS(ConfigError, remaining.empty(), "launch: unexpected argument '", remaining.front(),
                     "' before `--`");
    options.command.assign(argv + split + 1, argv + argc);
  } else {
    options.command = remaining;
  }
  LAKERUN_CHECK_AS(ConfigError, rdzv_backend == "c10d" || rdzv_backend == "static", "launch: --rdzv-backend ",
                   rdzv_backend, ": only c10d and static are known (both: node 0's agent hosts the store)");
  options.nnodes = ParseNnodes(nnodes);
  if (!rdzv_endpoint.empty()) ApplyEndpoint(rdzv_endpoint, options);
  CheckNodes(options, standalone, master_port->count() > 0 || !rdzv_endpoint.empty(), node_rank->count() > 0);
  LAKERUN_CHECK_AS(ConfigError, !options.command.empty(),
                   "launch: no program given (usage: lakerun launch -n N [options] -- PROGRAM [ARGS...])");
  if (!ranks.empty()) options.show_ranks = ParseRankList(ranks);
  LAKERUN_CHECK_AS(ConfigError, start_method == "exec" || start_method == "fork",
                   "launch: --start-method must be exec or fork, got '", start_method, "'");
  options.start_method = start_method == "fork" ? StartMethod::kFork : StartMethod::kExec;
  options.rdzv_compat = ParseNamed("launch: --rdzv-compat", rdzv_compat, kRdzvCompatNames);
  options.grace_period = FromSeconds(grace_seconds, "--grace-period");
  options.timeout = FromSeconds(timeout_seconds, "--timeout");
  options.join_timeout = FromSeconds(join_timeout_seconds, "--join-timeout");
  options.heartbeat_timeout = FromSeconds(heartbeat_timeout_seconds, "--heartbeat-timeout");
  options.hang_timeout = FromSeconds(hang_timeout_seconds, "--hang-timeout");
  if (customize) customize(options);
  return Launch(options).exit_code;
}

}  // namespace lakerun::launch
