// The program the process-level resume tests start, alone or as the ranks of `lakerun launch -n N`.
//
//   train_resume_program --table DIR --ckpt-dir DIR --out DIR [--epochs 4] [--resume]
//                        [--pause-at-batch B --pause-ms M] [--die-writing-last-at-step S] [--dropout P] [--sgd]
//                        [--mlruns DIR] [--step-ms M]
//
// Trains a small MLP with dropout (p = 0.25 unless --dropout; Adam, or SGD with momentum with --sgd) through lakerun::train::Trainer on the table's "image" (uint8 [8, 8]) and
// "label" (int64) columns, read by lakerun::data::Loader (this rank's share, shuffled from a fixed seed). Checkpoints
// go to --ckpt-dir: <dir>/epochs/epoch=E.ckpt at every epoch end, and <dir>/steps/ every 4 optimizer steps with
// save_last (the checkpoint --resume continues from, as ckpt_path="last").
//
// Writes into --out: pid-rank<R> (at start, before it joins the job), then, once the fit is over,
// weights-rank<R>.bin (every parameter and buffer as name, shape and raw bytes, so equal files mean bitwise equal
// weights) and report-rank<R>.txt ("global_step G\ntrain_calls C\n": optimizer steps reached, training steps run by
// this process); trace-rank<R> gets one line per training step (epoch, batch, sum of its sample ids, loss and the
// sum of fc1's weights before the step, in hex) as it runs.
//
// --pause-at-batch B --pause-ms M: this process's B-th training step (0-based) first writes <out>/paused-rank<R>, then
// sleeps M ms, so a test can kill the run at a known point, mid-epoch, with its loader threads running.
// --die-writing-last-at-step S: the process SIGKILLs itself halfway through writing last.ckpt at global step S (a
// crash in the middle of a checkpoint write).
// --mlruns DIR: tracks the fit in a run of experiment "restarts" in the file store DIR (rank 0), logging every 4
// steps; the run ends when the program does. --step-ms M: each training step also sleeps M ms (a longer run to kill
// at random points). Without --resume, a job `lakerun launch` restarted resumes by itself.
#include <signal.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/functional.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/base/rank_environment.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/dist/init.h"
#include "lakerun/track/run.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"
#include "dying_file_system.h"

namespace {

namespace F = torch::nn::functional;
using lakerun::train::Batch;

struct Flags {
  std::string table, ckpt_dir, out;
  int64_t epochs = 4;
  bool resume = false;
  int64_t pause_at_batch = -1;
  int64_t pause_ms = 0;
  int64_t die_writing_last_at_step = -1;
  double dropout = 0.25;
  bool sgd = false;
  std::string mlruns;
  int64_t step_ms = 0;
};

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      LAKERUN_CHECK_AS(ConfigError, i + 1 < argc, "train_resume_program: flag ", a, " needs a value");
      return argv[++i];
    };
    if (a == "--table") f.table = value();
    else if (a == "--ckpt-dir") f.ckpt_dir = value();
    else if (a == "--out") f.out = value();
    else if (a == "--epochs") f.epochs = std::stoll(value());
    else if (a == "--resume") f.resume = true;
    else if (a == "--pause-at-batch") f.pause_at_batch = std::stoll(value());
    else if (a == "--pause-ms") f.pause_ms = std::stoll(value());
    else if (a == "--sgd") f.sgd = true;
    else if (a == "--dropout") f.dropout = std::stod(value());
    else if (a == "--die-writing-last-at-step") f.die_writing_last_at_step = std::stoll(value());
    else if (a == "--mlruns") f.mlruns = value();
    else if (a == "--step-ms") f.step_ms = std::stoll(value());
    else LAKERUN_THROW(ConfigError, "train_resume_program: unknown flag '", a, "'");
  }
  LAKERUN_CHECK_AS(ConfigError, !f.table.empty() && !f.ckpt_dir.empty() && !f.out.empty(),
                   "train_resume_program: --table, --ckpt-dir and --out are required");
  return f;
}

struct Mlp : lakerun::train::Module {
  Mlp(const Flags& flags, std::string rank)
      : flags_(flags), rank_(std::move(rank)), trace_(lakerun::JoinPath(flags.out, "trace-rank" + rank_)) {
    fc1 = register_module("fc1", torch::nn::Linear(64, 32));
    drop = register_module("drop", torch::nn::Dropout(flags.dropout));
    fc2 = register_module("fc2", torch::nn::Linear(32, 10));
  }
  at::Tensor TrainingStep(const Batch& b, int64_t batch_idx) override {
    if (train_calls == flags_.pause_at_batch) {
      lakerun::LocalFileSystem().WriteAtomically(lakerun::JoinPath(flags_.out, "paused-rank" + rank_), "");
      std::this_thread::sleep_for(std::chrono::milliseconds(flags_.pause_ms));
    }
    ++train_calls;
    if (flags_.step_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(flags_.step_ms));
    const at::Tensor x = b.at("image").to(at::kFloat).view({-1, 64}) / 255.0;
    const at::Tensor out = fc2(drop(at::relu(fc1(x))));
    at::Tensor loss = F::nll_loss(at::log_softmax(out, 1), b.at("label"));
    Log("train_loss", loss);
    // One line per step: where the batch came from and the loss to the bit, to find where two runs part ways.
    trace_ << "epoch " << b.epoch << " batch " << batch_idx << " samples " << b.sample_ids.sum().item<int64_t>()
           << " loss " << std::hexfloat << loss.item<float>() << " weights " << fc1->weight.sum().item<float>()
           << std::defaultfloat << std::endl;
    return loss;
  }
  lakerun::train::Optimizers ConfigureOptimizers() override {
    if (flags_.sgd) {
      return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.05).momentum(0.9))};
    }
    return {std::make_shared<torch::optim::Adam>(parameters(), torch::optim::AdamOptions(0.01))};
  }
  const Flags& flags_;
  const std::string rank_;
  std::ofstream trace_;
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::Dropout drop{nullptr};
  int64_t train_calls = 0;
};

