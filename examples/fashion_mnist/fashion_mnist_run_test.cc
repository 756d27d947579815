// End-to-end runs of the built fashion_mnist program (the Trainer on the Delta tables): one process and two ranks
// under `lakerun launch`, each a few batches of one epoch. Asserts exit 0, the table imported on first use, one
// FINISHED MLflow run with params and metrics, the checkpoints, and the printed test accuracy; then a resume and
// clear errors. Every child runs in its own process group and is killed if it outlives its deadline.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <regex>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/emulators.h"
#include "lakerun_testing/ports.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::examples {
namespace {

using std::chrono::seconds;

using RunResult = testing::ProgramRun;

// Runs in `dir` (so ./mlruns and the default paths land there), without the caller's MLflow settings.
RunResult RunProgram(const std::vector<std::string>& argv, const testing::TempDir& dir, const std::string& name,
                     seconds timeout = seconds(150)) {
  testing::ChildOptions options;
  options.cwd = dir.path();
  options.unset_env = {"MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME"};
  return testing::RunProgram(argv, dir.Join(name + ".out"), timeout, std::move(options));
}

std::string Program() { return FASHION_MNIST_PROGRAM; }
std::string Launcher() { return FASHION_MNIST_LAUNCHER; }

// A short job: 5 training batches, 2 validation batches, 2 test batches of 500 per rank; every step logged.
std::vector<std::string> ShortJob(const testing::TempDir& dir) {
  return {Program(), "--epochs", "1", "--limit-train-batches", "5", "--limit-val-batches", "2",
          "--limit-test-batches", "2", "--eval-batch-size", "500", "--table", dir.Join("fmnist"),
          "--checkpoint-dir", dir.Join("ck"), "--experiment", "fm-trainer-test", "--progress-every", "1",
          "--log-every-n-steps", "1"};
}

// The one run of the one experiment under dir/mlruns; checks it is FINISHED with params, metrics and the model.
void ExpectOneFinishedRun(const testing::TempDir& dir, const std::string& world_size) {
  FileSystem& fs = LocalFileSystem();
  const std::string mlruns = dir.Join("mlruns");
  std::vector<std::string> experiments;
  for (const FileInfo& f : fs.List(mlruns)) {
    if (f.is_directory && f.name != "0" && f.name != ".trash") experiments.push_back(f.name);
  }
  ASSERT_EQ(experiments.size(), 1u);
  const std::string experiment = JoinPath(mlruns, experiments[0]);
  EXPECT_THAT(fs.ReadFile(JoinPath(experiment, "meta.yaml")), ::testing::HasSubstr("name: fm-trainer-test"));
  std::vector<std::string> runs;
  for (const FileInfo& f : fs.List(experiment)) {
    if (f.is_directory) runs.push_back(f.name);
  }
  ASSERT_EQ(runs.size(), 1u) << "only rank 0 may start a run";
  const std::string run = JoinPath(experiment, runs[0]);
  EXPECT_THAT(fs.ReadFile(JoinPath(run, "meta.yaml")), ::testing::HasSubstr("status: 3"));  // FINISHED
  EXPECT_EQ(fs.ReadFile(JoinPath(run, "params/world_size")), world_size);
  EXPECT_EQ(fs.ReadFile(JoinPath(run, "params/batch_size")), "100");
  EXPECT_EQ(fs.ReadFile(JoinPath(run, "params/lr")), "0.05");
  for (const char* metric : {"train_loss", "val_loss", "val_acc", "test_loss", "test_acc"}) {
    EXPECT_TRUE(fs.Exists(JoinPath(run, std::string("metrics/") + metric))) << metric;
  }
  EXPECT_TRUE(fs.Exists(JoinPath(run, "artifacts/checkpoints/last.ckpt")));
  EXPECT_TRUE(fs.Exists(JoinPath(run, "artifacts/model/MLmodel")));
  EXPECT_TRUE(fs.Exists(JoinPath(run, "artifacts/model/data/model.safetensors")));
}

// Checkpoints of a 1-epoch run: the best by val_loss (epoch=00-val_loss=...) and last.ckpt, nothing else.
void ExpectCheckpoints(const testing::TempDir& dir) {
  std::vector<std::string> names;
  for (const FileInfo& f : LocalFileSystem().List(dir.Join("ck"))) names.push_back(f.name);
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u) << ::testing::PrintToString(names);
  EXPECT_THAT(names[0], ::testing::MatchesRegex("epoch=00-val_loss=[0-9]\\.[0-9]{4}\\.ckpt"));
  EXPECT_EQ(names[1], "last.ckpt");
}

