// Runs the built `lakerun table convert` on CSV files written here: convert, reuse, bad input, clear.
#include <sys/wait.h>

#include <gmock/gmock.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

struct Result {
  int exit_code;
  std::string output;
};

Result RunLakerun(const std::string& args) {
  if (std::getenv("LAKERUN_BINARY_DIR") == nullptr) setenv("LAKERUN_BINARY_DIR", LAKERUN_CLI_TEST_BINARY_DIR, 0);
  const std::string cmd = "timeout 60 " + lakerun::testing::BuiltProgram("lakerun") + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(TableConvertCommandTest, ConvertsReusesAndClears) {
  testing::TempDir dir;
  const std::string csv = dir.Join("points.csv");
  std::string text = "x,y,name\n";
  for (int i = 0; i < 25; ++i) text += std::to_string(i) + "," + std::to_string(i * 2) + ",p" + std::to_string(i) + "\n";
  LocalFileSystem().WriteAtomically(csv, text);
  const std::string cache = dir.Join("cache");

  const Result first = RunLakerun("table convert csv " + csv + " --cache-dir " + cache + " --world-size 4");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.output, m, std::regex("converted (\\S+): 25 rows in 4 files \\(key ([0-9a-f]{32})\\)")))
      << first.output;
  const std::string entry = m[1], key = m[2];
  EXPECT_TRUE(LocalFileSystem().Exists(entry + "/_SUCCESS"));

  const Result again = RunLakerun("table convert csv " + csv + " --cache-dir " + cache + " --world-size 4");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, ::testing::HasSubstr("reused " + entry + ": 25 rows in 4 files (key " + key + ")"));

  // The converted entry is a table: convert a filtered projection of it.
  const Result table = RunLakerun("table convert table " + entry + " --columns y,x --filter 'x>=20' --cache-dir " +
                                  cache + " --row-group-rows 2");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, ::testing::ContainsRegex("converted \\S+: [0-9]+ rows in 1 files"));

  const Result bad = RunLakerun("table convert csv " + dir.Join("missing.csv") + " --cache-dir " + cache);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, ::testing::HasSubstr("missing.csv"));
  const Result bad_filter = RunLakerun("table convert table " + entry + " --filter x --cache-dir " + cache);
  EXPECT_NE(bad_filter.exit_code, 0);
  EXPECT_THAT(bad_filter.output, ::testing::HasSubstr("--filter 'x'"));

  const Result one = RunLakerun("table convert clear --cache-dir " + cache + " --key " + key);
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_FALSE(LocalFileSystem().Exists(entry));
  const Result all = RunLakerun("table convert clear --cache-dir " + cache);
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_TRUE(LocalFileSystem().List(cache).empty());
}

}  // namespace
}  // namespace lakerun::data
