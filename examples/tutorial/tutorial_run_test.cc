// The steps of docs/tutorial.md, run as a reader runs them, in a temporary directory: write the CSV file, import it
// with `lakerun table import csv`, train on one process, on two ranks under `lakerun launch`, list and show the runs
// with `lakerun runs`, and resume a run from its checkpoint. Asserts what the tutorial says happens: the model
// learns (validation loss falls, accuracy far above the 46 % of always answering the largest class), only rank 0
// tracks, and a resumed run continues where its checkpoint left off, ending where an uninterrupted run ends.
// Every program runs in its own process group and is killed if it outlives its deadline.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/ports.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::examples {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kTrain = TUTORIAL_TRAIN;
const std::string kMakeCsv = TUTORIAL_MAKE_CSV;
const std::string kLakerun = TUTORIAL_LAKERUN;

// Runs argv in `dir` (so data/, runs/ and mlruns/ land there), without the caller's MLflow settings.
testing::ProgramRun RunIn(const std::vector<std::string>& argv, const testing::TempDir& dir, const std::string& log,
                        std::map<std::string, std::string> env = {}) {
  testing::ChildOptions options;
  options.cwd = dir.path();
  for (const char* name : {"MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_RUN_ID"}) {
    if (env.count(name) == 0) options.unset_env.push_back(name);
  }
  options.set_env = std::move(env);
  return testing::RunProgram(argv, dir.Join(log + ".out"), std::chrono::seconds(120), std::move(options));
}

