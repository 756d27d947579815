// The rank environment: which engine started this process and what it says about rank, world and rendezvous.
// Parsed once from the process environment (or a fake one in tests) into a typed struct.
#pragma once

#include <lakerun/base/rank_environment.h>
#include <lakerun/dist/init.h>

#include <string>

namespace lakerun::dist {

/// Default rendezvous port when nothing names one (torchrun's default).
inline constexpr int kDefaultMasterPort = 29500;
/// Under Slurm without MASTER_PORT: kSlurmPortBase + SLURM_JOB_ID % kSlurmPortSpan, unique per concurrent job.
inline constexpr int kSlurmPortBase = 20000;
inline constexpr int kSlurmPortSpan = 10000;

/// This process's place in the job (lakerun::DetectRankEnvironment) plus where the ranks meet.
struct RankEnv : RankEnvironment {
  /// Rendezvous store endpoint; empty host at world size 1.
  std::string master_addr;
  int master_port = 0;
  /// TORCHELASTIC_USE_AGENT_STORE=True: the launcher hosts the store; every rank is a client and keys live under
  /// "/worker/attempt_<restart_count>".
  bool use_agent_store = false;
  /// GLOO_SOCKET_IFNAME, verbatim (comma-separated interface names).
  std::string gloo_socket_ifname;
};

/// The real process environment, and a fake one for tests (lakerun/base/rank_environment.h).
using ::lakerun::EnvLookup;
using ::lakerun::MapEnvironment;
using ::lakerun::ProcessEnvironment;

/// Detects the launcher (DetectRankEnvironment) and parses its rendezvous variables. Throws ConfigError naming the
/// variable, its value and the launcher when a value is malformed, out of range, or a required variable is missing.
RankEnv DetectRankEnv(const EnvLookup& env);

}  // namespace lakerun::dist
