// lakerun::RunMain, seen from outside: a real process whose error escapes main's function exits 1 with the message on
// stderr instead of aborting.
#include "lakerun/base/run_main.h"

#include <string>

#include "lakerun_testing/child_process.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

testing::ProgramRun RunMode(const std::string& mode) {
  testing::TempDir dir;
  return testing::RunProgram({RUN_MAIN_PROGRAM, mode}, dir.path() + "/log", std::chrono::seconds(30));
}

TEST(RunMainTest, LakerunErrorPrintsItsMessageAndExitsOne) {
  const testing::ProgramRun run = RunMode("lakerun-error");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("run_main_program: error: flag --epochs: expected a number, got 'x'\n"));
  EXPECT_THAT(run.output, Not(HasSubstr("terminate called")));
}

TEST(RunMainTest, OtherExceptionsExitOneToo) {
  testing::ProgramRun run = RunMode("std-error");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("run_main_program: error: vector index 9 out of range"));
  run = RunMode("unknown");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("run_main_program: error: unknown exception"));
}

TEST(RunMainTest, ReturnsTheFunctionsExitCode) {
  EXPECT_EQ(RunMode("exit-3").exit_code, 3);
  const testing::ProgramRun run = RunMode("ok");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.output, "");
}

}  // namespace
}  // namespace lakerun