std::vector<std::string> Launch2(std::vector<std::string> program) {
  std::vector<std::string> argv = {kLakerun, "launch", "-n", "2", "--timeout", "110", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

// tutorial_train's report: "<n> rank(s): <e> epochs, <s> steps; val_loss <l>; val_acc <a>".
struct Summary {
  int ranks = 0;
  int epochs = 0;
  int steps = 0;
  double val_loss = 0;
  double val_acc = 0;
  std::string run_id;  // "tracked: ./mlruns, run <id> (<name>)"
};

Summary Parse(const std::string& output) {
  Summary s;
  std::smatch m;
  static const std::regex summary(
      R"((\d+) rank\(s\): (\d+) epochs, (\d+) steps; val_loss ([0-9.]+); val_acc ([0-9.]+))");
  if (std::regex_search(output, m, summary)) {
    s.ranks = std::stoi(m[1]);
    s.epochs = std::stoi(m[2]);
    s.steps = std::stoi(m[3]);
    s.val_loss = std::stod(m[4]);
    s.val_acc = std::stod(m[5]);
  } else {
    ADD_FAILURE() << "no summary line in:\n" << output;
  }
  static const std::regex tracked(R"(tracked: \./mlruns, run ([0-9a-f]{32}) \()");
  if (std::regex_search(output, m, tracked)) {
    s.run_id = m[1];
  } else {
    ADD_FAILURE() << "no 'tracked:' line in:\n" << output;
  }
  return s;
}

// The directory of run `run_id` in dir/mlruns (any experiment).
std::string RunDir(const testing::TempDir& dir, const std::string& run_id) {
  FileSystem& fs = LocalFileSystem();
  for (const FileInfo& experiment : fs.List(dir.Join("mlruns"))) {
    const std::string path = JoinPath(JoinPath(dir.Join("mlruns"), experiment.name), run_id);
    if (experiment.is_directory && fs.Exists(path)) return path;
  }
  ADD_FAILURE() << "no run " << run_id << " under " << dir.Join("mlruns");
  return "";
}

// A metric's history in the file store: step -> value ("<timestamp> <value> <step>" lines).
std::map<int64_t, double> Metric(const std::string& run_dir, const std::string& key) {
  std::map<int64_t, double> points;
  std::istringstream lines(LocalFileSystem().ReadFile(JoinPath(run_dir, "metrics/" + key)));
  int64_t timestamp = 0, step = 0;
  double value = 0;
  while (lines >> timestamp >> value >> step) points[step] = value;
  return points;
}

// Writes data/tutorial.csv, as the tutorial's first step does.
void MakeCsv(const testing::TempDir& dir) {
  LocalFileSystem().CreateDirs(dir.Join("data"));
  const testing::ProgramRun csv = RunIn({kMakeCsv, "data/tutorial.csv"}, dir, "make_csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_THAT(csv.output, HasSubstr("wrote data/tutorial.csv: 2000 rows"));
}

// One process: import, train 10 epochs, look at the run.
TEST(TutorialTest, OneRankImportsTrainsAndTracks) {
  testing::TempDir dir;
  MakeCsv(dir);
  const testing::ProgramRun import =
      RunIn({kLakerun, "table", "import", "csv", "data/tutorial.csv", "data/tutorial", "--no-progress"}, dir, "import");
  ASSERT_EQ(import.exit_code, 0) << import.output;
  EXPECT_THAT(import.output, HasSubstr("wrote data/tutorial: 2000 rows in 1 files"));

  const testing::ProgramRun train = RunIn({kTrain, "--table", "data/tutorial"}, dir, "train");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const Summary s = Parse(train.output);
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.epochs, 10);
  EXPECT_EQ(s.steps, 500);  // 1,600 training rows in batches of 32
  // Always answering the largest class scores 0.46; a linear model of the features does no better.
  EXPECT_GT(s.val_acc, 0.8) << train.output;
  EXPECT_LT(s.val_loss, 0.5) << train.output;
  EXPECT_THAT(train.output, Not(HasSubstr("resumed from")));

  // The run: params from Hyperparameters(), a falling validation loss at each epoch's last step, the model.
  const std::string run = RunDir(dir, s.run_id);
  ASSERT_FALSE(run.empty());
  FileSystem& fs = LocalFileSystem();
  EXPECT_EQ(fs.ReadFile(JoinPath(run, "params/lr")), "0.05");
  EXPECT_THAT(fs.ReadFile(JoinPath(run, "meta.yaml")), HasSubstr("status: 3"));  // FINISHED
  const std::map<int64_t, double> val_loss = Metric(run, "val_loss");
  ASSERT_EQ(val_loss.size(), 10u);
  EXPECT_EQ(val_loss.begin()->first, 49);
  EXPECT_EQ(val_loss.rbegin()->first, 499);
  EXPECT_LT(val_loss.rbegin()->second, 0.6 * val_loss.begin()->second);
  EXPECT_TRUE(fs.Exists(JoinPath(run, "artifacts/model/MLmodel")));
  EXPECT_TRUE(fs.Exists(dir.Join("runs/tutorial/checkpoints/last.ckpt")));

  const testing::ProgramRun list = RunIn({kLakerun, "runs", "list"}, dir, "list");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("Experiment tutorial"));
  EXPECT_THAT(list.output, ::testing::ContainsRegex("tutorial +" + s.run_id.substr(0, 8) + " +FINISHED"));
  const testing::ProgramRun show = RunIn({kLakerun, "runs", "show", "tutorial"}, dir, "show");
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_THAT(show.output, HasSubstr("Run " + s.run_id + " (tutorial)"));
  EXPECT_THAT(show.output, ::testing::ContainsRegex("val_acc +0\\.[89]"));
}

// Two ranks under the launcher, the same program: rank 0 imports the CSV file (PrepareData) while rank 1 waits, each
// rank trains on half of the rows. Then a run stopped after 5 epochs and resumed to 10 in the same MLflow run ends
// where the uninterrupted run ends.
TEST(TutorialTest, TwoRanksImportTrainAndResume) {
  testing::TempDir dir;
  MakeCsv(dir);
  const testing::ProgramRun straight =
      RunIn(Launch2({kTrain, "--csv", "data/tutorial.csv", "--table", "data/tutorial", "--name", "two-ranks"}), dir,
          "straight");
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  EXPECT_THAT(straight.output, HasSubstr("[rank0] imported data/tutorial.csv into data/tutorial: 2000 rows"));
  EXPECT_THAT(straight.output, Not(HasSubstr("[rank1] imported")));
  EXPECT_THAT(straight.output, Not(HasSubstr("[rank1] 2 rank(s)")));  // only rank 0 reports
  const Summary full = Parse(straight.output);
  EXPECT_EQ(full.ranks, 2);
  EXPECT_EQ(full.epochs, 10);
  EXPECT_EQ(full.steps, 250);  // each rank: 800 rows in batches of 32
  EXPECT_GT(full.val_acc, 0.8) << straight.output;
  EXPECT_LT(full.val_loss, 0.5) << straight.output;

  // Stop after 5 epochs, then ask for 10 and resume, logging into the same run.
  const testing::ProgramRun first =
      RunIn(Launch2({kTrain, "--table", "data/tutorial", "--name", "resumed", "--max-epochs", "5"}), dir, "first");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, Not(HasSubstr("imported")));  // the table exists now
  const Summary half = Parse(first.output);
  EXPECT_EQ(half.steps, 125);
  const testing::ProgramRun second =
      RunIn(Launch2({kTrain, "--table", "data/tutorial", "--name", "resumed", "--max-epochs", "10", "--resume"}), dir,
          "second", {{"MLFLOW_RUN_ID", half.run_id}});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("[rank0] resumed from runs/resumed/checkpoints/last.ckpt"));
  EXPECT_THAT(second.output, HasSubstr("epoch 5/10"));
  EXPECT_THAT(second.output, Not(HasSubstr("epoch 4/10")));  // nothing before the checkpoint is trained again
  const Summary resumed = Parse(second.output);
  EXPECT_EQ(resumed.run_id, half.run_id);
  EXPECT_EQ(resumed.epochs, 10);
  EXPECT_EQ(resumed.steps, 250);
  // Weights, optimizer state, loader order and RNG all came back: the same end as without the stop.
  EXPECT_NEAR(resumed.val_loss, full.val_loss, 1e-3);
  EXPECT_NEAR(resumed.val_acc, full.val_acc, 1e-3);
  // One run holds all ten epochs, each validated once.
  const std::map<int64_t, double> val_loss = Metric(RunDir(dir, half.run_id), "val_loss");
  ASSERT_EQ(val_loss.size(), 10u);
  EXPECT_EQ(val_loss.rbegin()->first, 249);

  const testing::ProgramRun list = RunIn({kLakerun, "runs", "list"}, dir, "list");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("Experiment tutorial"));
  EXPECT_THAT(list.output, HasSubstr(": 2 runs"));  // only rank 0 tracks
  EXPECT_THAT(list.output, ::testing::ContainsRegex("two-ranks +" + full.run_id.substr(0, 8) + " +FINISHED"));
  EXPECT_THAT(list.output, ::testing::ContainsRegex("resumed +" + half.run_id.substr(0, 8) + " +FINISHED"));
}

