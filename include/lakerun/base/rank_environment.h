// Which rank of which job this process is, read from the variables its launcher set.
//
//   lakerun::RankEnvironment env = lakerun::DetectRankEnvironment();
//   if (env.rank == 0) ...;                                   // rank 0 under any launcher, or a single process
//
// One implementation for every module that asks: lakerun::dist builds its rendezvous on it (dist/rank_env.h adds the
// store's address), lakerun::track logs from rank 0 only, lakerun::train resumes a restarted job. Launchers are
// detected in this order:
//   1. lakerun's launcher (LAKERUN_LAUNCHER=1)   2. torchrun / plain env (RANK + WORLD_SIZE)
//   3. Open MPI (OMPI_COMM_WORLD_*)              4. MPICH / Intel MPI (PMI_RANK + PMI_SIZE)
//   5. a Slurm job step (SLURM_PROCID with SLURM_STEP_ID, not the batch step)
//   6. nothing: a single process (rank 0 of 1).
// MPI comes before Slurm because `salloc mpirun` ranks inherit the MPI daemons' Slurm variables. RANK alone, without
// WORLD_SIZE, names no job: such a process is a single process.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>

namespace lakerun {

/// Who started this process (decides where rank, world size and the rendezvous address come from).
enum class Launcher { kNone, kLakerun, kTorchrun, kOpenMpi, kPmi, kSlurm };
/// "none", "lakerun", "torchrun", "openmpi", "pmi", "slurm".
const char* LauncherName(Launcher launcher);
/// How errors about its variables name the launcher: "lakerun launcher", "torchrun", "Open MPI", "PMI (MPICH / Intel
/// MPI)", "Slurm", "environment".
const char* LauncherDescription(Launcher launcher);

/// Looks up one environment variable; nullopt when unset (an empty value counts as unset).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
/// The real process environment.
EnvLookup ProcessEnvironment();
/// A fake environment for tests.
EnvLookup MapEnvironment(std::map<std::string, std::string> vars);

/// The integer in variable `name`, in [lo, hi]; `fallback` when unset (nullopt: required). Throws ConfigError
/// naming the launcher, the variable and its value when it is missing, not an integer or out of range.
int ReadEnvInt(const EnvLookup& env, Launcher launcher, const std::string& name, std::optional<int> fallback,
               long lo = 0, long hi = std::numeric_limits<int>::max());

struct RankEnvironment {
  Launcher launcher = Launcher::kNone;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  /// The attempt of a job its launcher restarts, 0 first: LAKERUN_RESTART_COUNT under `lakerun launch` (which sets
  /// TORCHELASTIC_RESTART_COUNT to the same value, read when the first is missing), TORCHELASTIC_RESTART_COUNT under
  /// torchrun; 0 under other launchers. lakerun::dist keys an agent store's rendezvous under "/worker/attempt_<n>".
  int restart_count = 0;
  /// The job's id, the same on every rank and in every attempt: LAKERUN_RUN_ID under `lakerun launch`,
  /// TORCHELASTIC_RUN_ID under torchrun, SLURM_JOB_ID in a Slurm step; empty otherwise.
  std::string job_id;
  /// Why this launcher was (or was not) chosen, for logs: e.g. "Slurm batch step ignored".
  std::string note;

  /// `lakerun launch` restarted this job (LAKERUN_RESTART_COUNT > 0): what the Trainer resumes by itself and the
  /// tracker continues the job's run for.
  bool RestartedByLakerun() const { return launcher == Launcher::kLakerun && restart_count > 0; }
};

/// Detects the launcher (order above) and reads this process's place in the job. Throws ConfigError naming the
/// variable, its value and the launcher when a value is malformed or out of range, or a required one is missing.
RankEnvironment DetectRankEnvironment(const EnvLookup& env = ProcessEnvironment());

}  // namespace lakerun
