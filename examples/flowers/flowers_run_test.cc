// End-to-end runs of the built `flowers` program: two ranks under the built `lakerun` launcher (rank 0 builds a
// small table from Fashion-MNIST, both train, test and rank 0 tracks the run), a second run that reuses the table,
// and a bad flag. Every child runs in its own process group and is killed if it outlives its deadline.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::examples {
namespace {

using std::chrono::seconds;

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";

using RunResult = testing::ProgramRun;

RunResult RunProgram(const std::vector<std::string>& argv, const testing::TempDir& dir, const std::string& name,
                     seconds timeout) {
  return testing::RunProgram(argv, dir.Join(name + ".out"), timeout);
}

// Two ranks: under the built launcher, or (without one) with torchrun's environment, rank 0 hosting the store.
RunResult RunTwoRanks(const std::vector<std::string>& args, const testing::TempDir& dir, seconds timeout) {
  const std::string launcher = FLOWERS_LAUNCHER;
  if (!launcher.empty()) {
    std::vector<std::string> argv = {launcher, "launch", "-n", "2", "--"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, dir, "launch", timeout);
  }
  std::cerr << "[ note ] bin/lakerun not built; starting the two ranks directly\n";
  return testing::RunRanksDirectly(args, 2, dir.Join("rank"), timeout);
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::vector<std::string> Names(const std::string& dir, bool directories) {
  std::vector<std::string> names;
  for (const FileInfo& f : LocalFileSystem().List(dir)) {
    if (f.is_directory == directories) names.push_back(f.name);
  }
  return names;
}

TEST(FlowersProgramTest, TwoRanksBuildTheTableTrainCheckpointAndTrack) {
  if (!LocalFileSystem().Exists(JoinPath(kFashionMnist, "train-images-idx3-ubyte.gz"))) {
    GTEST_SKIP() << kFashionMnist << " missing (apt-get install dataset-fashion-mnist)";
  }
  testing::TempDir dir;
  const std::string table = dir.Join("table");
  const std::vector<std::string> args = {
      FLOWERS_PROGRAM, "--table", table, "--table-limit", "300", "--epochs", "1", "--batch-size", "16",
      "--limit-train-batches", "4", "--limit-val-batches", "2", "--limit-test-batches", "2", "--log-every", "2",
      "--output-dir", dir.Join("out"), "--tracking-uri", dir.Join("mlruns"), "--experiment", "flowers-test",
      "--torch-threads", "1"};
  const RunResult run = RunTwoRanks(args, dir, seconds(240));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  // Rank 0 alone built the table (300 Fashion-MNIST training images split into train and val, 300 test images).
  EXPECT_EQ(Count(run.output, "[flowers] building " + table + " from fashion-mnist"), 1u) << run.output;
  EXPECT_THAT(run.output, ::testing::ContainsRegex("built .*: [0-9]+ train, [0-9]+ val, 300 test images"));
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(table, "_delta_log/00000000000000000001.json")));
  EXPECT_THAT(Names(table, true), ::testing::IsSupersetOf({"_delta_log", "split=test", "split=train", "split=val"}));
  EXPECT_THAT(run.output, ::testing::HasSubstr("10 classes"));
  EXPECT_THAT(run.output, ::testing::HasSubstr("2 rank(s) x batch 16"));

  // Test accuracy printed once (rank 0), a fraction.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.output, m, std::regex(R"(Test accuracy: ([0-9.]+) \(loss ([0-9.]+)\))")))
      << run.output;
  const double accuracy = std::stod(m[1]);
  EXPECT_GE(accuracy, 0.0);
  EXPECT_LE(accuracy, 1.0);
  EXPECT_EQ(Count(run.output, "Test accuracy: "), 1u);
  EXPECT_THAT(run.output, ::testing::ContainsRegex("stopped after 1 epoch\\(s\\), 4 steps"));
  EXPECT_THAT(run.output, ::testing::ContainsRegex("images/s over 2 rank\\(s\\)"));

