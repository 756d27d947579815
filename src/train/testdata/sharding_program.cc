// The program train_sharding_test runs as 2 ranks: `train_sharding_program MODE OUT_DIR` fits a linear model for one
// epoch on a 40-row table and writes the table rows each rank trained on to OUT_DIR/rank<R>.ids. MODE:
//   unset        a Loader whose options leave rank and world_size unset, passed to Trainer::Fit
//   datamodule   the same loader built in DataModule::Setup (which also prints the rank and world size it was told)
//   whole        a Loader told world_size = 1: every rank reads every row, rank 0 warns once
//   no-sampler   an unset Loader under TrainerOptions::use_distributed_sampler = false: left as it is, no warning
#include <torch/nn/modules/linear.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/run_main.h"
#include "lakerun/data/row_source.h"
#include "lakerun/dist/init.h"
#include "lakerun/train/trainer.h"

namespace lakerun::train {
namespace {

constexpr int64_t kRows = 40;

std::shared_ptr<const data::RowSource> Table() {
  data::MemoryRowSource::Column x{{"x", data::ElementType::kFloat32, {}}, std::vector<uint8_t>(kRows * 4), {}};
  for (int64_t i = 0; i < kRows; ++i) {
    const float v = static_cast<float>(i) / kRows;
    std::memcpy(x.bytes.data() + i * 4, &v, 4);
  }
  return std::make_shared<data::MemoryRowSource>(std::vector<data::MemoryRowSource::Column>{x}, 8, "memory-table");
}

data::Loader NewLoader(bool whole) {
  data::LoaderOptions options;
  options.batch_size = 5;
  options.num_threads = 0;
  if (whole) {
    options.rank = 0;
    options.world_size = 1;
  }
  return data::Loader(Table(), options);
}

// Learns y = 2x; records the table rows of every training batch.
struct Recorder : Module {
  Recorder() { fc = register_module("fc", torch::nn::Linear(1, 1)); }
  at::Tensor TrainingStep(const Batch& batch, int64_t) override {
    const at::Tensor x = batch.at("x").unsqueeze(1);
    const int64_t* ids = batch.sample_ids.data_ptr<int64_t>();
    rows.insert(rows.end(), ids, ids + batch.size());
    return torch::nn::functional::mse_loss(fc(x), 2 * x);
  }
  Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.1))};
  }
  torch::nn::Linear fc{nullptr};
  std::vector<int64_t> rows;
};

class Tables : public DataModule {
 public:
  void Setup(TrainerFn stage) override {
    std::printf("datamodule %s: rank %lld of %lld\n", ToString(stage), static_cast<long long>(rank()),
                static_cast<long long>(world_size()));
    train_ = NewLoader(false);
  }
  BatchSource* TrainSource() override { return &train_; }

 private:
  LoaderBatchSource train_;
};

int Run(int argc, char** argv) {
  if (argc != 3) throw ConfigError("usage: train_sharding_program unset|datamodule|whole|no-sampler OUT_DIR");
  const std::string mode = argv[1];
  TrainerOptions options;
  options.max_epochs = 1;
  options.progress_every_n_steps = 0;
  options.use_distributed_sampler = mode != "no-sampler";
  Trainer trainer(options);
  Recorder module;
  if (mode == "datamodule") {
    Tables tables;
    trainer.Fit(module, tables);
  } else {
    LoaderBatchSource train = NewLoader(mode == "whole");
    trainer.Fit(module, train);
  }
  const int rank = dist::CurrentContext().rank();
  std::ofstream out(std::string(argv[2]) + "/rank" + std::to_string(rank) + ".ids");
  for (int64_t row : module.rows) out << row << "\n";
  dist::Shutdown();
  return 0;
}

}  // namespace
}  // namespace lakerun::train

int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, lakerun::train::Run); }
