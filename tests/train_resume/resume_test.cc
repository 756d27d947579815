// Process-level resume of lakerun::train::Trainer: a run killed with SIGKILL and resumed with ckpt_path="last" ends
// with weights bitwise equal to a run that was never interrupted, on one process and on two ranks under
// `lakerun launch -n 2`; a crash in the middle of writing last.ckpt leaves the previous one to resume from (and its
// temporary is cleaned at the next save); a damaged last.ckpt is skipped for the newest checkpoint that verifies;
// a damaged page of the table fails the rank that reads it and stops the job; jobs under `lakerun launch
// --max-restarts 2` whose rank 0 is SIGKILLed at random moments resume by themselves, bitwise, into one MLflow run.
//
// The program (resume_program.cc) reads a Parquet table this test writes through lakerun::data::Loader, so the
// loader's position is part of what resumes. The kill lands mid-epoch: the program pauses inside the first
// training step after the first step checkpoint of the third epoch (0-based epoch 2, after the end-of-epoch-1
// checkpoint) and says so in a file; the test waits for that file on every rank and kills. Every wait is bounded;
// every process a test starts is killed when the test ends, also on failure.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lakerun_testing/child_process.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::train_resume {
namespace {

namespace pq = lakerun::parquet;
using testing::Alive;
using testing::Child;
using testing::Exit;
using testing::WaitGone;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kRows = 192;  // 12 batches of 16 per epoch on one rank, 6 per rank on two
constexpr int kEpochs = 4;
const milliseconds kRunTimeout = seconds(150);

// image: uint8 [8, 8] from a fixed LCG; label: a function of the image, so the model has something to learn.
void WriteTable(const std::string& path) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("image", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 64),
       pq::Leaf("label", pq::PhysicalType::kInt64)});
  pq::WriterOptions options;
  options.tensor_shapes["image"] = {8, 8};
  pq::ParquetWriter writer(LocalFileSystem(), path, schema, options);
  uint64_t x = 12345;
  for (int64_t begin = 0; begin < kRows; begin += 32) {
    std::vector<std::string> images;
    std::vector<int64_t> labels;
    for (int64_t i = begin; i < begin + 32; ++i) {
      std::string image(64, '\0');
      int sum = 0;
      for (auto& c : image) {
        c = static_cast<char>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
        sum += static_cast<unsigned char>(c);
      }
      images.push_back(image);
      labels.push_back(sum % 10);
    }
    writer.WriteRowGroup({pq::ColumnData::FixedBytes(pq::PhysicalType::kFixedLenByteArray, 64, images),
                          pq::ColumnData::Int64s(labels)});
  }
  writer.Close();
}

// Flips one byte in the middle of `path`'s bytes from `begin` on (of `length` bytes).
void FlipByte(const std::string& path, uint64_t begin, uint64_t length) {
  std::string bytes = LocalFileSystem().ReadFile(path);
  bytes[begin + length / 2] = static_cast<char>(bytes[begin + length / 2] ^ 0x10);
  LocalFileSystem().WriteAtomically(path, bytes);
}

std::string ReadOr(const std::string& path, const std::string& fallback = "") {
  return LocalFileSystem().Exists(path) ? LocalFileSystem().ReadFile(path) : fallback;
}

// Whether `pid` is a live train_resume_program (not a pid reused since). /proc files report size 0, so the command
// line is read as a stream.
bool IsResumeProgram(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Alive(pid) && cmdline.find("train_resume_program") != std::string::npos;
}

// "key value" lines of a report file.
int64_t ReportValue(const std::string& report, const std::string& key) {
  std::istringstream in(report);
  std::string k;
  int64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return -1;
}

class TrainResumeTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteTable(dir_.Join("table.parquet")); }

  void TearDown() override {
    // The ranks of a killed launcher die with it (parent-death signal); anything left is killed here.
    for (const auto& out : outs_) {
      for (int rank = 0; rank < 2; ++rank) {
        const std::string pid_file = JoinPath(out, "pid-rank" + std::to_string(rank));
        const pid_t pid = static_cast<pid_t>(std::atoll(ReadOr(pid_file, "0").c_str()));
        if (IsResumeProgram(pid)) ::kill(pid, SIGKILL);
      }
    }
    children_.clear();  // SIGKILLs the groups still running
  }

  // The program's arguments for a run named `name` (its --out directory) on checkpoint directory `ckpt`.
  std::vector<std::string> ProgramArgs(const std::string& name, const std::string& ckpt,
                                       std::vector<std::string> extra = {}) {
    const std::string out = dir_.Join(name);
    outs_.push_back(out);
    std::vector<std::string> args = {TRAIN_RESUME_PROGRAM, "--table", dir_.Join("table.parquet"), "--ckpt-dir",
                                     dir_.Join(ckpt), "--out", out, "--epochs", std::to_string(kEpochs)};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Starts the program on `ranks` processes: directly for 1, under `lakerun launch -n ranks` otherwise.
  Child& Start(int ranks, const std::string& name, const std::string& ckpt, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = ProgramArgs(name, ckpt, std::move(extra));
    if (ranks > 1) {
      std::vector<std::string> launch = {LAKERUN_CLI, "launch", "-n", std::to_string(ranks), "--timeout", "150",
                                         "--"};
      argv.insert(argv.begin(), launch.begin(), launch.end());
    }
    testing::ChildOptions appending;
    appending.append_log = true;
    // A SIGKILLed launcher cannot remove its temporary directory: it goes in the test's own.
    appending.set_env["TMPDIR"] = dir_.path();
    children_.push_back(std::make_unique<Child>(argv, dir_.Join(name + ".log"), appending));
    return *children_.back();
  }

  // Runs to completion; fails the test (with the log) unless it exits 0.
  void RunToEnd(int ranks, const std::string& name, const std::string& ckpt, std::vector<std::string> extra = {}) {
    const Exit e = Start(ranks, name, ckpt, std::move(extra)).Wait(kRunTimeout);
    ASSERT_TRUE(e.finished && e.signal == 0 && e.exit_code == 0)
        << name << ": " << e.Describe() << "\n" << ReadOr(dir_.Join(name + ".log"));
  }

  // Waits (bounded) until `path` exists; false if `child` ended first or time ran out.
  bool WaitForFile(Child& child, const std::string& path, milliseconds timeout = kRunTimeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (LocalFileSystem().Exists(path)) return true;
      if (child.Ended()) return false;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  std::vector<pid_t> RankPids(const std::string& name, int ranks) {
    std::vector<pid_t> pids;
    for (int r = 0; r < ranks; ++r) {
      pids.push_back(static_cast<pid_t>(
          std::atoll(ReadOr(dir_.Join(name + "/pid-rank" + std::to_string(r)), "0").c_str())));
    }
    return pids;
  }

  std::string Weights(const std::string& name, int rank) {
    return ReadOr(dir_.Join(name + "/weights-rank" + std::to_string(rank) + ".bin"));
  }
  std::string Report(const std::string& name, int rank) {
    return ReadOr(dir_.Join(name + "/report-rank" + std::to_string(rank) + ".txt"));
  }

  // Trains straight, then trains on `ranks` and kills the run (its launcher, or `kill_rank`'s process when >= 0)
  // with SIGKILL while it is paused mid-epoch after the step-`pause_step` checkpoint of epoch 2, then resumes from
  // "last". Checks that the resumed run continued from that checkpoint and that its weights equal the straight
  // run's bit for bit on every rank.
  void KillAndResume(int ranks, int kill_rank) {
    const int64_t batches = kRows / 16 / ranks;  // per epoch and rank
    const int64_t pause_step = 2 * batches + 4;  // the first step checkpoint of epoch 2 (every 4 steps)
    ASSERT_LT(4, batches);                       // ... which lies inside the epoch
    RunToEnd(ranks, "straight", "straight_ckpt");
    ASSERT_EQ(ReportValue(Report("straight", 0), "global_step"), kEpochs * batches);

    Child& run =
        Start(ranks, "killed", "ckpt", {"--pause-at-batch", std::to_string(pause_step), "--pause-ms", "60000"});
    for (int r = 0; r < ranks; ++r) {
      ASSERT_TRUE(WaitForFile(run, dir_.Join("killed/paused-rank" + std::to_string(r))))
          << "rank " << r << " did not reach the pause\n" << ReadOr(dir_.Join("killed.log"));
    }
    EXPECT_TRUE(LocalFileSystem().Exists(dir_.Join("ckpt/epochs/epoch=1.ckpt")));
    EXPECT_TRUE(LocalFileSystem().Exists(dir_.Join("ckpt/steps/epoch=2-step=" + std::to_string(pause_step) + ".ckpt")));
    const std::vector<pid_t> rank_pids = RankPids("killed", ranks);
    if (kill_rank >= 0) {
      ASSERT_TRUE(Alive(rank_pids[kill_rank]));
      ::kill(rank_pids[kill_rank], SIGKILL);
    } else {
      run.Signal(SIGKILL);
    }
    const Exit killed = run.Wait(seconds(30));
    ASSERT_TRUE(killed.finished) << ReadOr(dir_.Join("killed.log"));
    if (ranks == 1 || kill_rank < 0) {
      EXPECT_EQ(killed.signal, SIGKILL) << killed.Describe();
    } else {
      EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.Describe() << "\n" << ReadOr(dir_.Join("killed.log"));
    }
    EXPECT_EQ(WaitGone(rank_pids, seconds(30)), std::vector<pid_t>{}) << "ranks outlived the killed run";
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(Weights("killed", r), "") << "the killed run finished";

    RunToEnd(ranks, "resumed", "ckpt", {"--resume"});
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      EXPECT_EQ(ReportValue(Report("resumed", r), "global_step"), kEpochs * batches);
      // Resumed mid-epoch 2 right after step pause_step: the rest of epoch 2 and all of epoch 3.
      EXPECT_EQ(ReportValue(Report("resumed", r), "train_calls"), kEpochs * batches - pause_step);
      const std::string straight = Weights("straight", r);
      ASSERT_FALSE(straight.empty());
      EXPECT_TRUE(Weights("resumed", r) == straight)
          << "weights differ from the uninterrupted run's; " << FirstDifference("straight", "resumed", r);
      EXPECT_TRUE(Weights("straight", 0) == straight) << "the uninterrupted run's weights differ across ranks";
      EXPECT_TRUE(Weights("resumed", 0) == Weights("resumed", r)) << "the resumed run's weights differ across ranks";
    }
  }

  // The first training step at which `resumed`'s trace (which starts where it resumed) parts from `straight`'s.
  std::string FirstDifference(const std::string& straight, const std::string& resumed, int rank) {
    auto lines = [&](const std::string& name) {
      std::vector<std::string> out;
      std::istringstream in(ReadOr(dir_.Join(name + "/trace-rank" + std::to_string(rank))));
      for (std::string line; std::getline(in, line);) out.push_back(line);
      return out;
    };
    const std::vector<std::string> a = lines(straight), b = lines(resumed);
    if (b.size() > a.size()) return "the resumed run took more steps";
    for (size_t i = 0; i < b.size(); ++i) {
      if (a[a.size() - b.size() + i] != b[i]) {
        return "first differing step:\n  " + a[a.size() - b.size() + i] + " (uninterrupted)\n  " + b[i] + " (resumed)";
      }
    }
    return "every traced step matches";
  }

  testing::TempDir dir_;
  std::vector<std::string> outs_;
  std::vector<std::unique_ptr<Child>> children_;
};

