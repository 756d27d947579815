#include "dist/rank_env.h"

#include <lakerun/base/error.h>

#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

RankEnv Detect(std::map<std::string, std::string> vars) { return DetectRankEnv(MapEnvironment(std::move(vars))); }

TEST(RankEnvTest, NothingMeansOneProcess) {
  RankEnv e = Detect({{"HOME", "/root"}});
  EXPECT_EQ(e.launcher, Launcher::kNone);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.local_rank, 0);
  EXPECT_TRUE(e.master_addr.empty());
}

TEST(RankEnvTest, LakerunLauncherUsesTheAgentStore) {
  RankEnv e = Detect({{"LAKERUN_LAUNCHER", "1"}, {"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "4"},
                      {"LOCAL_WORLD_SIZE", "2"}, {"GROUP_RANK", "1"}, {"MASTER_ADDR", "10.0.0.5"},
                      {"MASTER_PORT", "41234"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                      {"TORCHELASTIC_RESTART_COUNT", "2"}, {"LAKERUN_RESTART_COUNT", "2"},
                      {"LAKERUN_RUN_ID", "run-7"},
                      // Slurm and MPI variables of the surrounding job must not win over the launcher's.
                      {"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"OMPI_COMM_WORLD_RANK", "0"}});
  EXPECT_EQ(e.launcher, Launcher::kLakerun);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.master_addr, "10.0.0.5");
  EXPECT_EQ(e.master_port, 41234);
  EXPECT_TRUE(e.use_agent_store);
  EXPECT_EQ(e.restart_count, 2);
  EXPECT_EQ(e.job_id, "run-7");
}

TEST(RankEnvTest, LakerunLauncherRequiresEveryVariable) {
  EXPECT_THROW_WITH(Detect({{"LAKERUN_LAUNCHER", "1"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"},
                            {"MASTER_PORT", "1"}}),
                    ConfigError, "lakerun launcher", "LOCAL_RANK is not set");
}

TEST(RankEnvTest, TorchrunAndPlainEnv) {
  RankEnv e = Detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29501"},
                      {"TORCHELASTIC_RUN_ID", "abc"}});
  EXPECT_EQ(e.launcher, Launcher::kTorchrun);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.local_rank, 0);  // not set: 0
  EXPECT_FALSE(e.use_agent_store);
  EXPECT_EQ(e.job_id, "abc");
  EXPECT_EQ(e.master_port, 29501);
}

TEST(RankEnvTest, TorchrunNeedsMasterForSeveralRanks) {
  EXPECT_THROW_WITH(Detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}}), ConfigError, "MASTER_ADDR is not set",
                    "WORLD_SIZE=2");
  EXPECT_THROW_WITH(Detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}), ConfigError,
                    "MASTER_PORT is not set");
  // One rank needs no rendezvous at all.
  EXPECT_EQ(Detect({{"RANK", "0"}, {"WORLD_SIZE", "1"}}).world_size, 1);
}

