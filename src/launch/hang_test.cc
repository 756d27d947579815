// Hang detection: the verdict (hang_judge.h) on hand-made observations, then whole jobs of test ranks that mark
// collectives on the launcher's progress board and hang in each way a rank can.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launch/hang_judge.h"
#include "launcher_test_fixture.h"

namespace lakerun::launch::internal {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr milliseconds kTimeout{60000};

// Rank `rank` on node 0 that entered `entered` collectives, is (or is not) inside the last, quiet for `quiet_s`.
RankObservation Rank(int rank, uint64_t entered, bool inside, int quiet_s,
                     ProcessState state = ProcessState::kSleeping) {
  RankObservation r;
  r.rank = rank;
  r.pid = 1000 + rank;
  r.progress.reported = true;
  r.progress.pid = r.pid;
  r.progress.entered = entered;
  r.progress.in_collective = inside;
  r.progress.last = rdzv::Collective::kAllReduce;
  r.progress.quiet = milliseconds(quiet_s * 1000);
  r.state = state;
  return r;
}

std::vector<int> Ranks(const std::vector<RankObservation>& observations) {
  std::vector<int> ranks;
  for (const auto& r : observations) ranks.push_back(r.rank);
  return ranks;
}

TEST(HangJudgeTest, NoVerdictWhileEveryRankMoves) {
  EXPECT_FALSE(JudgeHang({Rank(0, 7, true, 1), Rank(1, 7, false, 2), Rank(2, 6, false, 0)}, kTimeout));
  EXPECT_FALSE(JudgeHang({}, kTimeout));
  // A rank behind, but not yet for the timeout: a slow step, not a hang.
  EXPECT_FALSE(JudgeHang({Rank(0, 8, true, 61), Rank(1, 7, false, 59, ProcessState::kRunning)}, kTimeout));
}

TEST(HangJudgeTest, BlamesTheStoppedRankThatNeverEnteredTheCollective) {
  const auto verdict = JudgeHang(
      {Rank(0, 8, true, 62), Rank(1, 8, true, 61), Rank(2, 7, false, 63, ProcessState::kStopped), Rank(3, 8, true, 61)},
      kTimeout);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(Ranks(verdict->culprits), std::vector<int>({2}));
  EXPECT_EQ(Ranks(verdict->waiting), std::vector<int>({0, 1, 3}));
  EXPECT_EQ(verdict->collective, 8u);
  const std::string text = verdict->DescribeCulprit(verdict->culprits[0]);
  EXPECT_THAT(text, HasSubstr("hangs the job: stopped (SIGSTOP or SIGTSTP), no progress for 63 s"));
  EXPECT_THAT(text, HasSubstr("it last entered collective #7 (all-reduce) and returned from it"));
  EXPECT_THAT(text, HasSubstr("ranks 0-1, 3 have waited 62 s in collective #8 (all-reduce)"));
}

TEST(HangJudgeTest, StoppedOrInDStateInsideTheCollectiveIsStillTheCulpritAndComesFirst) {
  const auto verdict = JudgeHang({Rank(0, 8, true, 70), Rank(1, 8, true, 70, ProcessState::kDiskSleep),
                                  Rank(2, 6, false, 65, ProcessState::kRunning)},
                                 kTimeout);
  ASSERT_TRUE(verdict);
  // D state cannot move at all; the running rank behind is named too, after it.
  EXPECT_EQ(Ranks(verdict->culprits), std::vector<int>({1, 2}));
  EXPECT_THAT(verdict->DescribeCulprit(verdict->culprits[0]),
              HasSubstr("in D state (uninterruptible sleep: waiting on I/O or the kernel), no progress for 70 s; it "
                        "is inside collective #8 (all-reduce) too"));
}

TEST(HangJudgeTest, AWorkingRankIsNotBlamedUnlessAskedAndThenShowsItsCpuUse) {
  RankObservation spinning = Rank(1, 3, false, 90, ProcessState::kRunning);
  spinning.cpu_permille = 995;
  spinning.idle = milliseconds(0);
  EXPECT_FALSE(JudgeHang({Rank(0, 4, true, 88), spinning}, kTimeout));
  // Idle for the timeout (no CPU, no I/O): blamed after all.
  RankObservation idle = spinning;
  idle.idle = milliseconds(60000);
  EXPECT_TRUE(JudgeHang({Rank(0, 4, true, 88), idle}, kTimeout));
  // A stopped rank never works, whatever its last sample said.
  RankObservation stopped = spinning;
  stopped.state = ProcessState::kStopped;
  EXPECT_TRUE(JudgeHang({Rank(0, 4, true, 88), stopped}, kTimeout));
  const auto verdict = JudgeHang({Rank(0, 4, true, 88), spinning}, kTimeout, Working::kIsNot);
  ASSERT_TRUE(verdict);
  EXPECT_THAT(verdict->DescribeCulprit(verdict->culprits[0]),
              HasSubstr("running (using 99% of a CPU), no progress for 90 s"));
}

TEST(HangJudgeTest, ARankThatExitedWhileTheOthersWaitIsTheCulprit) {
  const auto verdict = JudgeHang({Rank(0, 5, true, 61), Rank(1, 4, false, 61, ProcessState::kExited)}, kTimeout);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(Ranks(verdict->culprits), std::vector<int>({1}));
  EXPECT_THAT(verdict->DescribeCulprit(verdict->culprits[0]),
              HasSubstr("gone: it exited while the others wait for it"));
}

TEST(HangJudgeTest, ARankThatNeverReportedIsTheCulpritOnceTheOthersWait) {
  RankObservation silent;
  silent.rank = 1;
  silent.pid = 1001;
  silent.state = ProcessState::kSleeping;
  EXPECT_FALSE(JudgeHang({Rank(0, 1, true, 10), silent}, kTimeout));
  const auto verdict = JudgeHang({Rank(0, 1, true, 60), silent}, kTimeout);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(Ranks(verdict->culprits), std::vector<int>({1}));
  EXPECT_THAT(verdict->DescribeCulprit(verdict->culprits[0]),
              HasSubstr("it reported no progress (it is not past lakerun::dist::Init"));
}

TEST(HangJudgeTest, EveryRankWaitingIsADeadlockWithoutACulprit) {
  const auto same = JudgeHang({Rank(0, 9, true, 61), Rank(1, 9, true, 62)}, kTimeout);
  ASSERT_TRUE(same);
  EXPECT_TRUE(same->culprits.empty());
  EXPECT_THAT(same->DescribeDeadlock(kTimeout),
              HasSubstr("all have waited at least 60 s in collective #9 (all-reduce) and none is behind"));
  // Waiting in an earlier collective than the others is being behind (ranks calling different collectives).
  const auto different = JudgeHang({Rank(0, 9, true, 61), Rank(1, 10, true, 62)}, kTimeout);
  ASSERT_TRUE(different);
  EXPECT_EQ(Ranks(different->culprits), std::vector<int>({0}));
  EXPECT_THAT(different->DescribeCulprit(different->culprits[0]),
              HasSubstr("it waits in collective #9 (all-reduce), which the others have left; rank 1 has waited 62 s "
                        "in collective #10 (all-reduce)"));
}

TEST(HangJudgeTest, ObservationsSurviveTheHeartbeatEncoding) {
  RankObservation stopped = Rank(5, 12, false, 61, ProcessState::kStopped);
  stopped.node = 1;
  stopped.cpu_permille = 0;
  stopped.idle = milliseconds(7000);
  RankObservation silent;
  silent.rank = 6;
  silent.node = 1;
  silent.pid = 77;
  const auto decoded = DecodeObservations(EncodeObservations({stopped, silent}) + "garbage line\n");
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].rank, 5);
  EXPECT_EQ(decoded[0].node, 1);
  EXPECT_EQ(decoded[0].pid, stopped.pid);
  EXPECT_EQ(decoded[0].progress.entered, 12u);
  EXPECT_FALSE(decoded[0].progress.in_collective);
  EXPECT_EQ(decoded[0].progress.quiet, milliseconds(61000));
  EXPECT_EQ(decoded[0].progress.last, rdzv::Collective::kAllReduce);
  EXPECT_EQ(decoded[0].state, ProcessState::kStopped);
  EXPECT_EQ(decoded[0].cpu_permille, 0);
  EXPECT_EQ(decoded[0].idle, milliseconds(7000));
  EXPECT_EQ(decoded[1].idle, milliseconds(-1));
  EXPECT_FALSE(decoded[1].progress.reported);
  EXPECT_EQ(decoded[1].state, ProcessState::kUnknown);
}