TEST(FashionMnistTrainerProgramTest, OneProcessImportsTrainsTestsAndTracks) {
  testing::TempDir dir;
  const RunResult run = RunProgram(ShortJob(dir), dir, "one");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, ::testing::HasSubstr("Imported Fashion-MNIST (train, test)"));
  EXPECT_THAT(run.output, ::testing::HasSubstr("1 rank(s)"));
  EXPECT_THAT(run.output, ::testing::HasSubstr("train 60000 rows, test 10000 (also the validation split)"));
  EXPECT_THAT(run.output, ::testing::ContainsRegex("Trained on (cpu|cuda:0) in [0-9.]+ s"));
  // 2 test batches of 500: 1,000 samples.
  EXPECT_THAT(run.output, ::testing::ContainsRegex("Test set: Average loss: [0-9.]+, Accuracy: [0-9]+/1000 \\("));
  EXPECT_THAT(run.output, ::testing::HasSubstr("Checkpoints: best " + dir.Join("ck/epoch=00-val_loss=")));
  EXPECT_THAT(run.output, ::testing::HasSubstr("Tracked: ./mlruns, experiment "));
  EXPECT_THAT(run.output, ::testing::HasSubstr("\"world_size\":1"));
  EXPECT_THAT(run.output, ::testing::HasSubstr("\"global_step\":5"));
  ExpectCheckpoints(dir);
  ExpectOneFinishedRun(dir, "1");

  // --resume from last.ckpt with --epochs 2: only epoch 2 runs (5 more steps).
  std::vector<std::string> again = ShortJob(dir);
  again.insert(again.end(), {"--epochs", "2", "--resume", "--no-tracking"});
  const RunResult resumed = RunProgram(again, dir, "resumed");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, ::testing::Not(::testing::HasSubstr("Imported")));
  EXPECT_THAT(resumed.output, ::testing::HasSubstr("\"epochs_completed\":2,\"global_step\":10"));
}

TEST(FashionMnistTrainerProgramTest, TwoRanksUnderTheLauncher) {
  testing::TempDir dir;
  std::vector<std::string> argv;
  if (const std::string launcher = Launcher(); !launcher.empty()) {
    argv = {launcher, "launch", "-n", "2", "--"};
  } else {
    GTEST_SKIP() << "bin/lakerun with `launch` not built";
  }
  const std::vector<std::string> job = ShortJob(dir);
  argv.insert(argv.end(), job.begin(), job.end());
  const RunResult run = RunProgram(argv, dir, "launch", seconds(200));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, ::testing::HasSubstr("2 rank(s) (launcher lakerun"));
  // Rank 0 imported; both ranks started at once and rank 1 waited for it.
  EXPECT_THAT(run.output, ::testing::HasSubstr("Imported Fashion-MNIST (train, test)"));
  // 2 test batches of 500 on each of 2 ranks, summed over the ranks.
  EXPECT_THAT(run.output, ::testing::ContainsRegex("Test set: Average loss: [0-9.]+, Accuracy: [0-9]+/2000 \\("));
  EXPECT_THAT(run.output, ::testing::HasSubstr("\"world_size\":2"));
  ExpectCheckpoints(dir);
  ExpectOneFinishedRun(dir, "2");
}

// The test accuracy a run printed ("Accuracy: 1234/2000"), -1 when it printed none.
int TestCorrect(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("Test set: Average loss: [0-9.]+, Accuracy: ([0-9]+)/"))) return -1;
  return std::stoi(m[1]);
}

