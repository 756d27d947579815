// Sharding by default, seen on two real ranks: a Trainer of 2 ranks gives each rank its half of a Loader that was
// not told its place, also one a DataModule builds; a loader told world_size = 1 reads everything on every rank and
// rank 0 warns once; use_distributed_sampler = false leaves loaders alone, silently.
#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "lakerun_testing/child_process.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::train {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kRows = 40;
const char* const kWarning = "reads every sample on each of the 2 ranks";

struct Ranks {
  std::string output;
  std::vector<std::vector<int64_t>> rows;  // the rows each rank trained on
};

Ranks RunTwoRanks(const std::string& mode) {
  testing::TempDir dir;
  Ranks out;
  const testing::ProgramRun run = testing::RunRanksDirectly({TRAIN_SHARDING_PROGRAM, mode, dir.path()}, 2,
                                                            dir.Join("log"), std::chrono::seconds(120));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  out.output = run.output;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(dir.Join("rank" + std::to_string(rank) + ".ids"));
    std::vector<int64_t> rows;
    for (int64_t row; in >> row;) rows.push_back(row);
    out.rows.push_back(rows);
  }
  return out;
}

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

void ExpectDisjointHalves(const Ranks& r) {
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].size(), static_cast<size_t>(kRows / 2));
  EXPECT_EQ(r.rows[1].size(), static_cast<size_t>(kRows / 2));
  std::set<int64_t> all(r.rows[0].begin(), r.rows[0].end());
  all.insert(r.rows[1].begin(), r.rows[1].end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kRows));  // together every row, once
}

TEST(TrainerShardingTest, ALoaderWithoutARankIsShardedByTheTrainer) {
  const Ranks r = RunTwoRanks("unset");
  ExpectDisjointHalves(r);
  EXPECT_THAT(r.output, Not(HasSubstr(kWarning)));
}

TEST(TrainerShardingTest, ADataModuleLearnsItsRankAndItsLoadersAreSharded) {
  const Ranks r = RunTwoRanks("datamodule");
  ExpectDisjointHalves(r);
  EXPECT_THAT(r.output, HasSubstr("datamodule fit: rank 0 of 2"));
  EXPECT_THAT(r.output, HasSubstr("datamodule fit: rank 1 of 2"));
}

TEST(TrainerShardingTest, AnUnshardedLoaderReadsEverythingAndRankZeroWarnsOnce) {
  const Ranks r = RunTwoRanks("whole");
  for (const auto& rows : r.rows) EXPECT_EQ(rows.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(Count(r.output, kWarning), 1u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the train source, the data::Loader over memory-table"));
  EXPECT_THAT(r.output, HasSubstr("use_distributed_sampler = false"));
}

TEST(TrainerShardingTest, UseDistributedSamplerFalseLeavesLoadersAlone) {
  const Ranks r = RunTwoRanks("no-sampler");
  for (const auto& rows : r.rows) EXPECT_EQ(rows.size(), static_cast<size_t>(kRows));
  EXPECT_THAT(r.output, Not(HasSubstr(kWarning)));
}

}  // namespace
}  // namespace lakerun::train
