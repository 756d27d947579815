// lakerun's Parquet reader and writer against three independent implementations (DuckDB, parquet-rs via
// parquet-wasm, hyparquet), value by value, in both directions:
//   - files written by each oracle (tests/interop/gen_corpus.mjs, cross-checked there by a second oracle) are read
//     by lakerun and compared with the writing tool's canonical dump;
//   - files written by lakerun (every codec, both page versions, every encoding, nested shapes, nulls) are dumped
//     by DuckDB, parquet-wasm and hyparquet (tests/interop/dump.mjs) and compared with what lakerun was given.
// The canonical JSON form is defined in tests/interop/lib/canonical.mjs and docs/testing-parquet.md.
// Without Node or tests/interop/node_modules these tests FAIL (run scripts/setup.sh) unless LAKERUN_SKIP_INTEROP=1.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "canonical_json.h"
#include "lakerun/base/error.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun_testing/temp_dir.h"
#include "lakerun_writer_corpus.h"
#include "node_runner.h"

namespace lakerun::interop {
namespace {

constexpr int kNodeTimeoutS = 400;

#define REQUIRE_ORACLES()                                                       \
  do {                                                                          \
    if (SkipInteropRequested()) GTEST_SKIP() << "LAKERUN_SKIP_INTEROP=1";       \
    const std::string problem = OracleProblem();                                \
    ASSERT_TRUE(problem.empty()) << problem;                                    \
  } while (false)

Json LoadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot open " + path);
  return Json::parse(in);
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n    " + l;
  return out;
}

/// Reader gaps found by these tests and not fixed yet: a file whose name starts with `file_prefix` may fail to read
/// with an error containing `error`. Such a failure is printed, not failed; once the file reads, the test fails
/// with "known gap fixed" so the entry gets removed and the file is checked value by value again.
struct KnownGap {
  const char* file_prefix;
  const char* error;
};
// Oracle files lakerun is known to read wrongly or refuse, each with the error it raises; empty when none is.
const std::vector<KnownGap> kKnownGaps = {};

const KnownGap* FindGap(const std::string& file) {
  for (const KnownGap& gap : kKnownGaps) {
    if (file.rfind(gap.file_prefix, 0) == 0) return &gap;
  }
  return nullptr;
}

/// Generates the oracle files whose names start with `prefix` and checks that lakerun reads each one exactly as
/// the tool that wrote it does. Returns the number of files checked.
size_t CheckOracleFiles(const std::string& prefix) {
  lakerun::testing::TempDir dir;
  NodeResult gen = RunNode("gen_corpus.mjs", {dir.path(), "--filter", prefix}, kNodeTimeoutS);
  EXPECT_FALSE(gen.timed_out) << "gen_corpus.mjs ran past " << kNodeTimeoutS << " s:\n" << gen.output;
  EXPECT_EQ(gen.exit_code, 0) << "gen_corpus.mjs failed:\n" << gen.output;
  if (gen.exit_code != 0) return 0;
  const Json manifest = LoadJson(dir.Join("manifest.json"));
  for (const Json& entry : manifest) {
    const std::string file = entry["file"].get<std::string>();
    const std::string path = dir.Join(file);
    SCOPED_TRACE(file);
    const KnownGap* gap = FindGap(file);
    try {
      auto pq = parquet::ParquetFile::Open(LocalFileSystem(), path);
      const Json lakerun = RenderFile(*pq);
      EXPECT_EQ(gap, nullptr) << "known gap fixed: lakerun now reads " << file
                              << "; remove its entry from kKnownGaps";
      const std::string expected_path = path.substr(0, path.size() - 8) + ".expected.json";
      const Json expected = LoadJson(expected_path);
      const auto diffs = DiffDumps(lakerun, expected, entry["dumped_by"].get<std::string>());
      EXPECT_TRUE(diffs.empty()) << "lakerun reads " << file << " (written by " << entry["writer"].get<std::string>()
                                 << ") differently:" << Join(diffs);
    } catch (const Error& e) {
      if (gap && std::string(e.what()).find(gap->error) != std::string::npos) {
        std::printf("[ KNOWN GAP ] %s: %s\n", file.c_str(), e.what());
        continue;
      }
      ADD_FAILURE() << "lakerun cannot read " << file << " (written by " << entry["writer"].get<std::string>()
                    << "): " << e.what();
    }
  }
  return manifest.size();
}

TEST(ParquetInteropTest, ReadsEveryDuckDBFile) {
  REQUIRE_ORACLES();
  EXPECT_GE(CheckOracleFiles("duckdb_"), 16u);
}

TEST(ParquetInteropTest, ReadsEveryParquetRsFile) {
  REQUIRE_ORACLES();
  EXPECT_GE(CheckOracleFiles("wasm_"), 20u);
}

TEST(ParquetInteropTest, ReadsEveryHyparquetWriterFile) {
  REQUIRE_ORACLES();
  EXPECT_GE(CheckOracleFiles("hyparquet_"), 4u);
}

TEST(ParquetInteropTest, OraclesReadEveryLakerunFile) {
  REQUIRE_ORACLES();
  lakerun::testing::TempDir dir;
  const std::vector<WrittenFile> files = WriteLakerunCorpus(dir.path());
  ASSERT_GE(files.size(), 20u);
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.path);
  for (const std::string tool : {"duckdb", "wasm", "hyparquet"}) {
    std::vector<std::string> args = {tool};
    args.insert(args.end(), paths.begin(), paths.end());
    NodeResult r = RunNode("dump.mjs", args, kNodeTimeoutS);
    ASSERT_FALSE(r.timed_out) << "dump.mjs " << tool << " ran past " << kNodeTimeoutS << " s:\n" << r.output;
    for (const auto& f : files) {
      SCOPED_TRACE(f.path);
      if (f.unreadable_by.count(tool)) continue;  // the oracle's own limitation, documented in the corpus
      const Json dump = LoadJson(f.path + "." + tool + ".json");
      const auto diffs = DiffDumps(f.expected, dump, tool);
      EXPECT_TRUE(diffs.empty()) << tool << " reads lakerun's " << BaseName(f.path) << " (" << f.description
                                 << ") differently from what lakerun was asked to write:" << Join(diffs);
    }
  }
}

TEST(ParquetInteropTest, LakerunReadsItsOwnCorpusAsWritten) {
  // Not an interop check by itself, but it separates writer bugs from reader bugs when the test above fails.
  lakerun::testing::TempDir dir;
  for (const auto& f : WriteLakerunCorpus(dir.path())) {
    SCOPED_TRACE(f.path);
    try {
      auto pq = parquet::ParquetFile::Open(LocalFileSystem(), f.path);
      const auto diffs = DiffDumps(RenderFile(*pq), f.expected, "the writer's input");
      EXPECT_TRUE(diffs.empty()) << f.description << ":" << Join(diffs);
    } catch (const Error& e) {
      ADD_FAILURE() << "lakerun cannot read its own " << f.description << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace lakerun::interop