TEST_F(TrainResumeTest, SigkilledSingleProcessResumesBitwise) { KillAndResume(1, -1); }

// At 2 ranks the resumed run must still average gradients: the Trainer wraps the module in DDP only after it has
// restored the checkpoint (torch::nn::Module::load re-seats each parameter's storage, which DDP's hooks must see).
TEST_F(TrainResumeTest, SigkilledLauncherOfTwoRanksResumesBitwise) { KillAndResume(2, -1); }

TEST_F(TrainResumeTest, SigkilledRankOfTwoResumesBitwise) { KillAndResume(2, 1); }

TEST_F(TrainResumeTest, CrashWritingLastCkptLeavesThePreviousOneToResumeFrom) {
  RunToEnd(1, "straight", "straight_ckpt");
  // Step 32: the top-k file of step 32 is written, then the process dies halfway through last.ckpt's temp file.
  const Exit crashed = Start(1, "crashed", "ckpt", {"--die-writing-last-at-step", "32"}).Wait(kRunTimeout);
  ASSERT_TRUE(crashed.finished);
  EXPECT_EQ(crashed.signal, SIGKILL) << crashed.Describe() << "\n" << ReadOr(dir_.Join("crashed.log"));
  bool torn = false;
  for (const auto& f : LocalFileSystem().List(dir_.Join("ckpt/steps"))) {
    torn = torn || f.name.rfind("last.ckpt.tmp.", 0) == 0;
  }
  EXPECT_TRUE(torn) << "no partial last.ckpt temp file: the crash did not happen mid-write";
  EXPECT_TRUE(LocalFileSystem().Exists(dir_.Join("ckpt/steps/epoch=2-step=32.ckpt")));

  RunToEnd(1, "resumed", "ckpt", {"--resume"});
  EXPECT_EQ(ReportValue(Report("resumed", 0), "global_step"), 48);
  EXPECT_EQ(ReportValue(Report("resumed", 0), "train_calls"), 48 - 28);  // from last.ckpt of step 28
  EXPECT_TRUE(Weights("resumed", 0) == Weights("straight", 0)) << "weights differ from the uninterrupted run's";
  for (const auto& f : LocalFileSystem().List(dir_.Join("ckpt/steps"))) {
    EXPECT_EQ(f.name.find(".tmp."), std::string::npos) << f.name << " outlived the next save";
  }
}

