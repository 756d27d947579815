// The function API end to end: this test binary re-executes itself as the ranks (main() below calls MaybeRunRank
// before gtest sees argv), so every test here runs real processes.
#include "lakerun/launch/function.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "lakerun_testing/matchers.h"

namespace {

using lakerun::launch::RunOptions;

int EnvInt(const char* name) { return std::atoi(std::getenv(name)); }

// Returns "<args>:<rank>/<world>".
std::string Describe(const std::string& args) {
  return args + ":" + std::to_string(EnvInt("RANK")) + "/" + std::to_string(EnvInt("WORLD_SIZE"));
}
LAKERUN_REGISTER_FUNCTION(describe, Describe);

// Rank 1 throws; the others wait long enough to be stopped by the launcher.
std::string FailOnRankOne(const std::string&) {
  if (EnvInt("RANK") == 1) throw std::runtime_error("bad shard 17 on rank one");
  std::this_thread::sleep_for(std::chrono::seconds(30));
  return "unreachable";
}
LAKERUN_REGISTER_FUNCTION(fail_on_rank_one, FailOnRankOne);

// A result of the requested size.
std::string Sized(const std::string& args) { return std::string(std::stoul(args), 'r'); }
LAKERUN_REGISTER_FUNCTION(sized, Sized);

// Fails on the first attempt only.
std::string FlakyOnce(const std::string&) {
  if (EnvInt("LAKERUN_RESTART_COUNT") == 0 && EnvInt("RANK") == 0) std::exit(3);
  return "attempt " + std::to_string(EnvInt("LAKERUN_RESTART_COUNT"));
}
LAKERUN_REGISTER_FUNCTION(flaky_once, FlakyOnce);

// Dies by a signal without a result.
std::string Crash(const std::string&) {
  std::abort();
}
LAKERUN_REGISTER_FUNCTION(crash, Crash);

struct Scale {
  int32_t factor;
  double offset;
};
double Scaled(const Scale& s) { return s.factor * EnvInt("RANK") + s.offset; }
LAKERUN_REGISTER_TYPED_FUNCTION(scaled, Scaled);

TEST(FunctionTest, TypedFunctionsPassValuesAsBytes) {
  RunOptions options;
  options.processes = 2;
  EXPECT_EQ(lakerun::launch::RunTyped<double>(options, "scaled", Scale{10, 0.5}), (std::vector<double>{0.5, 10.5}));
  EXPECT_THROW_WITH(lakerun::launch::FromBytes<double>("abc"), lakerun::InvalidArgument, "expected 8 bytes",
                    "got 3");
}

TEST(FunctionTest, ReturnsEveryRanksResultInRankOrder) {
  RunOptions options;
  options.processes = 3;
  auto results = lakerun::launch::run(options, "describe", std::string("a\0b", 3));
  ASSERT_EQ(results.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(results[r], std::string("a\0b", 3) + ":" + std::to_string(r) + "/3");
}

// Fork start: the binary is re-executed once and the ranks are forked from it in MaybeRunRank().
TEST(FunctionTest, ForkStartReturnsEveryRanksResultAndSurfacesExceptions) {
  RunOptions options;
  options.processes = 3;
  options.start_method = lakerun::launch::StartMethod::kFork;
  auto results = lakerun::launch::run(options, "describe", std::string("xy"));
  ASSERT_EQ(results.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(results[r], "xy:" + std::to_string(r) + "/3");
  options.processes = 2;
  options.grace_period = std::chrono::milliseconds(500);
  EXPECT_THROW_WITH(lakerun::launch::Run(options, "fail_on_rank_one"), lakerun::launch::RankFunctionError,
                    "rank 1: function 'fail_on_rank_one' failed", "bad shard 17 on rank one");
}

TEST(FunctionTest, ExceptionOnOneRankSurfacesWithRankAndMessage) {
  RunOptions options;
  options.processes = 2;
  options.grace_period = std::chrono::milliseconds(500);
  try {
    lakerun::launch::Run(options, "fail_on_rank_one");
    FAIL() << "Run did not throw";
  } catch (const lakerun::launch::RankFunctionError& e) {
    EXPECT_EQ(e.rank(), 1);
    EXPECT_EQ(e.rank_message(), "bad shard 17 on rank one");
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("rank 1: function 'fail_on_rank_one' failed"));
  }
}

TEST(FunctionTest, RankDyingWithoutResultIsNamed) {
  RunOptions options;
  options.processes = 1;
  EXPECT_THROW_WITH(lakerun::launch::Run(options, "crash"), lakerun::DistError, "function 'crash'", "rank 0",
                    "SIGABRT");
}

TEST(FunctionTest, SizeLimitsAreEnforcedBothWays) {
  RunOptions options;
  options.processes = 1;
  options.max_payload_bytes = 1000;
  EXPECT_THROW_WITH(lakerun::launch::Run(options, "sized", std::string(1001, 'a')), lakerun::InvalidArgument,
                    "1001 bytes", "limit of 1000 bytes");
  EXPECT_EQ(lakerun::launch::Run(options, "sized", "1000"), (std::vector<std::string>{std::string(1000, 'r')}));
  EXPECT_THROW_WITH(lakerun::launch::Run(options, "sized", "1001"), lakerun::launch::RankFunctionError,
                    "result of 1001 bytes exceeds the limit of 1000 bytes");
}

TEST(FunctionTest, UnknownFunctionIsRejectedBeforeStarting) {
  EXPECT_THROW_WITH(lakerun::launch::Run(RunOptions{}, "nope"), lakerun::InvalidArgument, "'nope'",
                    "registered: crash, describe, fail_on_rank_one, flaky_once, scaled, sized");
}

TEST(FunctionTest, RestartsAndReturnsTheLastAttemptsResults) {
  RunOptions options;
  options.processes = 2;
  options.max_restarts = 1;
  EXPECT_EQ(lakerun::launch::Run(options, "flaky_once"), (std::vector<std::string>{"attempt 1", "attempt 1"}));
}

TEST(FunctionTest, ConcurrentRunsInOneProcessStayApart) {
  RunOptions options;
  options.processes = 2;
  std::vector<std::string> a, b;
  std::thread ta([&] { a = lakerun::launch::Run(options, "describe", "A"); });
  std::thread tb([&] { b = lakerun::launch::Run(options, "describe", "B"); });
  ta.join();
  tb.join();
  EXPECT_EQ(a, (std::vector<std::string>{"A:0/2", "A:1/2"}));
  EXPECT_EQ(b, (std::vector<std::string>{"B:0/2", "B:1/2"}));
}

}  // namespace

int main(int argc, char** argv) {
  lakerun::launch::MaybeRunRank(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
