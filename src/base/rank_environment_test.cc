// Which rank a process is, from each launcher's variables (environment fixtures, no real launcher).
#include "lakerun/base/rank_environment.h"

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun {
namespace {

RankEnvironment Detect(std::map<std::string, std::string> vars) {
  return DetectRankEnvironment(MapEnvironment(std::move(vars)));
}

TEST(RankEnvironmentTest, NothingIsRankZeroOfOne) {
  const RankEnvironment e = Detect({{"HOME", "/root"}});
  EXPECT_EQ(e.launcher, Launcher::kNone);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.restart_count, 0);
  EXPECT_EQ(e.job_id, "");
  EXPECT_FALSE(e.RestartedByLakerun());
}

TEST(RankEnvironmentTest, LakerunLauncherGivesRankAttemptAndJob) {
  const RankEnvironment e = Detect({{"LAKERUN_LAUNCHER", "1"}, {"RANK", "1"}, {"LOCAL_RANK", "1"},
                                    {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}, {"LAKERUN_RESTART_COUNT", "2"},
                                    {"TORCHELASTIC_RESTART_COUNT", "2"}, {"LAKERUN_RUN_ID", "0123abcd"},
                                    {"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"OMPI_COMM_WORLD_RANK", "0"}});
  EXPECT_EQ(e.launcher, Launcher::kLakerun);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.restart_count, 2);
  EXPECT_EQ(e.job_id, "0123abcd");
  EXPECT_TRUE(e.RestartedByLakerun());
}

TEST(RankEnvironmentTest, LakerunAttemptFallsBackToTorchelasticsSpelling) {
  const RankEnvironment e = Detect({{"LAKERUN_LAUNCHER", "1"}, {"RANK", "0"}, {"LOCAL_RANK", "0"},
                                    {"WORLD_SIZE", "1"}, {"LOCAL_WORLD_SIZE", "1"},
                                    {"TORCHELASTIC_RESTART_COUNT", "3"}});
  EXPECT_EQ(e.restart_count, 3);
  EXPECT_TRUE(e.RestartedByLakerun());
}

TEST(RankEnvironmentTest, TorchrunRestartsAreNotLakerunRestarts) {
  const RankEnvironment e = Detect({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_RESTART_COUNT", "1"},
                                    {"TORCHELASTIC_RUN_ID", "none"}});
  EXPECT_EQ(e.launcher, Launcher::kTorchrun);
  EXPECT_EQ(e.restart_count, 1);
  EXPECT_EQ(e.job_id, "none");
  EXPECT_FALSE(e.RestartedByLakerun());
}

// The rank needs no rendezvous address: tracking asks before (or without) joining the job.
TEST(RankEnvironmentTest, RankWithoutRendezvousVariables) {
  EXPECT_EQ(Detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}}).rank, 1);
  EXPECT_EQ(Detect({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "0"}}).rank, 3);
}

TEST(RankEnvironmentTest, MpiAndSlurmRanks) {
  const RankEnvironment ompi = Detect({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(ompi.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(ompi.rank, 1);
  const RankEnvironment pmi = Detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}});
  EXPECT_EQ(pmi.launcher, Launcher::kPmi);
  EXPECT_EQ(pmi.rank, 1);
  const RankEnvironment slurm = Detect({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "3"}, {"SLURM_STEPID", "5"},
                                        {"SLURM_GTIDS", "1,2"}, {"SLURM_LOCALID", "1"}, {"SLURM_JOB_ID", "77"}});
  EXPECT_EQ(slurm.launcher, Launcher::kSlurm);
  EXPECT_EQ(slurm.rank, 2);
  EXPECT_EQ(slurm.local_world_size, 2);
  EXPECT_EQ(slurm.job_id, "77");
  // `salloc mpirun`: the ranks inherit the MPI daemons' Slurm step variables; MPI's are the ranks'.
  const RankEnvironment both = Detect({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                       {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}});
  EXPECT_EQ(both.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(both.rank, 3);
}

TEST(RankEnvironmentTest, NotARankOfAJob) {
  // RANK alone names no job.
  EXPECT_EQ(Detect({{"RANK", "3"}}).launcher, Launcher::kNone);
  EXPECT_EQ(Detect({{"RANK", "3"}}).rank, 0);
  // A Slurm batch script carries SLURM_PROCID=0 and SLURM_NTASKS=4 but is one process.
  const RankEnvironment batch = Detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "batch"}});
  EXPECT_EQ(batch.launcher, Launcher::kNone);
  EXPECT_THAT(batch.note, ::testing::HasSubstr("outside an srun step"));
}

TEST(RankEnvironmentTest, MalformedValuesNameTheLauncherAndVariable) {
  EXPECT_THROW_WITH(Detect({{"RANK", "one"}, {"WORLD_SIZE", "2"}}), ConfigError, "torchrun environment",
                    "RANK='one'", "not an integer");
  EXPECT_THROW_WITH(Detect({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}), ConfigError,
                    "Open MPI environment", "OMPI_COMM_WORLD_RANK=2", "not below");
  EXPECT_THROW_WITH(Detect({{"LAKERUN_LAUNCHER", "1"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}}), ConfigError,
                    "lakerun launcher environment", "LOCAL_RANK is not set");
  EXPECT_THROW_WITH(Detect({{"LAKERUN_LAUNCHER", "1"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"},
                            {"LOCAL_WORLD_SIZE", "1"}, {"LAKERUN_RESTART_COUNT", "-1"}}),
                    ConfigError, "LAKERUN_RESTART_COUNT=-1", "out of range");
}

TEST(RankEnvironmentTest, EmptyValuesCountAsUnset) {
  EXPECT_EQ(Detect({{"RANK", "1"}, {"WORLD_SIZE", ""}}).launcher, Launcher::kNone);
}

}  // namespace
}  // namespace lakerun