// The runs of `name` in dir/mlruns, as `lakerun runs list` prints them: one line per run.
int RunsNamed(const testing::TempDir& dir, const std::string& name) {
  const testing::ProgramRun list = RunIn({kLakerun, "runs", "list", "--columns", "name,status"}, dir, "list-" + name);
  EXPECT_EQ(list.exit_code, 0) << list.output;
  std::istringstream lines(list.output);
  std::string line;
  int runs = 0;
  while (std::getline(lines, line)) runs += line.rfind(name + " ", 0) == 0;
  return runs;
}

// Open MPI's major version from `mpirun --version` ("mpirun (Open MPI) 4.1.4"); 0 if unknown.
int OpenMpiMajorVersion(const testing::TempDir& dir) {
  const std::string text = RunIn({"/bin/sh", "-c", "exec mpirun --version"}, dir, "mpirun-version").output;
  const std::string tag = "(Open MPI) ";
  const size_t at = text.find(tag);
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + tag.size());
}

// docs/howto/multi-node.md: the same program as two tasks of a Slurm job step (the variables srun gives its tasks),
// and under Open MPI's mpirun. Each rank learns its place from those variables; only rank 0 tracks.
TEST(TutorialTest, TwoRanksUnderSrunAndMpirun) {
  testing::TempDir dir;
  MakeCsv(dir);
  const std::vector<std::string> job = {kTrain, "--csv", "data/tutorial.csv", "--table", "data/tutorial",
                                        "--max-epochs", "2"};
  std::vector<std::string> srun_job = job;
  srun_job.insert(srun_job.end(), {"--name", "srun"});
  const std::string port = std::to_string(testing::FreeLoopbackPort());
  std::vector<std::unique_ptr<testing::Child>> tasks;
  for (const std::string task : {"0", "1"}) {
    testing::ChildOptions options;
    options.cwd = dir.path();
    options.set_env = {{"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", task},
                       {"SLURM_LOCALID", task}, {"SLURM_NTASKS", "2"}, {"SLURM_GTIDS", "0,1"},
                       {"SLURM_STEP_NODELIST", "127.0.0.1"}, {"MASTER_PORT", port}};
    options.unset_env = {"MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_RUN_ID", "RANK", "WORLD_SIZE",
                         "LAKERUN_LAUNCHER", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "MASTER_ADDR"};
    tasks.push_back(std::make_unique<testing::Child>(srun_job, dir.Join("srun" + task + ".out"), options));
  }
  for (auto& task : tasks) {
    const testing::Exit exit = task->Wait(std::chrono::seconds(120));
    EXPECT_EQ(exit.status(), 0) << exit.Describe() << "\n" << LocalFileSystem().ReadFile(task->log_path());
  }
  const std::string task0 = LocalFileSystem().ReadFile(dir.Join("srun0.out"));
  EXPECT_EQ(Parse(task0).ranks, 2) << task0;
  EXPECT_THAT(task0, HasSubstr("imported data/tutorial.csv"));
  EXPECT_THAT(LocalFileSystem().ReadFile(dir.Join("srun1.out")), Not(HasSubstr("rank(s)")));
  EXPECT_EQ(RunsNamed(dir, "srun"), 1);

  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not installed";
  // Through sh, which finds mpirun on PATH. Both ranks are on this host: Open MPI's traffic stays on loopback (as in
  // src/dist/init_process_test.cc, Open MPI 5 keeps its out-of-band channel where it wants it).
  std::vector<std::string> mpirun = {"/bin/sh", "-c", "exec mpirun \"$@\"", "mpirun", "--allow-run-as-root",
                                     "--oversubscribe", "--bind-to", "none", "--mca", "btl_tcp_if_include", "lo"};
  if (OpenMpiMajorVersion(dir) < 5) mpirun.insert(mpirun.end(), {"--mca", "oob_tcp_if_include", "lo"});
  mpirun.insert(mpirun.end(), {"-np", "2", "-x", "MASTER_PORT=" + std::to_string(testing::FreeLoopbackPort())});
  mpirun.insert(mpirun.end(), job.begin(), job.end());
  mpirun.insert(mpirun.end(), {"--name", "mpirun"});
  const testing::ProgramRun run = RunIn(mpirun, dir, "mpirun");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Parse(run.output).ranks, 2) << run.output;
  EXPECT_EQ(RunsNamed(dir, "mpirun"), 1);
}

