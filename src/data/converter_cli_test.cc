// Runs the built `lakerun table convert` on CSV files written here: convert, reuse, bad input, clear.
#include <gmock/gmock.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

// Runs `lakerun ARGS...` (no shell) to its end, at most 60 s.
lakerun::testing::ProgramRun RunLakerun(const testing::TempDir& dir, std::vector<std::string> args) {
  if (std::getenv("LAKERUN_BINARY_DIR") == nullptr) setenv("LAKERUN_BINARY_DIR", LAKERUN_CLI_TEST_BINARY_DIR, 0);
  args.insert(args.begin(), lakerun::testing::BuiltProgram("lakerun"));
  return lakerun::testing::RunProgram(args, dir.Join("lakerun.log"), std::chrono::seconds(60));
}

TEST(TableConvertCommandTest, ConvertsReusesAndClears) {
  testing::TempDir dir;
  const std::string csv = dir.Join("points.csv");
  std::string text = "x,y,name\n";
  for (int i = 0; i < 25; ++i) text += std::to_string(i) + "," + std::to_string(i * 2) + ",p" + std::to_string(i) + "\n";
  LocalFileSystem().WriteAtomically(csv, text);
  const std::string cache = dir.Join("cache");

  const auto first = RunLakerun(dir, {"table", "convert", "csv", csv, "--cache-dir", cache, "--world-size", "4"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.output, m, std::regex("converted (\\S+): 25 rows in 4 files \\(key ([0-9a-f]{32})\\)")))
      << first.output;
  const std::string entry = m[1], key = m[2];
  EXPECT_TRUE(LocalFileSystem().Exists(entry + "/_SUCCESS"));

  const auto again = RunLakerun(dir, {"table", "convert", "csv", csv, "--cache-dir", cache, "--world-size", "4"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, ::testing::HasSubstr("reused " + entry + ": 25 rows in 4 files (key " + key + ")"));

  // The converted entry is a table: convert a filtered projection of it.
  const auto table = RunLakerun(dir, {"table", "convert", "table", entry, "--columns", "y,x", "--filter", "x>=20",
                                         "--cache-dir", cache, "--row-group-rows", "2"});
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, ::testing::ContainsRegex("converted \\S+: [0-9]+ rows in 1 files"));

  const auto bad = RunLakerun(dir, {"table", "convert", "csv", dir.Join("missing.csv"), "--cache-dir", cache});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, ::testing::HasSubstr("missing.csv"));
  const auto bad_filter = RunLakerun(dir, {"table", "convert", "table", entry, "--filter", "x", "--cache-dir", cache});
  EXPECT_NE(bad_filter.exit_code, 0);
  EXPECT_THAT(bad_filter.output, ::testing::HasSubstr("--filter 'x'"));

  const auto one = RunLakerun(dir, {"table", "convert", "clear", "--cache-dir", cache, "--key", key});
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_FALSE(LocalFileSystem().Exists(entry));
  const auto all = RunLakerun(dir, {"table", "convert", "clear", "--cache-dir", cache});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(LocalFileSystem().List(cache).empty());
}

}  // namespace
}  // namespace lakerun::data
