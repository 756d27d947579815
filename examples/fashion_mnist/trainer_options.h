// Command-line flags of the fashion_mnist program (the Trainer on the Delta table). Defaults: the seed CNN with SGD
// (lr 0.05, momentum 0.5, batch 100 per rank, 5 epochs) and the seed's callbacks: EarlyStopping(monitor="val_loss",
// min_delta=0.01, patience=10, stopping_threshold=0.55) and ModelCheckpoint(monitor="val_loss", save_last=True).
//
//   TrainerExampleOptions options = ParseTrainerExampleOptions(argc, argv);   // ConfigError names the flag
//
// Flags take `--name value` or `--name=value`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lakerun/train/strategy.h"

namespace lakerun::examples {

struct TrainerExampleOptions {
  int64_t epochs = 5;
  double lr = 0.05;
  double momentum = 0.5;
  int64_t batch_size = 100;       ///< per rank
  int64_t eval_batch_size = 1000; ///< per rank, validation and test
  uint64_t seed = 1;              ///< initial weights, dropout, and the loader's shuffle
  std::string table = "data/fashion-mnist";
  std::string idx_dir = "/usr/share/datasets/fashion-mnist";
  double mean = 0.1307;
  double std = 0.3081;
  std::string checkpoint_dir = "checkpoints";
  bool resume = false;            ///< Fit(ckpt_path="last")
  train::Strategy strategy = train::Strategy::kDdp;  ///< at world size > 1
  int threads = 0;                ///< intra-op threads per rank; 0: OMP_NUM_THREADS, else 1
  double collective_timeout_s = 300;  ///< joining the ranks and every collective (dist::InitOptions::timeout)
  int64_t limit_train_batches = -1;
  int64_t limit_val_batches = -1;
  int64_t limit_test_batches = -1;
  // EarlyStopping.
  double min_delta = 0.01;
  int64_t patience = 10;
  std::optional<double> stopping_threshold = 0.55;  ///< --stopping-threshold none: off
  int64_t progress_every = 100;   ///< optimizer steps between progress lines (0: only epoch ends)
  int64_t log_every_n_steps = 50;
  std::string tracking_uri;       ///< empty: MLFLOW_TRACKING_URI, else ./mlruns
  std::string experiment;         ///< empty: MLFLOW_EXPERIMENT_NAME, else "fashion-mnist"
  std::string run_name;
  bool tracking = true;
  bool log_model = true;
  bool help = false;
};

TrainerExampleOptions ParseTrainerExampleOptions(int argc, const char* const* argv);
/// The flag reference printed by --help.
std::string TrainerExampleUsage();

}  // namespace lakerun::examples
