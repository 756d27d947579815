// Where the Trainer's batches come from: the BatchSource interface, in-memory tensors, and lakerun::data::Loader.
//
//   LoaderBatchSource train = data::Loader(data::OpenTable("/data/train"), loader_options);  // owns the loader
//   trainer.Fit(module, train);
//
// Sharding. Before each loop a Trainer of several ranks hands every source its rank and world size
// (BatchSource::ShardByRank, TrainerOptions::use_distributed_sampler). A Loader whose LoaderOptions leave rank and
// world_size unset adopts them, so each rank reads its own share of the table without the code saying so; a Loader
// given its own keeps them, and one told world_size = 1 reads the whole table on every rank (the Trainer warns once).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "lakerun/data/loader.h"

namespace lakerun::train {

using Batch = data::Batch;

/// How a source divides the samples among the ranks of a job, as it tells the Trainer.
enum class Sharding {
  kUnknown,    ///< the source does not say (in-memory tensors, user sources): the Trainer leaves it as it is
  kByRank,     ///< each rank reads its own share
  kUnsharded,  ///< every rank reads every sample (it was told so: LoaderOptions::world_size = 1)
};

/// Anything that yields batches and can say where it is (lakerun::data::Loader, an in-memory source...).
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  /// Starts epoch `epoch` (shuffling must be a pure function of the seed and the epoch).
  virtual void SetEpoch(uint64_t epoch) = 0;
  /// The next batch of the current epoch; nullopt at its end.
  virtual std::optional<Batch> Next() = 0;
  /// The position after the last batch Next() returned, and its inverse.
  virtual std::map<std::string, int64_t> state_dict() const = 0;
  virtual void load_state_dict(const std::map<std::string, int64_t>& state) = 0;
  /// Batches per epoch when known (a fractional val_check_interval needs it); nullopt: unknown.
  virtual std::optional<int64_t> num_batches() const { return std::nullopt; }
  /// Called by a Trainer of `world_size` > 1 ranks before each loop, before num_batches(): a source that shards by
  /// rank and was not given its own place adopts this one. Returns how the source is sharded after the call.
  virtual Sharding ShardByRank(int64_t rank, int64_t world_size) { return Sharding::kUnknown; }
  /// What the source reads, for messages ("the loader over table /data/train").
  virtual std::string Describe() const { return "a batch source"; }
};

/// Batches of in-memory tensors (same first dimension), shuffled per epoch from (seed, epoch) when seed is set.
/// Every rank holding one sees all of its rows (Sharding::kUnknown): shard the tensors yourself.
class TensorBatchSource final : public BatchSource {
 public:
  /// Throws InvalidArgument for no columns, columns of different lengths, or batch_size < 1.
  TensorBatchSource(std::map<std::string, at::Tensor> columns, int64_t batch_size,
                    std::optional<uint64_t> shuffle_seed = std::nullopt);
  void SetEpoch(uint64_t epoch) override;
  std::optional<Batch> Next() override;
  std::map<std::string, int64_t> state_dict() const override;
  void load_state_dict(const std::map<std::string, int64_t>& state) override;
  std::optional<int64_t> num_batches() const override { return (rows_ + batch_size_ - 1) / batch_size_; }
  std::string Describe() const override { return "in-memory tensors"; }

 private:
  std::map<std::string, at::Tensor> columns_;
  int64_t batch_size_;
  int64_t rows_;
  std::optional<uint64_t> seed_;
  uint64_t epoch_ = 0;
  int64_t next_ = 0;  // batches returned in this epoch
  at::Tensor order_;
};

/// A lakerun::data::Loader as a BatchSource: one it owns (moved in), or one it refers to. Empty until a loader is
/// given, so a DataModule can hold one per split as a plain member and fill it in Setup():
///
///   class Tables : public DataModule {
///     void Setup(TrainerFn) override { train_ = data::Loader(data::OpenTable(root_ + "/train"), options_); }
///     BatchSource* TrainSource() override { return &train_; }
///     LoaderBatchSource train_;
///   };
class LoaderBatchSource final : public BatchSource {
 public:
  LoaderBatchSource() = default;
  /// Owns `loader`.
  LoaderBatchSource(data::Loader&& loader);  // NOLINT: implicit, so `LoaderBatchSource s = data::Loader(...)` reads
  /// Refers to `loader`, which must outlive this adapter.
  explicit LoaderBatchSource(data::Loader& loader) : loader_(&loader) {}
  LoaderBatchSource(LoaderBatchSource&& other) noexcept;
  LoaderBatchSource& operator=(LoaderBatchSource&& other) noexcept;
  /// Replaces the loader (the previous owned one stops and is destroyed).
  LoaderBatchSource& operator=(data::Loader&& loader);

  bool has_loader() const { return loader_ != nullptr; }
  /// The loader; throws ConfigError when none was given yet.
  data::Loader& loader() const;

  void SetEpoch(uint64_t epoch) override { loader().SetEpoch(epoch); }
  std::optional<Batch> Next() override { return loader().Next(); }
  std::map<std::string, int64_t> state_dict() const override { return loader().state_dict().ToMap(); }
  void load_state_dict(const std::map<std::string, int64_t>& state) override {
    loader().load_state_dict(data::LoaderState::FromMap(state));
  }
  std::optional<int64_t> num_batches() const override { return static_cast<int64_t>(loader().batches_per_epoch()); }
  /// Adopts the Trainer's rank when LoaderOptions left it unset (data::Loader::AdoptRank).
  Sharding ShardByRank(int64_t rank, int64_t world_size) override;
  std::string Describe() const override;

 private:
  std::optional<data::Loader> owned_;
  data::Loader* loader_ = nullptr;  // &*owned_, or the loader referred to
};

}  // namespace lakerun::train
