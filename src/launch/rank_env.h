// The environment every rank gets (the rendezvous contract between launcher and ranks).
//
// RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK (the node), GROUP_WORLD_SIZE (the nodes),
// ROLE_NAME=default, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LAKERUN_RDZV_PORT and LAKERUN_RDZV_SECRET
// (the authenticated store; MASTER_PORT may be the compatibility listener: launch/rendezvous_store.h),
// TORCHELASTIC_USE_AGENT_STORE=True, TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID,
// LAKERUN_RUN_ID, LAKERUN_RESTART_COUNT, LAKERUN_LAUNCHER=1, LAKERUN_CONSOLE_IS_TERMINAL (1 when the launcher's
// stderr is a terminal, else 0: the Trainer's progress bar); OMP_NUM_THREADS=max(1, cores / local ranks),
// PYTHONUNBUFFERED=1 and TORCH_NCCL_ASYNC_ERROR_HANDLING=1 (and its older spelling NCCL_ASYNC_ERROR_HANDLING) unless
// already set; with a GPU, CUDA_VISIBLE_DEVICES=<that GPU>. Extra variables come next; the launcher's own names
// always win.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace lakerun::launch::internal {

struct RankEnvSpec {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  /// The node's rank and the number of nodes (GROUP_RANK, GROUP_WORLD_SIZE).
  int group_rank = 0;
  int group_world_size = 1;
  std::string master_addr;
  int master_port = 0;
  /// The authenticated store's port and the job's secret (empty: none).
  int rdzv_port = 0;
  std::string rdzv_secret;
  int restart_count = 0;
  int max_restarts = 0;
  std::string run_id;
  /// CUDA_VISIBLE_DEVICES for this rank; empty = inherit.
  std::string gpu;
  /// CPU cores available to the launcher (for OMP_NUM_THREADS).
  int cores = 1;
  /// Whether the launcher's stderr is a terminal (LAKERUN_CONSOLE_IS_TERMINAL).
  bool console_is_terminal = false;
  std::map<std::string, std::string> extra;
};

/// `base` ("KEY=VALUE" entries, normally the launcher's environment) with the rank's variables applied.
std::vector<std::string> BuildRankEnvironment(const std::vector<std::string>& base, const RankEnvSpec& spec);

/// CPUs this process may run on (sched_getaffinity), at least 1.
int AvailableCores();

/// 16 random hex digits.
std::string RandomRunId();

}  // namespace lakerun::launch::internal
