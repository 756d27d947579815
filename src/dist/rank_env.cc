#include "dist/rank_env.h"

#include <lakerun/base/error.h>
#include <lakerun/rdzv/secret.h>

#include "dist/hostlist.h"

namespace lakerun::dist {
namespace {

std::string Need(const EnvLookup& env, const RankEnv& e, const char* name, const std::string& why) {
  std::optional<std::string> value = env(name);
  LAKERUN_CHECK_AS(ConfigError, value.has_value(), LauncherDescription(e.launcher), " environment: ", name,
                   " is not set but required", why);
  return *value;
}

// MASTER_ADDR / MASTER_PORT as torchrun requires them.
void ReadMaster(const EnvLookup& env, RankEnv* e) {
  if (e->world_size == 1 && !env("MASTER_ADDR")) return;
  e->master_addr = Need(env, *e, "MASTER_ADDR", StrCat(" for WORLD_SIZE=", e->world_size));
  e->master_port = ReadEnvInt(env, e->launcher, "MASTER_PORT", std::nullopt, 1, 65535);
}

// MPI launchers export no rendezvous address: MASTER_ADDR/PORT from the user (mpirun -x), or loopback when every
// rank runs on this node.
void ReadMpiMaster(const EnvLookup& env, RankEnv* e, const char* local_world_var) {
  if (std::optional<std::string> addr = env("MASTER_ADDR")) {
    e->master_addr = *addr;
  } else {
    LAKERUN_CHECK_AS(ConfigError, e->local_world_size == e->world_size, LauncherDescription(e->launcher),
                     " environment: MASTER_ADDR is not set and the job spans several nodes (", local_world_var, "=",
                     e->local_world_size, " of ", e->world_size,
                     " ranks here); pass it to every rank, e.g. mpirun -x MASTER_ADDR=<rank 0 host> "
                     "-x MASTER_PORT=<port>");
    e->master_addr = "127.0.0.1";
  }
  e->master_port = ReadEnvInt(env, e->launcher, "MASTER_PORT", kDefaultMasterPort, 1, 65535);
}

// Rank 0 runs on the step's first node; the port comes from MASTER_PORT, else from the job id.
void ReadSlurmMaster(const EnvLookup& env, RankEnv* e) {
  const char* who = LauncherDescription(e->launcher);
  if (e->world_size == 1 && !env("MASTER_ADDR")) return;
  if (std::optional<std::string> addr = env("MASTER_ADDR")) {
    e->master_addr = *addr;
  } else {
    const char* var = env("SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST"
                      : env("SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST"
                                                  : "SLURM_NODELIST";
    std::optional<std::string> nodes = env(var);
    LAKERUN_CHECK_AS(ConfigError, nodes.has_value(), who,
                     " environment: neither MASTER_ADDR nor SLURM_STEP_NODELIST / SLURM_JOB_NODELIST is set");
    try {
      e->master_addr = FirstHost(*nodes);
    } catch (const InvalidArgument& error) {
      LAKERUN_THROW(ConfigError, who, " environment: ", var, ": ", error.what());
    }
  }
  if (env("MASTER_PORT")) {
    e->master_port = ReadEnvInt(env, e->launcher, "MASTER_PORT", std::nullopt, 1, 65535);
  } else {
    LAKERUN_CHECK_AS(ConfigError, env("SLURM_JOB_ID").has_value(), who,
                     " environment: neither MASTER_PORT nor SLURM_JOB_ID is set");
    const int job = ReadEnvInt(env, e->launcher, "SLURM_JOB_ID", std::nullopt);
    e->master_port = kSlurmPortBase + job % kSlurmPortSpan;
  }
}

}  // namespace

RankEnv DetectRankEnv(const EnvLookup& env) {
  RankEnv e;
  static_cast<RankEnvironment&>(e) = DetectRankEnvironment(env);
  switch (e.launcher) {
    case Launcher::kLakerun:
    case Launcher::kTorchrun: {
      ReadMaster(env, &e);
      const std::optional<std::string> agent = env("TORCHELASTIC_USE_AGENT_STORE");
      e.use_agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
      break;
    }
    case Launcher::kOpenMpi: ReadMpiMaster(env, &e, "OMPI_COMM_WORLD_LOCAL_SIZE"); break;
    case Launcher::kPmi: ReadMpiMaster(env, &e, "MPI_LOCALNRANKS"); break;
    case Launcher::kSlurm: ReadSlurmMaster(env, &e); break;
    case Launcher::kNone: break;
  }
  e.gloo_socket_ifname = env("GLOO_SOCKET_IFNAME").value_or("");
  e.rdzv_secret = rdzv::SecretFromEnvironment(env).value_or("");
  if (env(rdzv::kStorePortVariable)) {
    e.rdzv_port = ReadEnvInt(env, e.launcher, rdzv::kStorePortVariable, std::nullopt, 1, 65535);
  }
  return e;
}

}  // namespace lakerun::dist
