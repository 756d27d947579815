#include "dist/rank_env.h"

#include <lakerun/base/error.h>

#include "dist/hostlist.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>



namespace lakerun::dist {
namespace {

class Reader {
 public:
  Reader(const EnvLookup& env, const char* launcher) : env_(env), launcher_(launcher) {}

  std::optional<std::string> Get(const std::string& name) const { return env_(name); }
  bool Has(const std::string& name) const { return env_(name).has_value(); }

  /// An integer in [lo, hi]; `fallback` when unset (nullopt: required).
  int Int(const std::string& name, std::optional<int> fallback, long lo = 0,
          long hi = std::numeric_limits<int>::max()) const {
    std::optional<std::string> value = env_(name);
    if (!value) {
      LAKERUN_CHECK_AS(ConfigError, fallback.has_value(), launcher_, " environment: ", name,
                       " is not set but required");
      return *fallback;
    }
    errno = 0;
    char* end = nullptr;
    long v = std::strtol(value->c_str(), &end, 10);
    LAKERUN_CHECK_AS(ConfigError, errno == 0 && end != value->c_str() && *end == '\0', launcher_, " environment: ",
                     name, "='", *value, "' is not an integer");
    LAKERUN_CHECK_AS(ConfigError, v >= lo && v <= hi, launcher_, " environment: ", name, "=", v,
                     " is out of range [", lo, ", ", hi, "]");
    return static_cast<int>(v);
  }

  const char* launcher() const { return launcher_; }

