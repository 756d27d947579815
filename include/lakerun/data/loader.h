// The training loader: a table (RowSource) to batches of at::Tensor on one rank.
//
//   lakerun::data::TableOptions table;
//   table.columns = {"image", "label"};
//   auto source = lakerun::data::OpenTable("/data/fashion_mnist", table);
//   lakerun::data::LoaderOptions opts;
//   opts.batch_size = 100;
//   opts.rank = rank;  opts.world_size = world_size;     // two integers; data never talks to dist
//   lakerun::data::Loader loader(source, opts);           // (under a Trainer, leave them unset: it shards)
//   for (uint64_t epoch = 0; epoch < 10; ++epoch) {
//     loader.SetEpoch(epoch);
//     while (auto batch = loader.Next()) Train(batch->at("image"), batch->at("label"));
//   }
//   checkpoint["loader"] = loader.state_dict().ToMap();  // resume: loader.load_state_dict(LoaderState::FromMap(..))
//
// Guarantees (docs/data.md): every rank yields the same number of batches; the global order depends only on
// (seed, epoch); resume yields exactly the samples not yet yielded; decoding runs on an owned pool of num_threads
// threads, at most prefetch_batches batches ahead, with decoded row groups cached up to cache_bytes; every wait is
// bounded by `timeout`; a worker's error reaches Next() with the rank and batch prefixed.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lakerun/data/column_policy.h"
#include "lakerun/data/epoch_plan.h"
#include "lakerun/data/image_options.h"
#include "lakerun/data/loader_state.h"
#include "lakerun/data/row_source.h"
#include "lakerun/data/shuffle.h"

namespace lakerun::data {

/// One batch: a tensor per projected column (first dimension = batch size), and the table rows it holds.
struct Batch {
  /// On CPU, tensors in memory the loader recycles once they are dropped; they stay valid after the loader is gone,
  /// but their storage cannot be resized in place (clone() one to own an ordinary tensor).
  std::map<std::string, at::Tensor> tensors;
  at::Tensor sample_ids;  ///< int64 [B]: table row of each sample
  uint64_t epoch = 0;
  uint64_t index = 0;  ///< batch index within this rank's epoch

