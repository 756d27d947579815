// The training loop of the fashion_mnist example: the same code on one process and on every rank of a job.
//
//   dist::Context& ctx = dist::Init();
//   FashionMnistOptions data_options;
//   data_options.data_dir = options.data_dir;
//   FashionMnist data = LoadFashionMnist(data_options);
//   TrainResult result = Train(options, ctx, data, start_time);
//
// Each rank visits its DistributedSampler share of the training set (PyTorch's order for the same seeds); lakerun's
// DistributedDataParallel averages the gradients. Rank 0 prints PyTorch-example progress lines with global sample
// counts, writes per-epoch checkpoints and the metrics file. Evaluation is sharded across ranks and all-reduced,
// so every rank sees the same accuracy and takes the same stop decisions.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataset.h"

namespace torch::nn {
class Module;
}
#include "lakerun/dist/init.h"
#include "options.h"

namespace lakerun::examples {

struct EvalResult {
  double average_loss = 0;
  int64_t correct = 0;
  int64_t total = 0;
  double accuracy() const { return total == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(total); }
};

struct TrainResult {
  int world_size = 1;
  double lr = 0;                 ///< after --scale-lr
  int64_t steps = 0;             ///< optimizer steps taken, including those before a resume
  int64_t steps_this_run = 0;
  int64_t epochs_completed = 0;
  EvalResult test;               ///< the final evaluation
  double steady_samples_per_s = 0;  ///< global: all ranks' samples over the steady steps' wall time
  double steady_step_ms = 0;        ///< mean wall time of a steady step
  double cpu_ms_per_step = 0;       ///< this process's CPU time per steady step
  double train_seconds = 0;         ///< wall time inside the training loop, evaluations excluded
  double first_step_done_s = 0;     ///< since the start time
  std::optional<double> time_to_target_s;  ///< since the start time, when --target-accuracy was reached
  std::vector<float> losses;        ///< this rank's loss at every step of this run
};

/// Receives the loop's events on rank 0, e.g. to log them to an experiment tracker. Calls come from the training
/// thread, so implementations must return quickly (lakerun::track only enqueues).
class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  /// Every --log-interval steps: this rank's loss after optimizer step `step` (1-based, counted across epochs).
  virtual void OnTrainLoss(int64_t step, int64_t epoch, double loss) {}
  /// After each evaluation on the test set (the same result on every rank).
  virtual void OnEvaluation(int64_t step, int64_t epoch, const EvalResult& eval) {}
  /// After rank 0 wrote a checkpoint.
  virtual void OnCheckpoint(int64_t epoch, const std::string& path) {}
};

/// Runs the whole training. `start` is the reference for the reported times (the program's start, or BENCH_T0).
/// `observer` (may be null) sees rank 0's events; `trained` (may be null) receives the trained module.
TrainResult Train(const ExampleOptions& options, dist::Context& ctx, const FashionMnist& data,
                  std::chrono::system_clock::time_point start, TrainObserver* observer = nullptr,
                  std::shared_ptr<torch::nn::Module>* trained = nullptr);

}  // namespace lakerun::examples
