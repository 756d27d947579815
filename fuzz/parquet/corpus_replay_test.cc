// Feeds every committed corpus file (fuzz/parquet/corpus/<target>/*) to its fuzz target's entry point, in every
// build (gcc included, no sanitizers needed), and checks the parsers' contract: return normally or throw a
// lakerun::Error subclass, never another exception type. A crash fails the test by killing it. Files that once
// crashed a parser are added here after the fix, so they stay fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <typeinfo>

#include "fuzz_targets.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/paths.h"

namespace lakerun::parquet::fuzz {
namespace {

std::string CorpusDir() { return lakerun::testing::SourceDir() + "/fuzz/parquet/corpus"; }

/// Runs every file of one target's corpus; returns how many files it ran.
size_t Replay(const FuzzTarget& target) {
  FileSystem& fs = LocalFileSystem();
  const std::string dir = CorpusDir() + "/" + target.name;
  size_t files = 0;
  for (const FileInfo& info : fs.List(dir)) {
    if (info.is_directory) continue;
    const std::string path = dir + "/" + info.name;
    const std::string bytes = fs.ReadFile(path);
    ++files;
    try {
      target.run(bytes);
    } catch (const Error&) {
      // the contract: bad input is rejected with a lakerun::Error
    } catch (const std::exception& e) {
      ADD_FAILURE() << target.name << " threw " << typeid(e).name() << " (not a lakerun::Error) on " << path << ": "
                    << e.what();
    } catch (...) {
      ADD_FAILURE() << target.name << " threw a non-std exception on " << path;
    }
  }
  return files;
}

class CorpusReplayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusReplayTest, OnlyLakerunErrorsEscape) {
  const FuzzTarget* target = FindTarget(GetParam());
  ASSERT_NE(target, nullptr);
  EXPECT_GT(Replay(*target), 0u) << "no corpus files for " << target->name << " under " << CorpusDir();
}

std::vector<std::string> TargetNames() {
  std::vector<std::string> names;
  for (const FuzzTarget& t : AllTargets()) names.push_back(t.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Parquet, CorpusReplayTest, ::testing::ValuesIn(TargetNames()),
                         [](const auto& info) { return info.param; });

TEST(CorpusLayoutTest, EveryCorpusDirectoryHasATarget) {
  // A corpus directory whose target was renamed would silently stop being replayed.
  for (const FileInfo& info : LocalFileSystem().List(CorpusDir())) {
    if (info.is_directory) {
      EXPECT_NE(FindTarget(info.name), nullptr) << "corpus/" << info.name << " has no fuzz target";
    }
  }
}

}  // namespace
}  // namespace lakerun::parquet::fuzz
