// DataModule: Lightning's LightningDataModule, where a Trainer's train / val / test batches come from.
//
//   class FashionMnist : public DataModule {
//    public:
//     void Setup(TrainerFn stage) override {
//       data::LoaderOptions options;
//       options.batch_size = 100;                 // no rank or world size: the Trainer shards the loaders
//       train_ = data::Loader(data::OpenTable("data/fashion-mnist/train"), options);
//       val_ = data::Loader(data::OpenTable("data/fashion-mnist/test"), options);
//     }
//     BatchSource* TrainSource() override { return &train_; }
//     BatchSource* ValSource() override { return &val_; }
//
//    private:
//     LoaderBatchSource train_, val_;
//   };
//   trainer.Fit(module, datamodule);
//
// The Trainer tells the DataModule its place in the job (rank(), world_size()) before PrepareData(), and shards
// each loader it returns (batch_source.h), so the code is the same on one rank and on N.
#pragma once

#include <cstdint>

#include "lakerun/train/batch_source.h"
#include "lakerun/train/enums.h"

namespace lakerun::train {

/// The sources are owned by the DataModule and must stay valid until the Trainer call that asked for them returns.
class DataModule {
 public:
  virtual ~DataModule() = default;
  /// Once per Trainer call on rank 0 (then every rank waits): download or prepare files.
  virtual void PrepareData() {}
  /// On every rank, before the sources are asked for: kFitting, kValidating or kTesting (Lightning's "fit",
  /// "validate", "test"; ToString spells them).
  virtual void Setup(TrainerFn stage) {}
  virtual BatchSource* TrainSource() = 0;
  /// nullptr: none.
  virtual BatchSource* ValSource() { return nullptr; }
  virtual BatchSource* TestSource() { return nullptr; }
  virtual void Teardown(TrainerFn stage) {}

  /// This process's rank and the job's world size, set by the Trainer before PrepareData() (Lightning's
  /// trainer.global_rank / world_size); 0 and 1 until a Trainer runs the DataModule.
  int64_t rank() const { return rank_; }
  int64_t world_size() const { return world_size_; }

 private:
  friend class Trainer;
  int64_t rank_ = 0;
  int64_t world_size_ = 1;
};

}  // namespace lakerun::train
