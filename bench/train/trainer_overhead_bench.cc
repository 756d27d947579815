// Per-step cost of lakerun::train::Trainer over a hand-written libtorch loop: same model, data and optimizer.
//
//   bench_train_trainer_overhead [--steps N] [--block B] [--device cpu|cuda]
//
// The classic MNIST CNN (conv1 1->10 k5, maxpool2, relu, conv2 10->20 k5, dropout2d, maxpool2, relu, fc1 320->50,
// relu, dropout, fc2 50->10, log_softmax), SGD lr 0.01 momentum 0.5, batch 100 of 1x28x28 from the same in-memory
// tensors (one TensorBatchSource each, 60 batches per epoch), 1 intra-op thread.
//
// Two Trainer configurations, each against its own hand loop:
//   bare      no Log() calls, no progress output, no callbacks but the timer;
//   defaults  what a user has without tuning: Log("loss", prog_bar) every step, log_every_n_steps = 50 into a
//             tracking run (file store), a progress line every 50 steps, ModelCheckpoint (every epoch) and
//             EarlyStopping on the epoch's loss, distributed = true (world size 1).
// Interleaving: the Trainer runs one Fit; every B steps its timer callback runs B steps of the hand loop on a second,
// identical model, so load changes on a shared machine hit both. A Trainer step is the time between two consecutive
// OnTrainBatchEnd calls (hand-loop time taken out); a hand step is one loop iteration (fetch, zero_grad, forward,
// backward, step). Prints medians, means and the ratios trainer / hand (target: median <= 1.03).
// --device cuda: both models on cuda:0, batches copied there from the same CPU tensors, and both sides wait for the
// GPU at the end of each step (torch::cuda::synchronize), so a step's time includes its GPU work.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/nn/functional.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "../common/mnist_cnn.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"

namespace {

namespace F = torch::nn::functional;
namespace tr = lakerun::train;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Cnn : lakerun::bench::MnistCnn<tr::Module> {
  explicit Cnn(bool log) : log_(log) {}
  at::Tensor TrainingStep(const tr::Batch& b, int64_t) override {
    at::Tensor loss = F::nll_loss(forward(b.at("x")), b.at("y"));
    if (log_) {
      tr::LogOptions bar;
      bar.prog_bar = true;
      Log("loss", loss, bar);
    }
    return loss;
  }
  tr::Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.01).momentum(0.5))};
  }
  bool log_;
};

// The hand-written loop: its own model, optimizer and batch source; Step() is one iteration.
struct HandLoop {
  HandLoop(const Cnn& like, std::map<std::string, at::Tensor> data, c10::Device device)
      : model(false), source(std::move(data), 100), device(device) {
    model.to(device);
    at::NoGradGuard no_grad;
    auto a = like.parameters(), b = model.parameters();
    for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
    opt = std::make_unique<torch::optim::SGD>(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
    model.train();
  }
  double Step() {
    const auto start = Clock::now();
    std::optional<tr::Batch> b = source.Next();
    if (!b) {
      source.SetEpoch(++epoch);
      b = source.Next();
    }
    opt->zero_grad();
    F::nll_loss(model.forward(b->at("x").to(device)), b->at("y").to(device)).backward();
    opt->step();
    if (device.is_cuda()) torch::cuda::synchronize();
    return Ms(Clock::now() - start);
  }
  Cnn model;
  tr::TensorBatchSource source;
  c10::Device device;
  std::unique_ptr<torch::optim::SGD> opt;
  uint64_t epoch = 0;
};

// Times the Trainer's steps and runs `block` hand steps after every `block` Trainer steps.
class Interleaver : public tr::Callback {
 public:
  Interleaver(HandLoop& hand, int block) : hand_(hand), block_(block) {}
  std::string state_key() const override { return "Interleaver"; }
  void OnTrainBatchEnd(tr::TrainerState&) override {
    if (hand_.device.is_cuda()) torch::cuda::synchronize();
    const auto now = Clock::now();
    if (++calls_ > 1) trainer_ms.push_back(Ms(now - resumed_));  // the first step includes Fit's setup
    if (calls_ % block_ == 0) {
      for (int i = 0; i < block_; ++i) hand_ms.push_back(hand_.Step());
    }
    resumed_ = Clock::now();
  }
  std::vector<double> trainer_ms, hand_ms;