TEST(HangJudgeTest, RankListJoinsRuns) {
  EXPECT_EQ(RankList({5, 0, 1, 2, 7, 8}), "0-2, 5, 7-8");
  EXPECT_EQ(RankList({3}), "3");
}

}  // namespace
}  // namespace lakerun::launch::internal

namespace lakerun::launch::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class HangTest : public LauncherTest {
 protected:
  // `n` test ranks that mark 3 collectives, then block in the 4th, with `rank_flags` after; hang timeout 2 s.
  lakerun::launch::LaunchOptions HangOptions(int n, std::vector<std::string> rank_flags) {
    std::vector<std::string> args = {"--pidfile", pid_dir(), "--collectives", "4"};
    args.insert(args.end(), rank_flags.begin(), rank_flags.end());
    auto options = Options(n, args);
    options.hang_timeout = std::chrono::seconds(2);
    options.grace_period = std::chrono::milliseconds(500);
    return options;
  }
};

TEST_F(HangTest, AStoppedRankIsNamedWithItsStateCollectiveAndStacks) {
  const auto started = Clock::now();
  Finished f = RunInProcess(HangOptions(3, {"--hang-rank", "1", "--hang-how", "stop"}));
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_EQ(f.exit_code, 124) << f.err;
  EXPECT_THAT(f.err, HasSubstr("rank 1 (pid "));
  EXPECT_THAT(f.err, HasSubstr(") hangs the job: stopped (SIGSTOP or SIGTSTP), no progress for "));
  // Rank 2 may start its wait a moment after rank 0 (a loaded machine): the verdict comes when the first waiter has
  // waited the timeout, and lists those that have.
  EXPECT_THAT(f.err, ContainsRegex("it last entered collective #3 \\(all-reduce\\) and returned from it; "
                                   "(rank 0 has|rank 2 has|ranks 0, 2 have) waited"));
  EXPECT_THAT(f.err, HasSubstr("in collective #4 (barrier) (--hang-timeout 2 s)"));
  EXPECT_THAT(f.err, HasSubstr("stacks of rank 1 (pid"));
  if (::geteuid() == 0) {
    EXPECT_THAT(f.err, HasSubstr("do_signal_stop"));  // its kernel stack
  }
  EXPECT_THAT(f.err, HasSubstr("error: rank 1 hangs the job"));
  EXPECT_THAT(f.err, HasSubstr("exit code 124"));
  EXPECT_LT(seconds, 2 + 20) << "named within the hang timeout plus the sampling period and gdb's bound";
  EXPECT_THAT(Survivors(), IsEmpty());
}