// last.ckpt damaged after a crash: resume skips it (saying why) for the newest checkpoint that verifies, the
// top-k file of step 32, and still ends bitwise equal to the uninterrupted run.
TEST_F(TrainResumeTest, ADamagedLastCkptIsSkippedForTheNewestCheckpointThatVerifies) {
  RunToEnd(1, "straight", "straight_ckpt");
  const Exit crashed = Start(1, "crashed", "ckpt", {"--die-writing-last-at-step", "32"}).Wait(kRunTimeout);
  ASSERT_TRUE(crashed.finished && crashed.signal == SIGKILL) << crashed.Describe();
  const std::string last = dir_.Join("ckpt/steps/last.ckpt");
  FlipByte(last, 0, LocalFileSystem().ReadFile(last).size());

  RunToEnd(1, "resumed", "ckpt", {"--resume"});
  EXPECT_EQ(ReportValue(Report("resumed", 0), "train_calls"), 48 - 32);  // from epoch=2-step=32.ckpt
  EXPECT_TRUE(Weights("resumed", 0) == Weights("straight", 0)) << "weights differ from the uninterrupted run's";
  const std::string log = ReadOr(dir_.Join("resumed.log"));
  EXPECT_THAT(log, ::testing::HasSubstr("skipping " + last + ": checkpoint " + last + " is damaged"));
  EXPECT_THAT(log, ::testing::HasSubstr("resuming from " + dir_.Join("ckpt/steps/epoch=2-step=32.ckpt")));
}

// Jobs under `lakerun launch -n 2 --max-restarts 2`, without --resume, whose rank 0 this test SIGKILLs twice at
// random (seeded) moments. Each restarted attempt resumes by itself from the newest checkpoint (or starts fresh when
// there is none yet) and continues the job's MLflow run: every job ends with the uninterrupted run's weights bit for
// bit, the same checkpoint files (no -v1 copy, no temporary), and exactly one run, FINISHED, whose
// lakerun.restart_count tag and restart_count metric count the restarts. LAKERUN_RESTART_JOBS sets the number of
// jobs (default kRestartJobs).
constexpr int kRestartJobs = 5;
constexpr uint32_t kRestartSeed = 20240611;
constexpr int64_t kStepMs = 40;         // 24 steps per rank: the fit trains for about 1 s per attempt
constexpr int64_t kLatestKillMs = 1000; // after rank 0's pid appears: from start-up (rendezvous) to the fit's end

