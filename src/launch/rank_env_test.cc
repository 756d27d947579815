#include "launch/rank_env.h"

#include <map>

#include "lakerun_testing/matchers.h"

namespace lakerun::launch::internal {
namespace {

std::map<std::string, std::string> ToMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const auto& e : env) {
    const size_t eq = e.find('=');
    EXPECT_TRUE(m.emplace(e.substr(0, eq), e.substr(eq + 1)).second) << "duplicate " << e;
  }
  return m;
}

TEST(RankEnvTest, SetsTorchrunContractOverInheritedValues) {
  RankEnvSpec spec;
  spec.rank = 2;
  spec.local_rank = 2;
  spec.world_size = 4;
  spec.local_world_size = 4;
  spec.master_addr = "127.0.0.1";
  spec.master_port = 12345;
  spec.restart_count = 1;
  spec.max_restarts = 3;
  spec.run_id = "abc";
  spec.cores = 8;
  spec.extra = {{"EXTRA", "x"}, {"RANK", "99"}};
  auto env = ToMap(BuildRankEnvironment({"PATH=/bin", "RANK=7", "HOME=/root"}, spec));
  EXPECT_EQ(env["PATH"], "/bin");
  EXPECT_EQ(env["RANK"], "2");
  EXPECT_EQ(env["LOCAL_RANK"], "2");
  EXPECT_EQ(env["WORLD_SIZE"], "4");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "4");
  EXPECT_EQ(env["GROUP_RANK"], "0");
  EXPECT_EQ(env["GROUP_WORLD_SIZE"], "1");
  EXPECT_EQ(env["ROLE_RANK"], "2");
  EXPECT_EQ(env["ROLE_WORLD_SIZE"], "4");
  EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
  EXPECT_EQ(env["MASTER_PORT"], "12345");
  EXPECT_EQ(env["TORCHELASTIC_USE_AGENT_STORE"], "True");
  EXPECT_EQ(env["TORCHELASTIC_RESTART_COUNT"], "1");
  EXPECT_EQ(env["TORCHELASTIC_MAX_RESTARTS"], "3");
  EXPECT_EQ(env["TORCHELASTIC_RUN_ID"], "abc");
  EXPECT_EQ(env["LAKERUN_RUN_ID"], "abc");
  EXPECT_EQ(env["LAKERUN_RESTART_COUNT"], "1");
  EXPECT_EQ(env["LAKERUN_LAUNCHER"], "1");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "2");
  EXPECT_EQ(env["EXTRA"], "x");
  EXPECT_EQ(env["PYTHONUNBUFFERED"], "1");
  EXPECT_EQ(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "1");
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(RankEnvTest, KeepsUserOmpThreadsAndSetsGpu) {
  RankEnvSpec spec;
  spec.local_world_size = 8;
  spec.cores = 2;
  spec.gpu = "3";
  auto env = ToMap(BuildRankEnvironment({"OMP_NUM_THREADS=7", "CUDA_VISIBLE_DEVICES=0,1,2,3"}, spec));
  EXPECT_EQ(env["OMP_NUM_THREADS"], "7");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "3");
  auto fresh = ToMap(BuildRankEnvironment({}, spec));
  EXPECT_EQ(fresh["OMP_NUM_THREADS"], "1");  // never 0
}

TEST(RankEnvTest, RunIdsDiffer) {
  const std::string a = RandomRunId(), b = RandomRunId();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace lakerun::launch::internal