  /// The tensor of `column`; throws InvalidArgument naming it when absent.
  const at::Tensor& at(const std::string& column) const;
  /// Sample i's bytes of a raw-bytes column (LoaderOptions::raw_bytes), a view into the batch's tensors. Throws
  /// InvalidArgument naming the column when it is absent or not raw bytes (or a list of them), or i is out of range.
  std::string_view bytes(const std::string& column, int64_t i) const;
  /// Every sample's bytes of a raw-bytes column, copied into strings (the checks of bytes()).
  std::vector<std::string> strings(const std::string& column) const;
  /// Sample i's elements of a raw-bytes list column (a list of binary values in LoaderOptions::raw_bytes), views
  /// into the batch's tensors; a null list is empty. Throws InvalidArgument naming the column when it is absent or
  /// not such a column, or i is out of range. Finds the row's first element by summing the lengths before it:
  /// to walk every sample, take list_bytes(column) once.
  std::vector<std::string_view> list_bytes(const std::string& column, int64_t i) const;
  /// Every sample's elements of a raw-bytes list column, in one pass (the checks of list_bytes(column, i)).
  std::vector<std::vector<std::string_view>> list_bytes(const std::string& column) const;
  int64_t size() const { return sample_ids.defined() ? sample_ids.size(0) : 0; }
};

/// A user transform applied to every batch on the decoding threads (after collation, before the device copy).
using BatchTransform = std::function<void(Batch&)>;

struct LoaderOptions {
  int64_t batch_size = 32;
  /// This process's place among the ranks (from lakerun::dist, torchrun's RANK / WORLD_SIZE, ...). Unset (the
  /// default): the place a lakerun::train::Trainer gives the loader before its first batch (Loader::AdoptRank), so
  /// under a Trainer of N ranks each rank reads its own 1/N of the samples; a loader no Trainer runs reads them all
  /// (rank 0 of 1). Set both, or neither; world_size = 1 set explicitly reads every sample on every rank.
  std::optional<int64_t> rank{};
  std::optional<int64_t> world_size{};
  RemainderPolicy remainder = RemainderPolicy::kPad;
  /// Drop each rank's last partial batch (the same on every rank, so batch counts stay equal).
  bool drop_last = false;
  uint64_t seed = 0;
  ShuffleOptions shuffle;
  /// Decoding threads (0: decode on the calling thread inside Next()).
  size_t num_threads = 2;
  /// Batches decoded ahead of the consumer (the prefetch queue's capacity). At least 1.
  size_t prefetch_batches = 4;
  /// Small batches are decoded further ahead: up to prefetch_bytes of them (sized from the batches already
  /// returned), at most 64, and never fewer than prefetch_batches. A batch of 100 Fashion-MNIST images is 78 KB, so
  /// four of them are ~80 us of collation: less than a wake-up of the consumer can take on a busy machine, and the
  /// decoding threads would idle. 0: exactly prefetch_batches. Not raised with num_threads = 0 (nothing to
  /// overlap), nor when several threads decode a table larger than cache_bytes (row groups decoded early for queued
  /// batches would push out ones still needed).
  size_t prefetch_bytes = size_t{16} << 20;
  /// Decoded row groups kept for reuse. Memory ceiling ~ cache_bytes + max(prefetch_bytes, (prefetch_batches +
  /// num_threads) x batch bytes) + (prefetch_batches + num_threads) x (the row groups one batch touches), plus up to
  /// max(prefetch_bytes, 4 MiB) of returned batch tensors kept for the next batches (docs/data.md).
  size_t cache_bytes = size_t{256} << 20;
  /// When cache_bytes cannot hold the units (row groups) one shuffle window reads, read the source in slices of its
  /// units instead (RowSource::WithUnitBytes, TableOptions::unit_bytes; an Info log line says so), so that every
  /// batch does not decode whole row groups again. Sources that cannot be sliced (list columns) keep their units and
  /// get a warning. false keeps the source's units in any case.
  bool fit_units_to_cache = true;
  /// Bound on every wait (a batch, another thread's read of a row group).
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  /// Binary columns to decode as JPEG/PNG images, by column name. Other binary columns are an error.
  std::map<std::string, ImageOptions> images;
  /// Binary columns handed over undecoded, for user transforms: "<column>" is uint8 [total bytes of the batch],
  /// "<column>.offsets" int64 [B + 1] (sample i is bytes [offsets[i], offsets[i+1]); Batch::bytes reads it).
  /// Lists of binary values (array<string>, a map's keys "m.key") must be named here too: "<column>" holds the
  /// bytes of the batch's E elements, "<column>.offsets" int64 [E + 1] their byte offsets and "<column>.lengths"
  /// int64 [B] the elements of each row (Batch::list_bytes reads row i's; nulls: column_policy.h).
  std::vector<std::string> raw_bytes;
  /// What a null becomes, by column (column_policy.h). A null in a column without a policy is an InvalidArgument
  /// naming the column, the file, row group and table row.
  std::map<std::string, NullPolicy> nulls;
  /// Variable-length list columns, padded to [B, L] with "<column>.lengths" (column_policy.h). Without a policy a
  /// list column must hold lists of its fixed length: another length is an InvalidArgument naming the column, the
  /// row and both lengths.
  std::map<std::string, ListPolicy> lists;
  std::vector<BatchTransform> transforms;
  /// Where batches end up. CUDA: collated into pinned memory and copied with non_blocking = true.
  c10::Device device = c10::Device(c10::kCPU);
};

class UnitLookahead;  // unit_lookahead.h

/// Movable: a moved-from Loader may only be destroyed or assigned to. Not thread-safe: one consumer thread.
class Loader {
 public:
  /// Plans epoch 0. Throws ConfigError naming the option (and the rank) for bad options, InvalidArgument for a null
  /// source or options naming columns the source lacks.
  Loader(std::shared_ptr<const RowSource> source, LoaderOptions options);
  ~Loader();
  Loader(Loader&&) noexcept;
  /// Stops the decoding of the loader assigned to (its queued batches are dropped) before taking `other`'s place.
  Loader& operator=(Loader&&) noexcept;
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  /// This loader's place among the ranks: LoaderOptions' when given, else the one AdoptRank() took, else 0 of 1.
  int64_t rank() const { return *options_.rank; }
  int64_t world_size() const { return *options_.world_size; }
  /// Whether LoaderOptions gave rank and world_size (AdoptRank() then leaves them).
  bool rank_given() const { return rank_given_; }
  /// Takes `rank` of `world_size` when LoaderOptions left them unset, and plans the current epoch again from its
  /// start (in-flight batches are dropped); what a Trainer of several ranks does before its loops. Returns false and
  /// changes nothing when LoaderOptions gave them. Throws ConfigError for a rank outside [0, world_size).
  bool AdoptRank(int64_t rank, int64_t world_size);