TEST_F(HangTest, ARankIdleOutsideAnyCollectiveIsNamedAsSleeping) {
  Finished f = RunInProcess(HangOptions(2, {"--hang-rank", "0", "--hang-how", "sleep"}));
  EXPECT_EQ(f.exit_code, 124) << f.err;
  EXPECT_THAT(f.err, HasSubstr("rank 0 (pid "));
  EXPECT_THAT(f.err, HasSubstr("hangs the job: sleeping, no progress for "));
  EXPECT_THAT(f.err, HasSubstr("rank 1 has waited"));
  EXPECT_THAT(Survivors(), IsEmpty());
}

// A rank that keeps a CPU busy is working (a long checkpoint write or an evaluation on one rank looks the same): not
// a hang. When its peer's collective times out, the report still names it as the rank that held the peer up.
TEST_F(HangTest, AWorkingRankIsNotAHangButIsNamedWhenAPeersCollectiveTimesOut) {
  auto options = HangOptions(2, {"--hang-rank", "0", "--hang-how", "spin", "--give-up-after", "5"});
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_THAT(f.err, Not(HasSubstr("(--hang-timeout 2 s)")));  // no verdict at the hang timeout
  EXPECT_THAT(f.err, ContainsRegex("rank 1 exited with code 1 after waiting [0-9]+ s in collective #4; it was held "
                                   "up by rank 0 \\(pid "));
  EXPECT_THAT(f.err, HasSubstr("which hangs the job: running (using "));
  EXPECT_THAT(Survivors(), IsEmpty());
}

