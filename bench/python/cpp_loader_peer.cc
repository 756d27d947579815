// The C++ side of bench/python/loader_bench.py: lakerun::data::Loader epochs in a process of their own, at the
// settings lakerun.Loader gets from Python, so the bench can set the Python package's overhead against them.
//
//   bench_python_cpp_loader_peer TABLE BATCH_SIZE THREADS SEED open-once|reopen
//
// Protocol (bench/data/epoch_peer.h): prints "ready" once the table is opened; for every "epoch" line on stdin it
// builds a new loader (untimed, as the Python side does), times its first epoch and prints
// "epoch samples_per_s=<rate>". Exits at the end of stdin. open-once: every loader reads the table opened before
// "ready" (lakerun.Loader over a lakerun.Table; bench/data's cold epoch); reopen: each loader opens the table
// anew, so its epoch decodes into fresh memory (lakerun.Loader over a path).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"

namespace {

// One first epoch of a fresh loader over `table` with the image column as raw bytes, as the Python bench reads it:
// samples per second from the first Next() to the end of the epoch.
double FirstEpochRate(std::shared_ptr<const lakerun::data::RowSource> table, int64_t batch_size, size_t threads,
                      uint64_t seed) {
  lakerun::data::LoaderOptions options;
  options.batch_size = batch_size;
  options.num_threads = threads;
  options.seed = seed;
  options.raw_bytes = {"image"};
  lakerun::data::Loader loader(std::move(table), options);
  const auto start = std::chrono::steady_clock::now();
  int64_t samples = 0;
  while (auto batch = loader.Next()) {
    const at::Tensor images = batch->at("image").view({batch->size(), -1});  // what the Python side does
    samples += images.size(0);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(samples) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 6 ? argv[5] : "";
  if (mode != "open-once" && mode != "reopen") {
    std::fprintf(stderr, "usage: %s TABLE BATCH_SIZE THREADS SEED open-once|reopen\n", argv[0]);
    return 2;
  }
  const std::string table = argv[1];
  const int64_t batch_size = std::stoll(argv[2]);
  const size_t threads = std::stoul(argv[3]);
  const uint64_t seed = std::stoull(argv[4]);
  try {
    std::shared_ptr<const lakerun::data::RowSource> opened =
        lakerun::data::OpenTable(table);  // fails before "ready" when the table cannot be read
    std::printf("ready\n");
    std::fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line != "epoch") continue;
      auto source = mode == "open-once" ? opened : lakerun::data::OpenTable(table);
      std::printf("epoch samples_per_s=%.0f\n", FirstEpochRate(std::move(source), batch_size, threads, seed));
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_python_cpp_loader_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
