// lakerun::dist::Init() as fork start's fork point: `lakerun launch --start-method fork` execs dist_init_probe once
// (libtorch loads once) and forks three ranks from it inside Init(); each then rendezvouses through the launcher's
// store, builds its own Gloo group and all-reduces, as exec-started ranks do.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lakerun/launch/launcher.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ForkStartProcessTest, RanksForkedInsideInitJoinOneGlooGroup) {
  lakerun::testing::TempDir dir;
  const std::string out = dir.Join("out"), err = dir.Join("err");
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  lakerun::launch::LaunchOptions options;
  options.processes = 3;
  options.command = {DIST_INIT_PROBE};
  options.start_method = lakerun::launch::StartMethod::kFork;
  options.timeout = std::chrono::seconds(60);
  options.stdout_fd = out_fd;
  options.stderr_fd = err_fd;
  const int code = lakerun::launch::Launch(options).exit_code;
  ::close(out_fd);
  ::close(err_fd);
  const std::string text = ReadFile(out);
  ASSERT_EQ(code, 0) << text << ReadFile(err);
  for (int r = 0; r < 3; ++r) {
    EXPECT_THAT(text, ::testing::HasSubstr("[rank" + std::to_string(r) + "] probe launcher=lakerun rank=" +
                                           std::to_string(r) + " world=3 local=" + std::to_string(r) + "/3 sum=6"));
  }
}

}  // namespace
