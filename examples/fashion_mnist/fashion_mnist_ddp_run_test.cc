// End-to-end runs of the built fashion_mnist_ddp program (the hand-written DDP loop): one process, two ranks,
// checkpoints and resume, bad input.
// Every child runs in its own process group and is killed if it outlives its deadline.

#include <torch/optim/sgd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/temp_dir.h"
#include "model.h"

namespace lakerun::examples {
namespace {

using std::chrono::seconds;

using RunResult = testing::ProgramRun;

RunResult RunProgram(const std::vector<std::string>& argv, const testing::TempDir& dir, const std::string& name,
                     seconds timeout = seconds(120)) {
  return testing::RunProgram(argv, dir.Join(name + ".out"), timeout);
}

// Paths come from the build (CMake passes them), so the test does not depend on ctest's environment.
std::string Program() { return FASHION_MNIST_PROGRAM; }

// Losses of the "step" lines of a metrics file, in order; and the "final" line's parameter checksum.
struct Metrics {
  std::vector<double> losses;
  std::vector<int64_t> steps;
  double param_checksum = std::nan("");
};

Metrics ReadMetrics(const std::string& path) {
  Metrics metrics;
  std::istringstream in(LocalFileSystem().ReadFile(path));
  const std::regex step(R"re("type":"step".*"step":(\d+),"loss":([-0-9.e+naif]+))re");
  const std::regex final_line(R"re("type":"final".*"param_checksum":([-0-9.e+]+))re");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, step)) {
      metrics.steps.push_back(std::stoll(m[1]));
      metrics.losses.push_back(std::stod(m[2]));
    } else if (std::regex_search(line, m, final_line)) {
      metrics.param_checksum = std::stod(m[1]);
    }
  }
  return metrics;
}

double Mean(const std::vector<double>& v, size_t begin, size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += v[i];
  return sum / static_cast<double>(end - begin);
}

// The `lakerun` command when the build has it (then the 2-rank test must pass through it); empty otherwise.
std::string Launcher() { return FASHION_MNIST_LAUNCHER; }

TEST(FashionMnistDdpProgramTest, OneProcessLossFallsAndTestSetIsEvaluated) {
  testing::TempDir dir;
  const RunResult run = RunProgram({Program(), "--max-steps", "40", "--lr", "0.05", "--log-interval", "10",
                             "--test-limit", "1000", "--metrics-file", dir.Join("metrics.jsonl")},
                            dir, "one");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, ::testing::HasSubstr("Train Epoch: 1 [0/60000 (0%)]\tLoss: "));
  EXPECT_THAT(run.output, ::testing::HasSubstr("Train Epoch: 1 [3000/60000 (5%)]\tLoss: "));
  EXPECT_THAT(run.output, ::testing::ContainsRegex("Test set: Average loss: [0-9.]+, Accuracy: [0-9]+/1000 \\("));
  EXPECT_THAT(run.output, ::testing::HasSubstr("RESULT {\"impl\":\"lakerun\",\"world_size\":1"));
  const Metrics metrics = ReadMetrics(dir.Join("metrics.jsonl"));
  ASSERT_EQ(metrics.losses.size(), 40u);
  EXPECT_EQ(metrics.steps.front(), 1);
  EXPECT_EQ(metrics.steps.back(), 40);
  for (double loss : metrics.losses) EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
  // Ten classes: the untrained net starts near ln(10); 40 steps at lr 0.05 bring the loss well down (to ~1.7).
  EXPECT_NEAR(metrics.losses.front(), std::log(10.0), 0.3);
  EXPECT_LT(Mean(metrics.losses, 30, 40), Mean(metrics.losses, 0, 10) - 0.3);
}

