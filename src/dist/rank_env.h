// The rank environment: which engine started this process and what it says about rank, world and rendezvous.
// Parsed once from the process environment (or a fake one in tests) into a typed struct.
#pragma once

#include <lakerun/dist/init.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace lakerun::dist {

/// Default rendezvous port when nothing names one (torchrun's default).
inline constexpr int kDefaultMasterPort = 29500;
/// Under Slurm without MASTER_PORT: kSlurmPortBase + SLURM_JOB_ID % kSlurmPortSpan, unique per concurrent job.
inline constexpr int kSlurmPortBase = 20000;
inline constexpr int kSlurmPortSpan = 10000;

struct RankEnv {
  Launcher launcher = Launcher::kNone;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  /// Rendezvous store endpoint; empty host at world size 1.
  std::string master_addr;
  int master_port = 0;
  /// TORCHELASTIC_USE_AGENT_STORE=True: the launcher hosts the store; every rank is a client and keys live under
  /// "/worker/attempt_<restart_count>".
  bool use_agent_store = false;
  int restart_count = 0;
  /// LAKERUN_RUN_ID or TORCHELASTIC_RUN_ID or SLURM_JOB_ID (for messages).
  std::string run_id;
  /// GLOO_SOCKET_IFNAME, verbatim (comma-separated interface names).
  std::string gloo_socket_ifname;
  /// Why this launcher was (or was not) chosen, for logs: e.g. "Slurm batch step ignored".
  std::string note;
};

/// Looks up one environment variable; nullopt when unset (an empty value counts as unset).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// The real process environment.
EnvLookup ProcessEnvironment();
/// A fake environment for tests.
EnvLookup MapEnvironment(std::map<std::string, std::string> vars);

/// Detects the launcher (order in init.h) and parses its variables. Throws ConfigError naming the variable, its
/// value and the launcher when a value is malformed, out of range, or a required variable is missing.
RankEnv DetectRankEnv(const EnvLookup& env);

}  // namespace lakerun::dist