TEST_F(HangTest, ARankThatExitedEarlyIsBlamedForTheOthersWait) {
  Finished f = RunInProcess(HangOptions(2, {"--hang-rank", "1", "--hang-how", "exit"}));
  EXPECT_EQ(f.exit_code, 124) << f.err;
  EXPECT_THAT(f.err, HasSubstr("hangs the job: gone: it exited while the others wait for it"));
  EXPECT_THAT(f.err, Not(HasSubstr("stacks of rank 1")));
  EXPECT_THAT(Survivors(), IsEmpty());
}

TEST_F(HangTest, EveryRankWaitingIsReportedAsAStuckCollective) {
  Finished f = RunInProcess(HangOptions(2, {}));
  EXPECT_EQ(f.exit_code, 124) << f.err;
  EXPECT_THAT(f.err, HasSubstr("hangs with every rank: all have waited at least 2 s in collective #4 (barrier)"));
  EXPECT_THAT(Survivors(), IsEmpty());
}

TEST_F(HangTest, ARankWhoseCollectiveTimedOutBlamesThePeerThatHeldItUp) {
  auto options = HangOptions(2, {"--hang-rank", "1", "--hang-how", "stop", "--give-up-after", "2"});
  options.hang_timeout = std::chrono::seconds(60);  // the collective's own timeout comes first
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_THAT(f.err, ContainsRegex("rank 0 exited with code 1 after waiting [0-9]+ s in collective #4; it was held "
                                   "up by rank 1 \\(pid "));
  EXPECT_THAT(f.err, HasSubstr("which hangs the job: stopped (SIGSTOP or SIGTSTP)"));
  EXPECT_THAT(Survivors(), IsEmpty());
}

TEST_F(HangTest, AHungAttemptIsRestartedUnderMaxRestarts) {
  auto options = HangOptions(2, {"--hang-rank", "1", "--hang-how", "stop", "--hang-attempt", "0"});
  options.max_restarts = 1;
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.err, HasSubstr("restarting all 2 ranks (restart 1 of 1) after: rank 1 hangs the job: stopped"));
  EXPECT_THAT(Survivors(), IsEmpty());
}

TEST_F(HangTest, HangTimeoutZeroGivesTheRanksNoBoard) {
  auto options = HangOptions(1, {});
  options.hang_timeout = std::chrono::milliseconds(0);
  options.extra_env["LAKERUN_PROGRESS_BOARD"] = "/proc/1/fd/0";  // as if inherited from an outer launcher
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 67) << f.err;
  EXPECT_THAT(f.err, HasSubstr("--collectives needs a progress board"));
  EXPECT_THAT(f.err, Not(HasSubstr("warning: hang detection is off")));  // the variable came empty, not unusable
}

}  // namespace
}  // namespace lakerun::launch::testing