// The checkpoint files under `dir` ("epochs/..." and "steps/...").
std::set<std::string> CheckpointFiles(const std::string& dir) {
  std::set<std::string> out;
  for (const char* sub : {"epochs", "steps"}) {
    const std::string path = JoinPath(dir, sub);
    if (!LocalFileSystem().Exists(path)) continue;
    for (const auto& f : LocalFileSystem().List(path)) out.insert(StrCat(sub, "/", f.name));
  }
  return out;
}

// Waits (bounded) for `out`/pid-rank0 to name a live train_resume_program other than `previous`; 0 when the job
// ended first or time ran out.
pid_t WaitForRankZero(Child& job, const std::string& out, pid_t previous, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline && !job.Ended()) {
    const pid_t pid = static_cast<pid_t>(std::atoll(ReadOr(JoinPath(out, "pid-rank0"), "0").c_str()));
    if (pid > 0 && pid != previous && Alive(pid)) return pid;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return 0;
}

// SIGKILLs `pid` if it still is a train_resume_program; true when it was.
bool KillRank(pid_t pid) { return IsResumeProgram(pid) && ::kill(pid, SIGKILL) == 0; }

TEST_F(TrainResumeTest, RestartedJobsResumeByThemselvesIntoOneRunEach) {
  const int ranks = 2;
  const int64_t steps = kEpochs * (kRows / 16 / ranks);
  const char* jobs_env = std::getenv("LAKERUN_RESTART_JOBS");
  const int jobs = jobs_env != nullptr ? std::atoi(jobs_env) : kRestartJobs;
  RunToEnd(ranks, "straight", "straight_ckpt");
  const std::set<std::string> straight_files = CheckpointFiles(dir_.Join("straight_ckpt"));
  ASSERT_FALSE(straight_files.empty());
  const std::string mlruns = dir_.Join("mlruns");
  std::mt19937 rng(kRestartSeed);
  int total_kills = 0, total_restarts = 0, resumed = 0, fresh = 0, cleared = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int j = 0; j < jobs; ++j) {
    const std::string name = "job" + std::to_string(j), job_id = StrCat("restart-test-", kRestartSeed, "-", j);
    SCOPED_TRACE(name);
    std::vector<std::string> argv = ProgramArgs(name, name + "_ckpt", {"--mlruns", mlruns, "--step-ms",
                                                                        std::to_string(kStepMs)});
    const std::vector<std::string> launch = {LAKERUN_CLI, "launch", "-n", std::to_string(ranks), "--max-restarts",
                                             "2", "--timeout", "150", "--run-id", job_id, "--"};
    argv.insert(argv.begin(), launch.begin(), launch.end());
    children_.push_back(std::make_unique<Child>(argv, dir_.Join(name + ".log")));
    Child& job = *children_.back();
    int kills = 0;
    pid_t previous = 0;
    for (int k = 0; k < 2; ++k) {
      const pid_t pid = WaitForRankZero(job, dir_.Join(name), previous, kRunTimeout);
      if (pid == 0) break;  // the job ended
      std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int64_t>(0, kLatestKillMs)(rng)));
      if (KillRank(pid)) ++kills;
      previous = pid;
    }
    total_kills += kills;
    const Exit e = job.Wait(kRunTimeout);
    const std::string log = ReadOr(dir_.Join(name + ".log"));
    ASSERT_TRUE(e.finished && e.signal == 0 && e.exit_code == 0) << e.Describe() << " after " << kills
                                                                  << " kills\n" << log;
    // Each kill restarts the job, unless it met a rank 0 already on its way out: the launcher's count is the truth.
    int restarts = 0;
    for (size_t at = log.find("[lakerun] restarting"); at != std::string::npos;
         at = log.find("[lakerun] restarting", at + 1)) {
      ++restarts;
    }
    EXPECT_LE(restarts, kills);
    total_restarts += restarts;
    auto count = [&log](const std::string& what) {
      int n = 0;
      for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
      return n;
    };
    resumed += count(") resumes from ");
    fresh += count(") starts fresh: ");
    cleared += count("Trainer: removing ");
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(ReportValue(Report(name, r), "global_step"), steps) << "rank " << r;
      EXPECT_TRUE(Weights(name, r) == Weights("straight", r))
          << "rank " << r << ": weights differ from the uninterrupted run's after " << kills << " kills\n" << log;
    }
    // The same checkpoint files as the uninterrupted run: no -v1 copy, no stray top-k file, no temporary.
    EXPECT_EQ(CheckpointFiles(dir_.Join(name + "_ckpt")), straight_files) << kills << " kills\n" << log;

    const std::unique_ptr<track::Store> store = track::OpenStore(mlruns);
    const std::optional<track::Experiment> experiment = store->GetExperimentByName("restarts");
    ASSERT_TRUE(experiment.has_value());
    const auto runs = store->SearchRunsByTag(experiment->experiment_id, track::kJobIdTag, job_id);
    ASSERT_EQ(runs.size(), 1u) << "runs of job " << job_id << " after " << kills << " kills\n" << log;
    EXPECT_EQ(store->SearchRuns({experiment->experiment_id}).size(), static_cast<size_t>(j + 1));
    const track::RunRecord& run = runs[0];
    EXPECT_EQ(run.info.status, track::RunStatus::kFinished);
    EXPECT_EQ(run.tags.at(track::kRestartCountTag), std::to_string(restarts));
    // One point per attempt after a restart that reached its fit, at the step it resumed from.
    const auto points = store->GetMetricHistory(run.info.run_id, "restart_count");  // train::kRestartCountMetric
    if (restarts > 0) {
      ASSERT_FALSE(points.empty());
      EXPECT_EQ(points.back().value, restarts);
      for (size_t i = 1; i < points.size(); ++i) {
        EXPECT_LT(points[i - 1].value, points[i].value);
        EXPECT_LE(points[i - 1].step, points[i].step);
      }
    } else {
      EXPECT_TRUE(points.empty());
    }
    EXPECT_FALSE(store->GetMetricHistory(run.info.run_id, "train_loss").empty());
  }
  std::cout << "[ restarts ] " << jobs << " jobs, " << total_kills << " SIGKILLs of rank 0, " << total_restarts
            << " restarts: " << resumed << " attempts resumed, " << fresh << " started fresh, " << cleared
            << " files of failed attempts removed; in "
            << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started).count()
            << " ms\n";
}