// Name, shape and raw bytes of every parameter and buffer.
std::string WeightBytes(const torch::nn::Module& module) {
  std::ostringstream out;
  auto put = [&](const std::string& name, const at::Tensor& t) {
    const at::Tensor c = t.detach().contiguous().cpu();
    out << name << " " << c.sizes() << " " << c.scalar_type() << "\n";
    out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
    out << "\n";
  };
  for (const auto& p : module.named_parameters()) put(p.key(), p.value());
  for (const auto& b : module.named_buffers()) put(b.key(), b.value());
  return out.str();
}

int Main(int argc, char** argv) {
  const Flags flags = Parse(argc, argv);
  at::set_num_threads(1);
  lakerun::dist::InitOptions init;
  init.timeout = std::chrono::seconds(60);
  // The pid before joining the job, so that a test can kill a rank while it starts up.
  const std::string rank = std::to_string(lakerun::DetectRankEnvironment().rank);
  lakerun::FileSystem& fs = lakerun::LocalFileSystem();
  fs.CreateDirs(flags.out);
  fs.WriteAtomically(lakerun::JoinPath(flags.out, "pid-rank" + rank), std::to_string(::getpid()));
  lakerun::dist::Context& ctx = lakerun::dist::Init(init);

  lakerun::data::TableOptions table;
  table.columns = {"image", "label"};
  table.rank = ctx.rank();
  lakerun::data::LoaderOptions lo;
  lo.batch_size = 16;
  lo.rank = ctx.rank();
  lo.world_size = ctx.world_size();
  lo.seed = 23;
  lo.shuffle.block_size = 8;
  lo.shuffle.window_blocks = 4;
  lo.num_threads = 2;
  lo.prefetch_batches = 2;
  lo.timeout = std::chrono::seconds(60);
  lakerun::data::Loader loader(lakerun::data::OpenTable(flags.table, table), lo);
  lakerun::train::LoaderBatchSource source(loader);

  lakerun::train::ModelCheckpointOptions per_epoch;
  per_epoch.dirpath = lakerun::JoinPath(flags.ckpt_dir, "epochs");
  per_epoch.filename = "{epoch}";
  per_epoch.save_top_k = -1;
  lakerun::train::ModelCheckpointOptions per_steps;
  per_steps.dirpath = lakerun::JoinPath(flags.ckpt_dir, "steps");
  per_steps.every_n_train_steps = 4;
  per_steps.save_last = true;
  std::vector<std::shared_ptr<lakerun::train::Callback>> callbacks = {
      std::make_shared<lakerun::train::ModelCheckpoint>(per_epoch),
      std::make_shared<lakerun::train::ModelCheckpoint>(per_steps)};
  if (flags.die_writing_last_at_step >= 0) {
    callbacks.push_back(std::make_shared<lakerun::train_resume::DieWritingLast>(flags.die_writing_last_at_step));
  }

  // Rank 0 tracks (the other ranks' tracker is a no-op); in a restarted job StartRun continues the job's run.
  std::optional<lakerun::track::Tracker> tracker;
  lakerun::track::Run run;
  if (!flags.mlruns.empty()) {
    lakerun::track::TrackerOptions to;
    to.experiment_name = "restarts";
    tracker.emplace(flags.mlruns, to);
    run = tracker->StartRun();
  }

  lakerun::train::TrainerOptions o;
  o.max_epochs = flags.epochs;
  o.seed = 41;
  o.default_root_dir = flags.ckpt_dir;
  o.progress_every_n_steps = 0;
  o.run = &run;
  o.log_every_n_steps = 4;
  torch::manual_seed(5);
  Mlp model(flags, rank);
  lakerun::train::Trainer trainer(o, callbacks);
  trainer.Fit(model, source, nullptr, flags.resume ? "last" : "");

  fs.WriteAtomically(lakerun::JoinPath(flags.out, "weights-rank" + rank + ".bin"), WeightBytes(model));
  fs.WriteAtomically(lakerun::JoinPath(flags.out, "report-rank" + rank + ".txt"),
                     lakerun::StrCat("global_step ", trainer.global_step(), "\ntrain_calls ", model.train_calls, "\n"));
  run.End();
  lakerun::dist::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "train_resume_program: " << e.what() << "\n";
    return 1;
  }
}