  // One checkpoint for the epoch, plus last.ckpt; written by rank 0 only (no temp files left).
  const std::string checkpoints = dir.Join("out/checkpoints");
  const std::vector<std::string> files = Names(checkpoints, false);
  ASSERT_EQ(files.size(), 2u) << ::testing::PrintToString(files);
  EXPECT_THAT(files[0], ::testing::MatchesRegex("epoch=00-val_loss=[0-9.]+\\.ckpt"));
  EXPECT_EQ(files[1], "last.ckpt");
  EXPECT_THAT(run.output, ::testing::HasSubstr("[flowers] checkpoints: " + checkpoints));

  // MLflow file store: one experiment, one FINISHED run (rank 0) with params, metrics, checkpoints and the model.
  const std::string mlruns = dir.Join("mlruns");
  std::vector<std::string> experiments;
  for (const std::string& name : Names(mlruns, true)) {
    if (name != "0" && name != ".trash") experiments.push_back(name);
  }
  ASSERT_EQ(experiments.size(), 1u);
  const std::string experiment = JoinPath(mlruns, experiments[0]);
  EXPECT_THAT(LocalFileSystem().ReadFile(JoinPath(experiment, "meta.yaml")),
              ::testing::HasSubstr("name: flowers-test"));
  const std::vector<std::string> runs = Names(experiment, true);
  ASSERT_EQ(runs.size(), 1u) << "only rank 0 may start a run";
  const std::string run_dir = JoinPath(experiment, runs[0]);
  EXPECT_THAT(LocalFileSystem().ReadFile(JoinPath(run_dir, "meta.yaml")), ::testing::HasSubstr("status: 3"));
  EXPECT_THAT(run.output, ::testing::HasSubstr("[flowers] MLflow run: "));
  EXPECT_THAT(run.output, ::testing::HasSubstr(runs[0]));
  EXPECT_EQ(LocalFileSystem().ReadFile(JoinPath(run_dir, "params/world_size")), "2");
  EXPECT_EQ(LocalFileSystem().ReadFile(JoinPath(run_dir, "params/batch_size")), "16");
  for (const char* metric : {"train_loss", "val_loss", "val_acc", "test_acc", "images_per_sec"}) {
    EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(run_dir, std::string("metrics/") + metric))) << metric;
  }
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(run_dir, "artifacts/checkpoints/last.ckpt")));
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(run_dir, "artifacts/model/MLmodel")));

  // A second run (one process) reuses the table instead of building it.
  const RunResult again = RunProgram({FLOWERS_PROGRAM, "--table", table, "--epochs", "1", "--limit-train-batches",
                                      "2", "--limit-val-batches", "1", "--limit-test-batches", "1",
                                      "--output-dir", dir.Join("out2"), "--no-tracking", "--torch-threads", "1"},
                                     dir, "again", seconds(120));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, ::testing::Not(::testing::HasSubstr("[flowers] building")));
  EXPECT_THAT(again.output, ::testing::HasSubstr("1 rank(s) x batch 64"));
  EXPECT_THAT(again.output, ::testing::HasSubstr("Test accuracy: "));
}

TEST(FlowersProgramTest, BadInputFailsWithAClearMessage) {
  testing::TempDir dir;
  const RunResult flag = RunProgram({FLOWERS_PROGRAM, "--batch-size", "-3"}, dir, "flag", seconds(60));
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_THAT(flag.output, ::testing::HasSubstr("flag --batch-size: expected at least 1, got -3"));

  const RunResult images = RunProgram({FLOWERS_PROGRAM, "--table", dir.Join("t"), "--images", dir.Join("none"),
                                       "--no-tracking"},
                                      dir, "images", seconds(60));
  EXPECT_EQ(images.exit_code, 1);
  EXPECT_THAT(images.output, ::testing::HasSubstr("--images " + dir.Join("none") + " is not a directory"));
  EXPECT_FALSE(LocalFileSystem().Exists(dir.Join("t")));

  const RunResult help = RunProgram({FLOWERS_PROGRAM, "--help"}, dir, "help", seconds(60));
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, ::testing::HasSubstr("--images DIR"));
}

}  // namespace
}  // namespace lakerun::examples
