#include "lakerun/base/rank_environment.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "lakerun/base/error.h"

namespace lakerun {
namespace {

void CheckRanks(const RankEnvironment& e, const char* rank_var, const char* world_var, const char* local_var,
                const char* local_world_var) {
  const char* who = LauncherDescription(e.launcher);
  LAKERUN_CHECK_AS(ConfigError, e.rank < e.world_size, who, " environment: ", rank_var, "=", e.rank,
                   " is not below ", world_var, "=", e.world_size);
  LAKERUN_CHECK_AS(ConfigError, e.local_world_size <= e.world_size, who, " environment: ", local_world_var, "=",
                   e.local_world_size, " exceeds ", world_var, "=", e.world_size);
  LAKERUN_CHECK_AS(ConfigError, e.local_rank < e.local_world_size, who, " environment: ", local_var, "=",
                   e.local_rank, " is not below ", local_world_var, "=", e.local_world_size);
}

RankEnvironment TorchrunStyle(const EnvLookup& env, Launcher launcher) {
  RankEnvironment e;
  e.launcher = launcher;
  const bool strict = launcher == Launcher::kLakerun;  // lakerun's launcher always sets every variable
  e.world_size = ReadEnvInt(env, launcher, "WORLD_SIZE", std::nullopt, 1);
  e.rank = ReadEnvInt(env, launcher, "RANK", std::nullopt);
  e.local_rank = ReadEnvInt(env, launcher, "LOCAL_RANK", strict ? std::nullopt : std::optional<int>(0));
  e.local_world_size = ReadEnvInt(env, launcher, "LOCAL_WORLD_SIZE",
                                  strict ? std::nullopt : std::optional<int>(std::max(1, e.local_rank + 1)), 1);
  CheckRanks(e, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  // `lakerun launch` sets both spellings of the attempt to the same value; torchrun only its own.
  const char* attempt = strict && env("LAKERUN_RESTART_COUNT") ? "LAKERUN_RESTART_COUNT" : "TORCHELASTIC_RESTART_COUNT";
  e.restart_count = ReadEnvInt(env, launcher, attempt, 0);
  e.job_id = env(strict ? "LAKERUN_RUN_ID" : "TORCHELASTIC_RUN_ID").value_or("");
  return e;
}

RankEnvironment OpenMpi(const EnvLookup& env) {
  RankEnvironment e;
  e.launcher = Launcher::kOpenMpi;
  e.world_size = ReadEnvInt(env, e.launcher, "OMPI_COMM_WORLD_SIZE", std::nullopt, 1);
  e.rank = ReadEnvInt(env, e.launcher, "OMPI_COMM_WORLD_RANK", std::nullopt);
  e.local_rank = ReadEnvInt(env, e.launcher, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
  e.local_world_size = ReadEnvInt(env, e.launcher, "OMPI_COMM_WORLD_LOCAL_SIZE", std::max(1, e.local_rank + 1), 1);
  CheckRanks(e, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
             "OMPI_COMM_WORLD_LOCAL_SIZE");
  return e;
}

RankEnvironment Pmi(const EnvLookup& env) {
  RankEnvironment e;
  e.launcher = Launcher::kPmi;
  e.world_size = ReadEnvInt(env, e.launcher, "PMI_SIZE", std::nullopt, 1);
  e.rank = ReadEnvInt(env, e.launcher, "PMI_RANK", std::nullopt);
  e.local_rank = ReadEnvInt(env, e.launcher, "MPI_LOCALRANKID", 0);
  e.local_world_size = ReadEnvInt(env, e.launcher, "MPI_LOCALNRANKS", std::max(1, e.local_rank + 1), 1);
  CheckRanks(e, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
  return e;
}

RankEnvironment Slurm(const EnvLookup& env) {
  RankEnvironment e;
  e.launcher = Launcher::kSlurm;
  e.world_size = ReadEnvInt(env, e.launcher, env("SLURM_NTASKS") ? "SLURM_NTASKS" : "SLURM_NPROCS", std::nullopt, 1);
  e.rank = ReadEnvInt(env, e.launcher, "SLURM_PROCID", std::nullopt);
  e.local_rank = ReadEnvInt(env, e.launcher, "SLURM_LOCALID", 0);
  e.local_world_size = std::max(1, e.local_rank + 1);
  if (std::optional<std::string> gtids = env("SLURM_GTIDS")) {  // global ids of this node's tasks: "0,1"
    e.local_world_size = 1 + static_cast<int>(std::count(gtids->begin(), gtids->end(), ','));
  }
  CheckRanks(e, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_GTIDS");
  e.job_id = env("SLURM_JOB_ID").value_or("");
  return e;
}

// A Slurm step id that names a real `srun` step, not the batch script, the extern step or an interactive step.
// Slurm encodes those as "batch"/"extern"/"interactive" or as ids 0xfffffff0 and above.
bool IsRealStep(const std::string& step_id) {
  if (step_id.empty()) return false;
  for (char c : step_id) {
    if (c < '0' || c > '9') return false;
  }
  return step_id.size() < 10 || std::stoull(step_id) < 0xfffffff0ULL;
}

}  // namespace

const char* LauncherName(Launcher launcher) {
  switch (launcher) {
    case Launcher::kNone: return "none";
    case Launcher::kLakerun: return "lakerun";
    case Launcher::kTorchrun: return "torchrun";
    case Launcher::kOpenMpi: return "openmpi";
    case Launcher::kPmi: return "pmi";
    case Launcher::kSlurm: return "slurm";
  }
  return "unknown";
}

const char* LauncherDescription(Launcher launcher) {
  switch (launcher) {
    case Launcher::kNone: return "environment";
    case Launcher::kLakerun: return "lakerun launcher";
    case Launcher::kTorchrun: return "torchrun";
    case Launcher::kOpenMpi: return "Open MPI";
    case Launcher::kPmi: return "PMI (MPICH / Intel MPI)";
    case Launcher::kSlurm: return "Slurm";
  }
  return "unknown launcher";
}

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

EnvLookup MapEnvironment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
}

int ReadEnvInt(const EnvLookup& env, Launcher launcher, const std::string& name, std::optional<int> fallback, long lo,
               long hi) {
  const char* who = LauncherDescription(launcher);
  const std::optional<std::string> value = env(name);
  if (!value) {
    LAKERUN_CHECK_AS(ConfigError, fallback.has_value(), who, " environment: ", name, " is not set but required");
    return *fallback;
  }
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(value->c_str(), &end, 10);
  LAKERUN_CHECK_AS(ConfigError, errno == 0 && end != value->c_str() && *end == '\0', who, " environment: ", name,
                   "='", *value, "' is not an integer");
  LAKERUN_CHECK_AS(ConfigError, v >= lo && v <= hi, who, " environment: ", name, "=", v, " is out of range [", lo,
                   ", ", hi, "]");
  return static_cast<int>(v);
}

RankEnvironment DetectRankEnvironment(const EnvLookup& env) {
  if (env("LAKERUN_LAUNCHER") == std::optional<std::string>("1")) return TorchrunStyle(env, Launcher::kLakerun);
  if (env("RANK") && env("WORLD_SIZE")) return TorchrunStyle(env, Launcher::kTorchrun);
  if (env("OMPI_COMM_WORLD_RANK")) return OpenMpi(env);
  if (env("PMI_RANK") && env("PMI_SIZE")) return Pmi(env);
  RankEnvironment e;
  if (env("SLURM_PROCID")) {
    std::optional<std::string> step = env("SLURM_STEP_ID");
    if (!step) step = env("SLURM_STEPID");
    if (step && IsRealStep(*step)) return Slurm(env);
    // A batch script carries SLURM_PROCID=0 and SLURM_NTASKS=N but is one process, not rank 0 of N.
    e.note = StrCat("SLURM_PROCID is set outside an srun step (SLURM_STEP_ID=", step.value_or("<unset>"),
                    "): running as a single process");
  }
  return e;
}

}  // namespace lakerun
