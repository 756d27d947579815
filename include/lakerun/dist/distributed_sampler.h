// Which samples of an in-memory dataset each rank visits in an epoch; the same order as PyTorch's
// torch.utils.data.DistributedSampler for the same (size, rank, world, seed, epoch, shuffle, drop_last):
//
//   order   = shuffle ? randperm(size, generator seeded with seed + epoch) : 0..size-1
//   padded  = drop_last ? order[:size rounded down to a multiple of world]
//                       : order repeated from its start up to size rounded up to a multiple of world
//   indices = padded[rank::world]
//
// Every rank gets the same number of indices, so no rank waits in a collective for a peer that ran out of data.
#pragma once

#include <cstdint>
#include <vector>

namespace lakerun::dist {

struct SamplerOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  /// Drop the tail that does not divide evenly instead of padding with repeated samples.
  bool drop_last = false;
};

class DistributedSampler {
 public:
  /// Throws InvalidArgument unless 0 <= rank < world_size and dataset_size >= 0.
  DistributedSampler(int64_t dataset_size, int rank, int world_size, SamplerOptions options = {});

  /// The order is a pure function of (seed, epoch): call before each epoch.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  /// This rank's indices for the current epoch (num_samples() of them).
  std::vector<int64_t> indices() const;
  /// Indices per rank.
  int64_t num_samples() const { return num_samples_; }
  /// num_samples() * world_size.
  int64_t total_size() const { return num_samples_ * world_size_; }
  /// Samples repeated to pad the epoch (0 with drop_last); negative never.
  int64_t num_padding() const;
  /// Samples left out of every epoch by drop_last (0 without it).
  int64_t num_dropped() const;

 private:
  int64_t dataset_size_;
  int rank_;
  int world_size_;
  SamplerOptions options_;
  int64_t num_samples_;
  int64_t epoch_ = 0;
};

}  // namespace lakerun::dist