// Two ranks over 2,000 training images: 10 steps per epoch, 2 epochs, checkpoints after each epoch by rank 0.
TEST(FashionMnistDdpProgramTest, TwoRanksAverageGradientsAndRankZeroCheckpoints) {
  testing::TempDir dir;
  const std::string checkpoints = dir.Join("checkpoints");
  const std::vector<std::string> args = {Program(), "--epochs", "2", "--train-limit", "2000", "--test-limit", "1000",
                                         "--lr", "0.01", "--log-interval", "5", "--checkpoint-dir", checkpoints,
                                         "--metrics-file", dir.Join("metrics.{rank}.jsonl"),
                                         "--tracking-uri", dir.Join("mlruns"), "--experiment", "fm-test"};
  std::string output;
  if (const std::string launcher = Launcher(); !launcher.empty()) {
    std::vector<std::string> argv = {launcher, "launch", "-n", "2", "--"};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult run = RunProgram(argv, dir, "launch", seconds(150));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    output = run.output;
  } else {
    // No launcher built: start the two ranks with torchrun's environment; rank 0 hosts the store.
    std::cerr << "[ note ] bin/lakerun with `launch` not built; starting the two ranks directly\n";
    const RunResult run = testing::RunRanksDirectly(args, 2, dir.Join("rank"), seconds(150));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    output = run.output;
  }
  // Progress counts global samples: 2 ranks x 100 per step.
  EXPECT_THAT(output, ::testing::HasSubstr("Train Epoch: 1 [1000/2000 (50%)]"));
  EXPECT_THAT(output, ::testing::HasSubstr("Train Epoch: 2 [0/2000 (0%)]"));
  EXPECT_THAT(output, ::testing::HasSubstr("\"world_size\":2"));

  const Metrics rank0 = ReadMetrics(dir.Join("metrics.0.jsonl"));
  const Metrics rank1 = ReadMetrics(dir.Join("metrics.1.jsonl"));
  ASSERT_EQ(rank0.losses.size(), 20u);
  ASSERT_EQ(rank1.losses.size(), 20u);
  // Different shards of data, hence different losses; but identical replicas at the end (gradients averaged).
  EXPECT_NE(rank0.losses[0], rank1.losses[0]);
  ASSERT_FALSE(std::isnan(rank0.param_checksum));
  EXPECT_EQ(rank0.param_checksum, rank1.param_checksum);

  // Exactly one checkpoint per epoch (rank 0 only; no temp files), loadable into a fresh model and optimizer.
  std::vector<std::string> names;
  for (const FileInfo& f : LocalFileSystem().List(checkpoints)) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint-epoch-1.pt", "checkpoint-epoch-2.pt"}));
  size_t saved_lines = 0;
  for (size_t at = output.find("Saved checkpoint"); at != std::string::npos;
       at = output.find("Saved checkpoint", at + 1)) {
    ++saved_lines;
  }
  EXPECT_EQ(saved_lines, 2u);
  Net net;
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  const CheckpointPosition position = LoadCheckpoint(JoinPath(checkpoints, "checkpoint-epoch-2.pt"), *net, optimizer);
  EXPECT_EQ(position.epoch, 2);
  EXPECT_EQ(position.global_step, 20);

  // Rank 0 alone tracked the run in MLflow's file-store layout: one run, FINISHED, with params, the loss every
  // --log-interval steps, test metrics per epoch, both checkpoints and the final model.
  const std::string mlruns = dir.Join("mlruns");
  std::vector<std::string> experiments;
  for (const FileInfo& f : LocalFileSystem().List(mlruns)) {
    if (f.is_directory && f.name != "0" && f.name != ".trash") experiments.push_back(f.name);
  }
  ASSERT_EQ(experiments.size(), 1u);
  const std::string experiment = JoinPath(mlruns, experiments[0]);
  EXPECT_THAT(LocalFileSystem().ReadFile(JoinPath(experiment, "meta.yaml")), ::testing::HasSubstr("name: fm-test"));
  std::vector<std::string> runs;
  for (const FileInfo& f : LocalFileSystem().List(experiment)) {
    if (f.is_directory) runs.push_back(f.name);
  }
  ASSERT_EQ(runs.size(), 1u) << "only rank 0 may start a run";
  const std::string run = JoinPath(experiment, runs[0]);
  EXPECT_THAT(LocalFileSystem().ReadFile(JoinPath(run, "meta.yaml")), ::testing::HasSubstr("status: 3"));
  EXPECT_EQ(LocalFileSystem().ReadFile(JoinPath(run, "params/world_size")), "2");
  EXPECT_EQ(LocalFileSystem().ReadFile(JoinPath(run, "params/batch_size")), "100");
  auto lines = [](const std::string& text) { return std::count(text.begin(), text.end(), '\n'); };
  // 10 steps per epoch, logged at steps 1 and 6 of each epoch (batch 0 and 5).
  EXPECT_EQ(lines(LocalFileSystem().ReadFile(JoinPath(run, "metrics/train_loss"))), 4);
  EXPECT_EQ(lines(LocalFileSystem().ReadFile(JoinPath(run, "metrics/test_accuracy"))), 2);
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(run, "artifacts/checkpoints/checkpoint-epoch-2.pt")));
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(run, "artifacts/model/MLmodel")));
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(run, "artifacts/model/data/model.safetensors")));
}

TEST(FashionMnistDdpProgramTest, ResumesFromTheLatestCheckpoint) {
  testing::TempDir dir;
  const std::string checkpoints = dir.Join("ck");
  const std::vector<std::string> common = {Program(), "--train-limit", "1000", "--test-limit", "500",
                                           "--checkpoint-dir", checkpoints, "--resume"};
  std::vector<std::string> first = common;
  first.insert(first.end(), {"--epochs", "1"});
  const RunResult run1 = RunProgram(first, dir, "first");
  ASSERT_EQ(run1.exit_code, 0) << run1.output;
  EXPECT_THAT(run1.output, ::testing::HasSubstr("No checkpoint in " + checkpoints));
  std::vector<std::string> second = common;
  second.insert(second.end(), {"--epochs", "2", "--metrics-file", dir.Join("m.jsonl")});
  const RunResult run2 = RunProgram(second, dir, "second");
  ASSERT_EQ(run2.exit_code, 0) << run2.output;
  EXPECT_THAT(run2.output, ::testing::HasSubstr("Resumed from " + checkpoints + "/checkpoint-epoch-1.pt (epoch 1 done, step 10)"));
  EXPECT_THAT(run2.output, ::testing::Not(::testing::HasSubstr("Train Epoch: 1 ")));
  EXPECT_THAT(run2.output, ::testing::HasSubstr("Train Epoch: 2 [0/1000 (0%)]"));
  const Metrics metrics = ReadMetrics(dir.Join("m.jsonl"));
  ASSERT_EQ(metrics.steps.size(), 10u);
  EXPECT_EQ(metrics.steps.front(), 11);
  EXPECT_TRUE(LocalFileSystem().Exists(JoinPath(checkpoints, "checkpoint-epoch-2.pt")));
}

TEST(FashionMnistDdpProgramTest, BadInputFailsWithAClearMessage) {
  testing::TempDir dir;
  const RunResult missing = RunProgram({Program(), "--data-dir", dir.Join("nothing-here")}, dir, "missing", seconds(60));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, ::testing::HasSubstr(dir.Join("nothing-here/train-images-idx3-ubyte.gz")));
  EXPECT_THAT(missing.output, ::testing::HasSubstr("apt-get install dataset-fashion-mnist"));

  const RunResult flag = RunProgram({Program(), "--batch-size", "-3"}, dir, "flag", seconds(60));
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_THAT(flag.output, ::testing::HasSubstr("flag --batch-size: expected at least 1, got -3"));
}

}  // namespace
}  // namespace lakerun::examples
