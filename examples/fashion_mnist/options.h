// Command-line flags of the fashion_mnist example. Defaults are PyTorch's MNIST example (batch 100, lr 0.001,
// momentum 0.5, 3 epochs, seed 1; DistributedSampler seed 0).
//
//   ExampleOptions options = ParseOptions(argc, argv);   // throws ConfigError naming the flag at fault
//
// Flags take `--name value` or `--name=value`; `--help` sets `help`.
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/dist/lr_scaling.h"

namespace lakerun::examples {

struct ExampleOptions {
  int epochs = 3;
  double lr = 0.001;
  double momentum = 0.5;
  int64_t batch_size = 100;
  uint64_t seed = 1;          ///< torch::manual_seed: initial weights, dropout masks
  uint64_t sampler_seed = 0;  ///< DistributedSampler's seed (PyTorch's default is 0)
  int64_t max_steps = 0;      ///< stop after this many optimizer steps in total (0: no limit)
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  double mean = 0.1307;
  double std = 0.3081;
  std::string checkpoint_dir;  ///< empty: no checkpoints
  bool resume = false;         ///< continue from the latest checkpoint in checkpoint_dir, if any
  dist::LrScaling scale_lr = dist::LrScaling::kNone;
  int threads = 0;             ///< intra-op threads; 0: OMP_NUM_THREADS if set, else 1
  bool dropout = true;         ///< --no-dropout: dropout in eval mode (only for the cross-check with Python)
  bool channels_last = true;   ///< --nchw: activations in NCHW, as the Python peer keeps them (NetOptions)
  bool shared_memory_gradients = true;  ///< --gradients-via-gloo: DdpOptions::shared_memory off
  int log_interval = 10;       ///< print the loss every this many steps
  int64_t eval_every = 0;      ///< evaluate on the test set every this many steps (0: only after each epoch)
  double target_accuracy = 0;  ///< stop once the test accuracy reaches this (0: never)
  int64_t warmup_steps = 20;   ///< steps per epoch left out of the steady throughput figure
  int64_t train_limit = 0;     ///< train on the first N training images only (0: all 60,000)
  int64_t test_limit = 0;      ///< evaluate on the first N test images only (0: all 10,000)
  std::string metrics_file;    ///< JSON lines per step and per evaluation; "{rank}" is replaced by the rank,
                               ///< without it only rank 0 writes
  std::string save_initial_weights;  ///< write the initial parameters (torch.save format) here, from rank 0
  std::string init_weights;          ///< load the initial parameters from this file (torch.save format)
  /// MLflow-style tracking through lakerun::track, from rank 0. Empty: MLFLOW_TRACKING_URI, else ./mlruns.
  std::string tracking_uri;
  std::string experiment;      ///< empty: MLFLOW_EXPERIMENT_NAME, else "fashion-mnist"
  std::string run_name;        ///< empty: a generated name
  bool tracking = true;        ///< --no-tracking turns it off
  bool log_model = true;       ///< --no-log-model: skip logging the final model
  bool help = false;
};

ExampleOptions ParseOptions(int argc, const char* const* argv);
/// The flag reference printed by --help.
std::string UsageText();

}  // namespace lakerun::examples
