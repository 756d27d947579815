#include "launch/rank_env.h"

#include <sched.h>

#include <algorithm>
#include <random>
#include <thread>

namespace lakerun::launch::internal {

std::vector<std::string> BuildRankEnvironment(const std::vector<std::string>& base, const RankEnvSpec& spec) {
  std::map<std::string, std::string> env;
  std::vector<std::string> order;  // keeps the inherited order, which some programs print
  for (const auto& entry : base) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string key = entry.substr(0, eq);
    if (env.emplace(key, entry.substr(eq + 1)).second) order.push_back(key);
  }
  auto set = [&](const std::string& key, const std::string& value) {
    if (env.find(key) == env.end()) order.push_back(key);
    env[key] = value;
  };
  auto set_default = [&](const std::string& key, const std::string& value) {
    if (env.find(key) == env.end()) set(key, value);
  };
  for (const auto& [key, value] : spec.extra) set(key, value);
  set_default("OMP_NUM_THREADS", std::to_string(std::max(1, spec.cores / std::max(1, spec.local_world_size))));
  set_default("PYTHONUNBUFFERED", "1");
  // As torchrun: a failed NCCL collective raises instead of hanging (both spellings, libtorch 1.13 and 2.x).
  set_default("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  set_default("NCCL_ASYNC_ERROR_HANDLING", "1");
  if (!spec.gpu.empty()) set("CUDA_VISIBLE_DEVICES", spec.gpu);
  set("RANK", std::to_string(spec.rank));
  set("LOCAL_RANK", std::to_string(spec.local_rank));
  set("WORLD_SIZE", std::to_string(spec.world_size));
  set("LOCAL_WORLD_SIZE", std::to_string(spec.local_world_size));
  set("GROUP_RANK", std::to_string(spec.group_rank));
  set("GROUP_WORLD_SIZE", std::to_string(spec.group_world_size));
  set("ROLE_NAME", "default");
  set("ROLE_RANK", std::to_string(spec.rank));
  set("ROLE_WORLD_SIZE", std::to_string(spec.world_size));
  set("MASTER_ADDR", spec.master_addr);
  set("MASTER_PORT", std::to_string(spec.master_port));
  set("LAKERUN_RDZV_PORT", std::to_string(spec.rdzv_port));
  if (!spec.rdzv_secret.empty()) set("LAKERUN_RDZV_SECRET", spec.rdzv_secret);
  set("TORCHELASTIC_USE_AGENT_STORE", "True");
  set("TORCHELASTIC_RESTART_COUNT", std::to_string(spec.restart_count));
  set("TORCHELASTIC_MAX_RESTARTS", std::to_string(spec.max_restarts));
  set("TORCHELASTIC_RUN_ID", spec.run_id);
  set("LAKERUN_RUN_ID", spec.run_id);
  set("LAKERUN_RESTART_COUNT", std::to_string(spec.restart_count));
  set("LAKERUN_LAUNCHER", "1");
  set("LAKERUN_CONSOLE_IS_TERMINAL", spec.console_is_terminal ? "1" : "0");
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const auto& key : order) out.push_back(key + "=" + env[key]);
  return out;
}

int AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string RandomRunId() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> digit(0, 15);
  std::string id;
  for (int i = 0; i < 16; ++i) id.push_back("0123456789abcdef"[digit(device)]);
  return id;
}

}  // namespace lakerun::launch::internal