// A flipped byte in a page of the table: the rank that reads it fails with the page named, and the job stops
// before any rank finishes.
TEST_F(TrainResumeTest, ADamagedTablePageFailsTheRankThatReadsItAndStopsTheJob) {
  const std::string table = dir_.Join("table.parquet");
  const pq::PageSummary page = pq::ParquetFile::Open(LocalFileSystem(), table)->ReadPageHeaders(3, 0).back();
  FlipByte(table, page.offset + page.header_size, static_cast<uint64_t>(page.compressed_size));
  const Exit e = Start(2, "damaged", "ckpt").Wait(kRunTimeout);
  const std::string log = ReadOr(dir_.Join("damaged.log"));
  ASSERT_TRUE(e.finished) << log;
  EXPECT_NE(e.exit_code, 0) << e.Describe() << "\n" << log;
  EXPECT_THAT(log, ::testing::HasSubstr(table + ": row group 3, column 'image', page "));
  EXPECT_THAT(log, ::testing::HasSubstr("at offset " + std::to_string(page.offset) + ": page CRC mismatch"));
  EXPECT_THAT(log, ::testing::ContainsRegex("rank [01] of 2"));
  for (int r = 0; r < 2; ++r) EXPECT_EQ(Weights("damaged", r), "") << "rank " << r << " finished the fit";
}

}  // namespace
}  // namespace lakerun::train_resume