 private:
  HandLoop& hand_;
  int block_;
  int64_t calls_ = 0;
  Clock::time_point resumed_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

struct Result {
  double trainer_median, hand_median, trainer_mean, hand_mean;
  size_t steps;
};

Result Measure(bool defaults, int steps, int block, const std::map<std::string, at::Tensor>& data,
               const std::string& dir, c10::Device device) {
  at::manual_seed(1);
  Cnn model(defaults);
  HandLoop hand(model, data, device);
  auto timer = std::make_shared<Interleaver>(hand, block);
  tr::TensorBatchSource train(data, 100);
  tr::TrainerOptions o;
  o.max_steps = steps + 1;
  o.default_root_dir = dir;
  o.accelerator = device.is_cuda() ? tr::Accelerator::kCuda : tr::Accelerator::kCpu;
  std::ostringstream progress;
  std::vector<std::shared_ptr<tr::Callback>> callbacks = {timer};
  std::unique_ptr<lakerun::track::Tracker> tracker;
  std::unique_ptr<lakerun::track::Run> run;
  if (defaults) {
    o.progress_stream = &progress;
    lakerun::track::TrackerOptions to;
    to.handle_signals = false;
    tracker = std::make_unique<lakerun::track::Tracker>(lakerun::JoinPath(dir, "mlruns"), to);
    run = std::make_unique<lakerun::track::Run>(tracker->StartRun());
    o.run = run.get();
    callbacks.push_back(std::make_shared<tr::ModelCheckpoint>(tr::ModelCheckpointOptions{}));
    tr::EarlyStoppingOptions e;
    e.monitor = "loss";
    e.patience = 1000;
    callbacks.push_back(std::make_shared<tr::EarlyStopping>(e));
  } else {
    o.progress_every_n_steps = 0;
    o.num_sanity_val_steps = 0;
    o.distributed = false;
  }
  tr::Trainer trainer(o, callbacks);
  trainer.Fit(model, train);
  if (run) run->End();
  return {Median(timer->trainer_ms), Median(timer->hand_ms), Mean(timer->trainer_ms), Mean(timer->hand_ms),
          timer->trainer_ms.size()};
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 400;
  int block = 10;
  std::string device_name = "cpu";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--steps") steps = std::max(20, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--block") block = std::max(1, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--device") device_name = argv[i + 1];
  }
  if (device_name != "cpu" && device_name != "cuda") {
    std::fprintf(stderr, "bench_train_trainer_overhead: --device must be cpu or cuda, got '%s'\n", device_name.c_str());
    return 2;
  }
  if (device_name == "cuda" && !torch::cuda::is_available()) {
    std::fprintf(stderr, "bench_train_trainer_overhead: --device cuda, but no CUDA device is available\n");
    return 2;
  }
  const c10::Device device = device_name == "cuda" ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  at::set_num_threads(1);
  at::manual_seed(0);
  const int64_t rows = 6000;
  const std::map<std::string, at::Tensor> data = {{"x", at::randn({rows, 1, 28, 28})},
                                                  {"y", at::randint(0, 10, {rows}, at::kLong)}};
  char tmpl[] = "/tmp/bench_train_XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  Measure(false, 2 * block, block, data, lakerun::JoinPath(dir, "warmup"), device);
  const Result bare = Measure(false, steps, block, data, lakerun::JoinPath(dir, "bare"), device);
  const Result full = Measure(true, steps, block, data, lakerun::JoinPath(dir, "defaults"), device);
  lakerun::LocalFileSystem().RemoveAll(dir);

  std::printf("MNIST CNN, batch 100, SGD(0.01, momentum 0.5), 1 thread, on %s, %zu interleaved steps each "
              "(blocks of %d)\n",
              device.str().c_str(), bare.steps, block);
  auto print = [](const char* name, const Result& r) {
    std::printf("%-9s hand loop median %.3f ms/step  mean %.3f\n", name, r.hand_median, r.hand_mean);
    std::printf("%-9s Trainer   median %.3f ms/step  mean %.3f\n", name, r.trainer_median, r.trainer_mean);
    std::printf("%-9s ratio trainer/hand  median %.4f (%+.2f %%)  mean %.4f (%+.2f %%)\n", name,
                r.trainer_median / r.hand_median, (r.trainer_median / r.hand_median - 1) * 100,
                r.trainer_mean / r.hand_mean, (r.trainer_mean / r.hand_mean - 1) * 100);
  };
  print("bare", bare);
  print("defaults", full);
  return 0;
}
