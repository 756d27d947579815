// The progress board: what a rank marks is what its launcher reads, across processes; a rank without a usable board
// runs without one.
#include "lakerun/rdzv/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace lakerun::rdzv {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// Sets the two variables for the duration of a test.
class BoardEnvironment {
 public:
  BoardEnvironment(const std::string& location, const std::string& slot) {
    ::setenv(kProgressBoardEnv, location.c_str(), 1);
    ::setenv(kProgressSlotEnv, slot.c_str(), 1);
  }
  ~BoardEnvironment() {
    ::unsetenv(kProgressBoardEnv);
    ::unsetenv(kProgressSlotEnv);
  }
};

TEST(ProgressBoardTest, EmptySlotsReportNothing) {
  ProgressBoard board(3);
  EXPECT_EQ(board.slots(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(board.Read(i).reported);
  EXPECT_THAT(board.Location(), HasSubstr("/proc/" + std::to_string(::getpid()) + "/fd/"));
  EXPECT_THROW(board.Read(3), std::exception);
}

TEST(ProgressBoardTest, WhatARankMarksIsWhatTheLauncherReads) {
  ProgressBoard board(2);
  BoardEnvironment env(board.Location(), "1");
  std::unique_ptr<ProgressReporter> reporter = ProgressReporter::FromEnvironment();
  ASSERT_NE(reporter, nullptr);
  RankProgress p = board.Read(1);
  EXPECT_TRUE(p.reported);
  EXPECT_EQ(p.pid, ::getpid());
  EXPECT_EQ(p.entered, 0u);
  EXPECT_FALSE(p.in_collective);
  EXPECT_FALSE(board.Read(0).reported);

  reporter->Enter(Collective::kBroadcast);
  std::this_thread::sleep_for(milliseconds(60));  // the board's clock is the coarse one (a tick of up to 10 ms)
  p = board.Read(1);
  EXPECT_EQ(p.entered, 1u);
  EXPECT_TRUE(p.in_collective);
  EXPECT_EQ(p.last, Collective::kBroadcast);
  EXPECT_GE(p.quiet, milliseconds(40));
  reporter->Leave();
  p = board.Read(1);
  EXPECT_FALSE(p.in_collective);
  EXPECT_LT(p.quiet, milliseconds(40));
  { ProgressReporter::Scope scope(reporter.get(), Collective::kAllGather); }
  EXPECT_EQ(board.Read(1).entered, 2u);
  EXPECT_FALSE(board.Read(1).in_collective);

  board.Clear();
  EXPECT_FALSE(board.Read(1).reported);
}

TEST(ProgressBoardTest, AScopeLeftByAnExceptionStaysInTheCollective) {
  ProgressBoard board(1);
  BoardEnvironment env(board.Location(), "0");
  std::unique_ptr<ProgressReporter> reporter = ProgressReporter::FromEnvironment();
  ASSERT_NE(reporter, nullptr);
  try {
    ProgressReporter::Scope scope(reporter.get(), Collective::kAllReduce);
    throw std::runtime_error("the collective timed out");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(board.Read(0).in_collective);
  { ProgressReporter::Scope next(reporter.get(), Collective::kBarrier); }  // the next collective moves on
  EXPECT_FALSE(board.Read(0).in_collective);
  EXPECT_EQ(board.Read(0).entered, 2u);
}

TEST(ProgressBoardTest, AnotherProcessWritesItsSlot) {
  ProgressBoard board(2);
  BoardEnvironment env(board.Location(), "0");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // Opens the board by its path, as an exec'd rank does.
    std::unique_ptr<ProgressReporter> reporter = ProgressReporter::FromEnvironment();
    if (!reporter) _exit(3);
    reporter->Enter(Collective::kGradientAllReduce);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    _exit(0);
  }
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const RankProgress p = board.Read(0);
  EXPECT_EQ(p.pid, child);
  EXPECT_TRUE(p.in_collective);
  EXPECT_EQ(p.last, Collective::kGradientAllReduce);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(ProgressBoardTest, WithoutAUsableBoardARankRunsWithoutOne) {
  EXPECT_EQ(ProgressReporter::FromEnvironment(), nullptr);  // not under a launcher
  {
    BoardEnvironment env("", "0");  // a launcher with hang detection off
    EXPECT_EQ(ProgressReporter::FromEnvironment(), nullptr);
  }
  ProgressBoard board(1);
  for (const auto& [location, slot] : std::vector<std::pair<std::string, std::string>>{
           {"/nonexistent/board", "0"}, {board.Location(), "1"}, {board.Location(), "x"}, {"/proc/self/stat", "0"}}) {
    BoardEnvironment env(location, slot);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(ProgressReporter::FromEnvironment(), nullptr) << location << " " << slot;
    EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("warning: hang detection is off for this rank"));
  }
}

TEST(ProgressBoardTest, CollectivesHaveNames) {
  EXPECT_STREQ(CollectiveName(Collective::kAllReduce), "all-reduce");
  EXPECT_STREQ(CollectiveName(Collective::kSharedMemoryReduce), "shared-memory gradient all-reduce");
  EXPECT_STREQ(CollectiveName(Collective::kReduceScatter), "gradient reduce-scatter");
  EXPECT_STREQ(CollectiveName(Collective::kSharedMemoryAllGather), "shared-memory all-gather");
  EXPECT_STREQ(CollectiveName(static_cast<Collective>(99)), "collective");
}

}  // namespace
}  // namespace lakerun::rdzv
