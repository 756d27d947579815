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
  /// The job's rendezvous secret (lakerun/rdzv/secret.h: LAKERUN_RDZV_SECRET or LAKERUN_RDZV_SECRET_FILE); empty when
  /// none is set. Never printed.
  std::string rdzv_secret;
  /// LAKERUN_RDZV_PORT: under `lakerun launch`, the authenticated store's port (MASTER_PORT may name the
  /// compatibility listener for PyTorch ranks); 0 when unset.
  int rdzv_port = 0;
  /// GLOO_SOCKET_IFNAME, verbatim (comma-separated interface names).
  std::string gloo_socket_ifname;
};

/// The real process environment, and a fake one for tests (lakerun/base/rank_environment.h).
using ::lakerun::EnvLookup;
using ::lakerun::MapEnvironment;
using ::lakerun::ProcessEnvironment;

/// The port of the store this rank rendezvouses through: LAKERUN_RDZV_PORT under an agent store that sets it (the
/// authenticated store of `lakerun launch`), else MASTER_PORT.
inline int StorePort(const RankEnv& env) {
  return env.use_agent_store && env.rdzv_port > 0 ? env.rdzv_port : env.master_port;
}

/// Detects the launcher (DetectRankEnvironment) and parses its rendezvous variables. Throws ConfigError naming the
/// variable, its value and the launcher when a value is malformed, out of range, or a required variable is missing.
RankEnv DetectRankEnv(const EnvLookup& env);

}  // namespace lakerun::dist
