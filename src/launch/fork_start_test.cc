// `lakerun launch --start-method fork` end to end: the test rank calls ForkPoint() (what lakerun::dist::Init() does),
// the template forks the ranks there, and the ranks are then supervised like exec-started ones.
#include <unistd.h>

#include "lakerun/base/error.h"
#include "launch/launcher_test_fixture.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace lakerun::launch::testing;

class ForkStartTest : public LauncherTest {
 protected:
  lakerun::launch::LaunchOptions ForkOptions(int n, std::vector<std::string> rank_args) {
    lakerun::launch::LaunchOptions options = Options(n, std::move(rank_args));
    options.start_method = lakerun::launch::StartMethod::kFork;
    return options;
  }
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ForkStartTest, RanksGetTheirOwnEnvironmentProcessGroupAndTheLauncherAsParent) {
  for (int n : {1, 2, 4}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Finished f = RunInProcess(ForkOptions(n, {"--before-fork", "before the fork", "--fork-point", "--print-env"}));
    ASSERT_EQ(f.exit_code, 0) << f.err;
    auto env = ParseEnv(f.out);
    ASSERT_EQ(env.size(), static_cast<size_t>(n)) << f.out;
    for (int r = 0; r < n; ++r) {
      auto& e = env[r];
      EXPECT_EQ(e["RANK"], std::to_string(r));
      EXPECT_EQ(e["LOCAL_RANK"], std::to_string(r));
      EXPECT_EQ(e["ROLE_RANK"], std::to_string(r));
      EXPECT_EQ(e["WORLD_SIZE"], std::to_string(n));
      EXPECT_EQ(e["MASTER_PORT"], env[0]["MASTER_PORT"]);
      EXPECT_EQ(e["LAKERUN_FORK_FD"], "<unset>");  // a rank is not a template
      EXPECT_EQ(e["PGID_IS_PID"], "1");
      EXPECT_EQ(e["PARENT_PID"], std::to_string(::getpid()));  // re-parented to the launcher (this process)
    }
    // Output before the fork point is flushed once, by the template, as rank 0's.
    EXPECT_EQ(Count(f.out, "before the fork"), 1u) << f.out;
    EXPECT_THAT(f.out, HasSubstr("[rank0] before the fork\n"));
  }
}

// The template may be a child of a wrapper (`sh -c` that forks instead of exec'ing): the ranks still end up the
// launcher's children, since the wrapper is no subreaper.
TEST_F(ForkStartTest, WorksThroughAWrapperThatForksTheProgram) {
  auto options = ForkOptions(2, {});
  options.command = {"/bin/sh", "-c", rank_ + " --fork-point --print-env; exit $?"};
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto env = ParseEnv(f.out);
  ASSERT_EQ(env.size(), 2u) << f.out;
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(env[r]["RANK"], std::to_string(r));
    EXPECT_EQ(env[r]["PARENT_PID"], std::to_string(::getpid()));
  }
}

TEST_F(ForkStartTest, CommandLineFlagSelectsIt) {
  Finished f = RunLauncher({"-n", "2", "--start-method", "fork", "--", rank_, "--fork-point", "--print-env"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto env = ParseEnv(f.out);
  ASSERT_EQ(env.size(), 2u) << f.out;
  EXPECT_EQ(env[1]["RANK"], "1");
  Finished bad = RunLauncher({"-n", "2", "--start-method", "spawn", "--", rank_});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--start-method must be exec or fork, got 'spawn'"));
}

TEST_F(ForkStartTest, FirstFailureIsNamedAndNoProcessIsLeft) {
  auto options = ForkOptions(3, {"--fork-point", "--pidfile", pid_dir(), "--grandchild", "--fail-rank", "1",
                                 "--fail-how", "exit:3", "--fail-after", "0.5", "--sleep", "60"});
  options.grace_period = std::chrono::seconds(1);
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_THAT(f.err, HasSubstr("error: rank 1 exited with code 3"));
  EXPECT_THAT(f.err, HasSubstr("rank 1 is about to fail: exit:3"));
  EXPECT_EQ(RankPids().size(), 6u);  // three ranks and their grandchildren
  EXPECT_THAT(Survivors(), ::testing::IsEmpty());
}

TEST_F(ForkStartTest, SigtermToTheLauncherIsForwardedAndLeavesNoProcess) {
  SignalTheLauncherOfThreeRanks(SIGTERM, {"--start-method", "fork"}, {"--fork-point"});
}

TEST_F(ForkStartTest, SigkillToTheLauncherLeavesNoProcess) {
  SignalTheLauncherOfThreeRanks(SIGKILL, {"--start-method", "fork"}, {"--fork-point"});
}

TEST_F(ForkStartTest, MaxRestartsForksTheRanksFromAFreshTemplate) {
  auto options = ForkOptions(2, {"--fork-point", "--print-env", "--pidfile", pid_dir(), "--fail-rank", "1",
                                 "--fail-attempt", "0", "--fail-how", "exit:5", "--sleep", "0.3"});
  options.max_restarts = 2;
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.err, HasSubstr("restarting all 2 ranks (restart 1 of 2) after: rank 1 exited with code 5"));
  EXPECT_THAT(f.out, HasSubstr("[rank1] LAKERUN_RESTART_COUNT=1\n"));
  EXPECT_TRUE(Exists(PidFile(0, 1)));
  EXPECT_TRUE(Exists(PidFile(1, 1)));
}

TEST_F(ForkStartTest, ProgramThatNeverReachesTheForkPointIsAClearError) {
  EXPECT_THROW_WITH(lakerun::launch::Launch(ForkOptions(2, {"--print-env"})), lakerun::ConfigError,
                    "--start-method fork", "exited with code 0 without reaching its fork point",
                    "--start-method exec");
}

TEST_F(ForkStartTest, ThreadsRunningAtTheForkPointAreRefused) {
  EXPECT_THROW_WITH(lakerun::launch::Launch(ForkOptions(2, {"--thread-before-fork", "--fork-point"})),
                    lakerun::ConfigError, "--start-method fork", "2 threads are running at the fork point",
                    "a fork copies only the calling thread");
}

TEST_F(ForkStartTest, TemplateFailingBeforeTheForkPointFailsAsRankZero) {
  Finished f = RunInProcess(ForkOptions(2, {"--fail-rank", "0", "--fail-how", "exit:4"}));
  EXPECT_EQ(f.exit_code, 4) << f.err;
  EXPECT_THAT(f.err, HasSubstr("rank 0 exited with code 4 before its fork point (as the fork-start template)"));
  EXPECT_THAT(f.err, HasSubstr("rank 0 is about to fail: exit:4"));
  EXPECT_THAT(f.err, Not(HasSubstr("[rank1]")));
}

}  // namespace