  /// Starts `epoch` from its beginning, discarding prefetched batches.
  void SetEpoch(uint64_t epoch);
  uint64_t epoch() const { return state_.epoch; }

  /// The next batch of this rank's epoch; std::nullopt at its end. Rethrows a decoding error with the rank, the
  /// batch and the file prefixed; throws IoError when a batch is not ready within `timeout`.
  std::optional<Batch> Next();

  /// Samples and batches this rank yields in the current epoch (the same on every rank).
  uint64_t samples_per_epoch() const;
  uint64_t batches_per_epoch() const;
  uint64_t num_rows() const { return num_rows_; }
  /// The source batches are read from: the one given, or its slices (LoaderOptions::fit_units_to_cache).
  const RowSource& source() const;
  /// Batches kept in flight now (LoaderOptions::prefetch_batches, raised for small batches by prefetch_bytes).
  size_t prefetch_window() const { return window_; }

  /// The position after the last batch Next() returned.
  LoaderState state_dict() const { return state_; }
  /// Continues from a saved position (also saved under another world size: elastic resume). Throws InvalidArgument
  /// when the state belongs to another table or seed.
  void load_state_dict(const LoaderState& state);

 private:
  struct Shared;       // source, cache and collation settings, shared with the decoding tasks
  class Prefetcher;    // the owned pool and the bounded queue of batches in flight
  void StartPlan(uint64_t epoch, ResumePoint from, uint64_t skip);
  void TopUp();
  void SizeWindow(const Batch& batch);  // sets window_ from a returned batch's bytes
  std::string RankPrefix() const;

  LoaderOptions options_;  // rank and world_size always set (resolved by the constructor or AdoptRank)
  bool rank_given_ = false;
  uint64_t num_rows_ = 0;
  LoaderState state_;
  std::unique_ptr<EpochPlan> plan_;
  uint64_t sample_end_ = 0;   // samples of the plan that go into batches (drop_last trims the tail)
  uint64_t next_submit_ = 0;  // next sample of the plan to hand to a decoding task
  uint64_t next_batch_ = 0;   // batch index (within the epoch) of the next task
  size_t window_ = 0;         // batches in flight at most (prefetch_window())
  std::unordered_map<size_t, uint64_t> unit_prefetched_;  // unit -> batch index that asked for its decode
  // Decoding units ahead: when the whole table fits in the cache (so decoding ahead never evicts a unit still needed)
  // and several threads decode, units are decoded in order of first need, lookahead_samples_ ahead of the batches.
  bool decode_ahead_ = false;
  uint64_t lookahead_samples_ = 0;
  std::unique_ptr<UnitLookahead> lookahead_;
  std::exception_ptr failure_;  // a failed Next(), rethrown until the next SetEpoch / load_state_dict
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<Prefetcher> prefetcher_;  // declared last: destroyed (joined) first
};

}  // namespace lakerun::data