 private:
  const EnvLookup& env_;
  const char* launcher_;
};

void CheckRanks(const Reader& r, const RankEnv& e, const char* rank_var, const char* world_var,
                const char* local_var, const char* local_world_var) {
  LAKERUN_CHECK_AS(ConfigError, e.rank < e.world_size, r.launcher(), " environment: ", rank_var, "=", e.rank,
                   " is not below ", world_var, "=", e.world_size);
  LAKERUN_CHECK_AS(ConfigError, e.local_world_size <= e.world_size, r.launcher(), " environment: ",
                   local_world_var, "=", e.local_world_size, " exceeds ", world_var, "=", e.world_size);
  LAKERUN_CHECK_AS(ConfigError, e.local_rank < e.local_world_size, r.launcher(), " environment: ", local_var, "=",
                   e.local_rank, " is not below ", local_world_var, "=", e.local_world_size);
}

// MASTER_ADDR / MASTER_PORT as torchrun requires them.
void ReadMaster(const Reader& r, RankEnv* e) {
  if (e->world_size == 1 && !r.Has("MASTER_ADDR")) return;
  std::optional<std::string> addr = r.Get("MASTER_ADDR");
  LAKERUN_CHECK_AS(ConfigError, addr.has_value(), r.launcher(), " environment: MASTER_ADDR is not set but required",
                   " for WORLD_SIZE=", e->world_size);
  e->master_addr = *addr;
  e->master_port = r.Int("MASTER_PORT", std::nullopt, 1, 65535);
}

// MPI launchers export no rendezvous address: MASTER_ADDR/PORT from the user (mpirun -x), or loopback when every
// rank runs on this node.
void ReadMpiMaster(const Reader& r, RankEnv* e, const char* local_world_var) {
  if (std::optional<std::string> addr = r.Get("MASTER_ADDR")) {
    e->master_addr = *addr;
  } else {
    LAKERUN_CHECK_AS(ConfigError, e->local_world_size == e->world_size, r.launcher(),
                     " environment: MASTER_ADDR is not set and the job spans several nodes (", local_world_var, "=",
                     e->local_world_size, " of ", e->world_size,
                     " ranks here); pass it to every rank, e.g. mpirun -x MASTER_ADDR=<rank 0 host> -x MASTER_PORT=<port>");
    e->master_addr = "127.0.0.1";
  }
  e->master_port = r.Int("MASTER_PORT", kDefaultMasterPort, 1, 65535);
}

RankEnv TorchrunStyle(const Reader& r, Launcher launcher) {
  RankEnv e;
  e.launcher = launcher;
  bool strict = launcher == Launcher::kLakerun;  // lakerun's launcher always sets every variable
  e.world_size = r.Int("WORLD_SIZE", std::nullopt, 1);
  e.rank = r.Int("RANK", std::nullopt);
  e.local_rank = r.Int("LOCAL_RANK", strict ? std::nullopt : std::optional<int>(0));
  e.local_world_size =
      r.Int("LOCAL_WORLD_SIZE", strict ? std::nullopt : std::optional<int>(std::max(1, e.local_rank + 1)), 1);
  CheckRanks(r, e, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  ReadMaster(r, &e);
  std::optional<std::string> agent = r.Get("TORCHELASTIC_USE_AGENT_STORE");
  e.use_agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
  if (e.use_agent_store) e.restart_count = r.Int("TORCHELASTIC_RESTART_COUNT", 0);
  if (auto id = r.Get(launcher == Launcher::kLakerun ? "LAKERUN_RUN_ID" : "TORCHELASTIC_RUN_ID")) e.run_id = *id;
  return e;
}

RankEnv OpenMpi(const Reader& r) {
  RankEnv e;
  e.launcher = Launcher::kOpenMpi;
  e.world_size = r.Int("OMPI_COMM_WORLD_SIZE", std::nullopt, 1);
  e.rank = r.Int("OMPI_COMM_WORLD_RANK", std::nullopt);
  e.local_rank = r.Int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
  e.local_world_size = r.Int("OMPI_COMM_WORLD_LOCAL_SIZE", std::max(1, e.local_rank + 1), 1);
  CheckRanks(r, e, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
             "OMPI_COMM_WORLD_LOCAL_SIZE");
  ReadMpiMaster(r, &e, "OMPI_COMM_WORLD_LOCAL_SIZE");
  return e;
}

RankEnv Pmi(const Reader& r) {
  RankEnv e;
  e.launcher = Launcher::kPmi;
  e.world_size = r.Int("PMI_SIZE", std::nullopt, 1);
  e.rank = r.Int("PMI_RANK", std::nullopt);
  e.local_rank = r.Int("MPI_LOCALRANKID", 0);
  e.local_world_size = r.Int("MPI_LOCALNRANKS", std::max(1, e.local_rank + 1), 1);
  CheckRanks(r, e, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
  ReadMpiMaster(r, &e, "MPI_LOCALNRANKS");
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

RankEnv Slurm(const Reader& r) {
  RankEnv e;
  e.launcher = Launcher::kSlurm;
  e.world_size = r.Has("SLURM_NTASKS") ? r.Int("SLURM_NTASKS", std::nullopt, 1) : r.Int("SLURM_NPROCS", std::nullopt, 1);
  e.rank = r.Int("SLURM_PROCID", std::nullopt);
  e.local_rank = r.Int("SLURM_LOCALID", 0);
  e.local_world_size = std::max(1, e.local_rank + 1);
  if (std::optional<std::string> gtids = r.Get("SLURM_GTIDS")) {  // global ids of this node's tasks: "0,1"
    int count = 1;
    for (char c : *gtids) count += c == ',';
    e.local_world_size = count;
  }
  CheckRanks(r, e, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_GTIDS");
  if (auto job = r.Get("SLURM_JOB_ID")) e.run_id = *job;
  if (e.world_size == 1 && !r.Has("MASTER_ADDR")) return e;
  if (std::optional<std::string> addr = r.Get("MASTER_ADDR")) {
    e.master_addr = *addr;
  } else {
    const char* var = r.Has("SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST"
                      : r.Has("SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST"
                                                    : "SLURM_NODELIST";
    std::optional<std::string> nodes = r.Get(var);
    LAKERUN_CHECK_AS(ConfigError, nodes.has_value(), r.launcher(),
                     " environment: neither MASTER_ADDR nor SLURM_STEP_NODELIST / SLURM_JOB_NODELIST is set");
    try {
      e.master_addr = FirstHost(*nodes);  // rank 0 runs on the step's first node
    } catch (const InvalidArgument& error) {
      LAKERUN_THROW(ConfigError, r.launcher(), " environment: ", var, ": ", error.what());
    }
  }
  if (r.Has("MASTER_PORT")) {
    e.master_port = r.Int("MASTER_PORT", std::nullopt, 1, 65535);
  } else {
    LAKERUN_CHECK_AS(ConfigError, r.Has("SLURM_JOB_ID"), r.launcher(),
                     " environment: neither MASTER_PORT nor SLURM_JOB_ID is set");
    int job = r.Int("SLURM_JOB_ID", std::nullopt);
    e.master_port = kSlurmPortBase + job % kSlurmPortSpan;
  }
  return e;
}

}  // namespace

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

RankEnv DetectRankEnv(const EnvLookup& env) {
  RankEnv e;
  if (env("LAKERUN_LAUNCHER") == std::optional<std::string>("1")) {
    e = TorchrunStyle(Reader(env, "lakerun launcher"), Launcher::kLakerun);
  } else if (env("RANK") && env("WORLD_SIZE")) {
    e = TorchrunStyle(Reader(env, "torchrun"), Launcher::kTorchrun);
  } else if (env("OMPI_COMM_WORLD_RANK")) {
    e = OpenMpi(Reader(env, "Open MPI"));
  } else if (env("PMI_RANK") && env("PMI_SIZE")) {
    e = Pmi(Reader(env, "PMI (MPICH / Intel MPI)"));
  } else if (env("SLURM_PROCID")) {
    std::optional<std::string> step = env("SLURM_STEP_ID");
    if (!step) step = env("SLURM_STEPID");
    if (step && IsRealStep(*step)) {
      e = Slurm(Reader(env, "Slurm"));
    } else {
      // A batch script carries SLURM_PROCID=0 and SLURM_NTASKS=N but is one process, not rank 0 of N.
      e.note = StrCat("SLURM_PROCID is set outside an srun step (SLURM_STEP_ID=", step.value_or("<unset>"),
                      "): running as a single process");
    }
  }
  e.gloo_socket_ifname = env("GLOO_SOCKET_IFNAME").value_or("");
  return e;
}

}  // namespace lakerun::dist
