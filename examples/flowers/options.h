// Command-line flags of the `flowers` program.
#pragma once

#include <cstdint>
#include <string>

namespace lakerun::examples::flowers {

struct FlowersOptions {
  // Data.
  std::string table = "flowers_table";
  std::string images_dir;  // empty: Fashion-MNIST
  std::string fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";
  int64_t table_limit = 0;
  bool rebuild = false;
  int resize = 64;
  int crop = 56;
  int channels = 0;  // 0: what the table records (1 for Fashion-MNIST, 3 for photos)
  int64_t batch_size = 64;
  int64_t loader_threads = 1;
  // Model and optimisation.
  int64_t width = 16;
  double lr = 2e-3;
  double weight_decay = 1e-4;
  int64_t epochs = 20;
  int64_t limit_train_batches = -1;
  int64_t limit_val_batches = -1;
  int64_t limit_test_batches = -1;
  uint64_t seed = 42;
  int64_t torch_threads = 0;  // 0: cores / local ranks
  // Early stopping on val_loss.
  int64_t patience = 10;
  double min_delta = 0.01;
  double stop_below = 0.55;  // <= 0: no threshold
  // Output.
  std::string output_dir = "flowers_out";
  bool resume = false;
  std::string tracking_uri = "mlruns";
  std::string experiment = "flowers";
  std::string run_name;
  bool tracking = true;
  int64_t log_every = 50;
  int64_t dist_timeout_s = 900;
  bool help = false;
};

/// The --help text.
std::string Usage();

/// Parses argv. Throws ConfigError naming the flag and the bad value ("flag --batch-size: expected at least 1, got
/// -3"), or the unknown flag.
FlowersOptions ParseFlags(int argc, const char* const* argv);

}  // namespace lakerun::examples::flowers