// Sharded data parallel between real processes: the same job under DDP and under fsdp (ZeRO-3: parameters sharded
// too) reaches the same test accuracy, and DDP resumes fsdp's checkpoint (which holds the full model and optimizer
// state, as DDP's would).
TEST(FashionMnistTrainerProgramTest, TwoRanksUnderFsdpMatchDdpAndDdpResumesItsCheckpoint) {
  testing::TempDir dir;
  const std::string launcher = Launcher();
  if (launcher.empty()) GTEST_SKIP() << "bin/lakerun with `launch` not built";
  // The fsdp run keeps its checkpoints in dir/ck (ExpectCheckpoints), DDP's go to dir/ck-ddp.
  auto job = [&](const std::string& checkpoints, std::vector<std::string> extra) {
    std::vector<std::string> argv = {launcher, "launch", "-n", "2", "--"};
    std::vector<std::string> short_job = ShortJob(dir);
    *(std::find(short_job.begin(), short_job.end(), "--checkpoint-dir") + 1) = dir.Join(checkpoints);
    argv.insert(argv.end(), short_job.begin(), short_job.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  const RunResult ddp = RunProgram(job("ck-ddp", {"--strategy", "ddp", "--no-tracking"}), dir, "ddp", seconds(200));
  ASSERT_EQ(ddp.exit_code, 0) << ddp.output;
  const RunResult fsdp = RunProgram(job("ck", {"--strategy", "fsdp", "--no-tracking"}), dir, "fsdp", seconds(200));
  ASSERT_EQ(fsdp.exit_code, 0) << fsdp.output;
  EXPECT_THAT(fsdp.output, ::testing::HasSubstr("\"epochs_completed\":1,\"global_step\":5"));
  ASSERT_GT(TestCorrect(ddp.output), 0) << ddp.output;
  EXPECT_NEAR(TestCorrect(fsdp.output), TestCorrect(ddp.output), 2) << "ddp:\n" << ddp.output << "\nfsdp:\n"
                                                                     << fsdp.output;
  ExpectCheckpoints(dir);
  const RunResult resumed =
      RunProgram(job("ck", {"--epochs", "2", "--resume", "--strategy", "ddp", "--no-tracking"}), dir, "resumed",
                 seconds(200));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, ::testing::HasSubstr("\"epochs_completed\":2,\"global_step\":10"));
}

// The same job with its table in S3 (s3rver on loopback): one flag changed, --table s3://BUCKET/PATH. The first
// run imports the table into the bucket; the second trains from it without importing.
TEST(FashionMnistTrainerProgramTest, TrainsFromATableInS3) {
  testing::TempDir dir;
  std::string why_not;
  auto s3 = testing::StartS3Emulator(dir.Join("s3"), {"datasets"}, &why_not);
  if (!s3) GTEST_SKIP() << why_not;
  std::vector<std::string> argv = ShortJob(dir);
  *(std::find(argv.begin(), argv.end(), "--table") + 1) = "s3://datasets/fashion-mnist";
  argv.push_back("--no-tracking");
  testing::ChildOptions options;
  options.cwd = dir.path();
  options.set_env = {{"AWS_ENDPOINT_URL", s3->endpoint()}, {"AWS_ACCESS_KEY_ID", s3->access_key_id()},
                     {"AWS_SECRET_ACCESS_KEY", s3->secret_access_key()}, {"AWS_REGION", "us-east-1"},
                     // s3rver ignores conditional writes; this job is the table's only writer
                     {"AWS_S3_ALLOW_UNSAFE_RENAME", "true"}};
  const RunResult first = testing::RunProgram(argv, dir.Join("s3-first.out"), seconds(200), options);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, ::testing::HasSubstr("Imported Fashion-MNIST (train, test)"));
  const RunResult second = testing::RunProgram(argv, dir.Join("s3-second.out"), seconds(200), options);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, ::testing::Not(::testing::HasSubstr("Imported")));
  EXPECT_THAT(second.output, ::testing::HasSubstr("train 60000 rows, test 10000"));
  EXPECT_THAT(second.output, ::testing::ContainsRegex("Test set: Average loss: [0-9.]+, Accuracy: [0-9]+/1000 \\("));
}

TEST(FashionMnistTrainerProgramTest, MissingDataAndBadFlagsFailClearly) {
  testing::TempDir dir;
  const RunResult missing = RunProgram({Program(), "--table", dir.Join("t"), "--idx-dir", dir.Join("nothing-here"),
                                        "--no-tracking"},
                                       dir, "missing", seconds(60));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, ::testing::HasSubstr(dir.Join("nothing-here/train-images-idx3-ubyte.gz")));
  EXPECT_THAT(missing.output, ::testing::HasSubstr("apt-get install dataset-fashion-mnist"));

  const RunResult flag = RunProgram({Program(), "--batch-size", "-3"}, dir, "flag", seconds(60));
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_THAT(flag.output, ::testing::HasSubstr("flag --batch-size: expected at least 1, got -3"));
}

// Rank 1 of 2 whose rank 0 never comes: it gives up after --collective-timeout, not after the default 5 minutes.
TEST(FashionMnistTrainerProgramTest, ALoneRankGivesUpAfterTheCollectiveTimeout) {
  testing::TempDir dir;
  testing::ChildOptions options;
  options.cwd = dir.path();
  options.set_env = {{"RANK", "1"},         {"WORLD_SIZE", "2"},         {"LOCAL_RANK", "0"},
                     {"LOCAL_WORLD_SIZE", "1"}, {"MASTER_ADDR", "127.0.0.1"},
                     {"MASTER_PORT", std::to_string(testing::FreeLoopbackPort())}};
  options.unset_env = {"MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "LAKERUN_RDZV_SECRET", "LAKERUN_RDZV_PORT",
                       "TORCHELASTIC_USE_AGENT_STORE"};
  const auto start = std::chrono::steady_clock::now();
  const RunResult lone = testing::RunProgram(
      {Program(), "--collective-timeout", "2", "--no-tracking", "--table", dir.Join("t")}, dir.Join("lone.out"),
      seconds(120), std::move(options));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_NE(lone.exit_code, 0) << lone.output;
  EXPECT_LT(took, seconds(60)) << lone.output;
  EXPECT_THAT(lone.output, ::testing::HasSubstr("2000 ms")) << lone.output;

  const RunResult flag = RunProgram({Program(), "--collective-timeout", "0"}, dir, "flag", seconds(60));
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_THAT(flag.output, ::testing::HasSubstr("flag --collective-timeout"));
}

}  // namespace
}  // namespace lakerun::examples