TEST(RankEnvTest, MalformedValuesNameTheVariable) {
  EXPECT_THROW_WITH(Detect({{"RANK", "one"}, {"WORLD_SIZE", "2"}}), ConfigError, "RANK='one'", "not an integer");
  EXPECT_THROW_WITH(Detect({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
                    ConfigError, "RANK=2", "WORLD_SIZE=2");
  EXPECT_THROW_WITH(Detect({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
                    ConfigError, "MASTER_PORT=70000", "out of range");
  EXPECT_THROW_WITH(Detect({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), ConfigError, "WORLD_SIZE=0");
  EXPECT_THROW_WITH(Detect({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"},
                            {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
                    ConfigError, "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2");
}

TEST(RankEnvTest, OpenMpiSingleNodeDefaultsToLoopback) {
  RankEnv e = Detect({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(e.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
  EXPECT_EQ(e.master_port, kDefaultMasterPort);
}

TEST(RankEnvTest, OpenMpiAcrossNodesNeedsMasterAddr) {
  EXPECT_THROW_WITH(Detect({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
                    ConfigError, "Open MPI", "MASTER_ADDR is not set", "-x MASTER_ADDR");
  RankEnv e = Detect({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                      {"MASTER_ADDR", "10.200.0.1"}, {"MASTER_PORT", "29816"}});
  EXPECT_EQ(e.master_addr, "10.200.0.1");
  EXPECT_EQ(e.master_port, 29816);
}

TEST(RankEnvTest, MpiInsideSlurmAllocationTrustsMpiVariables) {
  // `salloc -N2 -n4 mpirun`: ranks inherit the MPI daemons' Slurm step variables (0/1 of 2).
  RankEnv e = Detect({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                      {"MASTER_ADDR", "n1"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(e.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
}

TEST(RankEnvTest, MpichPmi) {
  RankEnv e = Detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"},
                      {"MASTER_PORT", "29814"}});
  EXPECT_EQ(e.launcher, Launcher::kPmi);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.master_addr, "127.0.0.1");
  EXPECT_EQ(e.master_port, 29814);
}

std::map<std::string, std::string> SlurmStep() {
  return {{"SLURM_PROCID", "2"},         {"SLURM_LOCALID", "0"},        {"SLURM_NTASKS", "3"},
          {"SLURM_NODEID", "1"},         {"SLURM_GTIDS", "2"},          {"SLURM_JOB_ID", "1234"},
          {"SLURM_STEP_ID", "0"},        {"SLURM_JOB_NODELIST", "n[1-2],gpu7"},
          {"SLURM_STEP_NODELIST", "n[01-02,7]"}};
}

TEST(RankEnvTest, SlurmStepTakesMasterFromTheStepNodeList) {
  RankEnv e = Detect(SlurmStep());
  EXPECT_EQ(e.launcher, Launcher::kSlurm);
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.world_size, 3);
  EXPECT_EQ(e.local_rank, 0);
  EXPECT_EQ(e.local_world_size, 1);
  EXPECT_EQ(e.master_addr, "n01");
  EXPECT_EQ(e.master_port, kSlurmPortBase + 1234);
  EXPECT_EQ(e.job_id, "1234");
}

TEST(RankEnvTest, SlurmLocalWorldFromGtidsAndJobNodeListFallback) {
  auto vars = SlurmStep();
  vars["SLURM_GTIDS"] = "0,1";
  vars["SLURM_PROCID"] = "1";
  vars["SLURM_LOCALID"] = "1";
  vars.erase("SLURM_STEP_NODELIST");
  vars["SLURM_JOB_ID"] = "98765";
  RankEnv e = Detect(vars);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.master_addr, "n1");
  EXPECT_EQ(e.master_port, kSlurmPortBase + 98765 % kSlurmPortSpan);
}

TEST(RankEnvTest, SlurmMasterVariablesWin) {
  auto vars = SlurmStep();
  vars["MASTER_ADDR"] = "10.1.1.1";
  vars["MASTER_PORT"] = "2222";
  vars["SLURM_STEPID"] = "0";
  RankEnv e = Detect(vars);
  EXPECT_EQ(e.master_addr, "10.1.1.1");
  EXPECT_EQ(e.master_port, 2222);
}

TEST(RankEnvTest, SlurmBatchScriptIsOneProcess) {
  // A batch script carries SLURM_PROCID=0 and SLURM_NTASKS=4 but no step id: it is not rank 0 of 4.
  auto vars = SlurmStep();
  vars.erase("SLURM_STEP_ID");
  vars["SLURM_PROCID"] = "0";
  vars["SLURM_NTASKS"] = "4";
  RankEnv e = Detect(vars);
  EXPECT_EQ(e.launcher, Launcher::kNone);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_THAT(e.note, ::testing::HasSubstr("outside an srun step"));
  // The batch step spelled out ("batch", or Slurm's numeric batch/extern ids) is not a rank either.
  for (const char* step : {"batch", "extern", "4294967291", "4294967292"}) {
    vars["SLURM_STEP_ID"] = step;
    EXPECT_EQ(Detect(vars).launcher, Launcher::kNone) << step;
  }
}

TEST(RankEnvTest, SlurmErrorsNameTheVariable) {
  auto vars = SlurmStep();
  vars["SLURM_STEP_NODELIST"] = "n[01-";
  EXPECT_THROW_WITH(Detect(vars), ConfigError, "SLURM_STEP_NODELIST", "n[01-");
  vars = SlurmStep();
  vars.erase("SLURM_JOB_ID");
  EXPECT_THROW_WITH(Detect(vars), ConfigError, "MASTER_PORT", "SLURM_JOB_ID");
}

TEST(RankEnvTest, GlooSocketIfnameIsKept) {
  EXPECT_EQ(Detect({{"GLOO_SOCKET_IFNAME", "eth0,eth1"}}).gloo_socket_ifname, "eth0,eth1");
}

}  // namespace
}  // namespace lakerun::dist