// docs/howto/early-stopping.md and docs/howto/checkpoints.md: --patience stops the fit; a damaged last.ckpt is
// skipped and the run resumes from the newest checkpoint that verifies (the best one), then stops where it did.
TEST(TutorialTest, EarlyStoppingAndADamagedCheckpoint) {
  testing::TempDir dir;
  MakeCsv(dir);
  const std::vector<std::string> job = {kTrain, "--csv", "data/tutorial.csv", "--table", "data/tutorial", "--name",
                                        "patient", "--max-epochs", "100", "--patience", "3"};
  const testing::ProgramRun first = RunIn(job, dir, "first");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("stopped early: Monitored metric val_loss did not improve in the last 3 "
                                      "records. Best score: "));
  const Summary stopped = Parse(first.output);
  EXPECT_LT(stopped.epochs, 100);
  EXPECT_GT(stopped.val_acc, 0.8) << first.output;
  std::smatch best;
  ASSERT_TRUE(std::regex_search(first.output, best, std::regex(R"(checkpoints: best (\S+epoch=(\d+)-\S+\.ckpt))")))
      << first.output;
  EXPECT_EQ(std::stoi(best[2]), stopped.epochs - 4);  // three epochs without improvement after the best one

  // One flipped bit in the middle of last.ckpt.
  FileSystem& fs = LocalFileSystem();
  const std::string last = dir.Join("runs/patient/checkpoints/last.ckpt");
  std::string bytes = fs.ReadFile(last);
  bytes[bytes.size() / 2] ^= 1;
  fs.WriteAtomically(last, bytes);

  std::vector<std::string> again = job;
  again.push_back("--resume");
  const testing::ProgramRun second = RunIn(again, dir, "second");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("skipping runs/patient/checkpoints/last.ckpt: checkpoint "
                                       "runs/patient/checkpoints/last.ckpt is damaged"));
  EXPECT_THAT(second.output, HasSubstr("resumed from " + std::string(best[1])));
  const Summary resumed = Parse(second.output);
  EXPECT_EQ(resumed.epochs, stopped.epochs);
  EXPECT_EQ(resumed.steps, stopped.steps);
  EXPECT_NEAR(resumed.val_loss, stopped.val_loss, 1e-3);
}

TEST(TutorialTest, MistakesFailClearly) {
  testing::TempDir dir;
  const testing::ProgramRun flag = RunIn({kTrain, "--max-epochs", "ten"}, dir, "flag");
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_THAT(flag.output, HasSubstr("tutorial_train: error: --max-epochs: expected a positive integer, got 'ten'"));
  const testing::ProgramRun table = RunIn({kTrain, "--table", "data/none"}, dir, "table");
  EXPECT_EQ(table.exit_code, 1);
  EXPECT_THAT(table.output, HasSubstr("data/none"));
}

}  // namespace
}  // namespace lakerun::examples
