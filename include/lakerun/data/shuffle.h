// The global sample order of one epoch: a pure function of (number of samples, seed, epoch, shuffle options).
//
// The order never depends on the number of ranks, threads, files or row groups, so every rank computes the same
// order on its own and a run resumes from a few integers. Randomness comes from a counter-based hash
// (SplitMix64 finaliser over (seed, epoch, stream, index)), identical on every machine and standard library.
//
// Block/window shuffle, which keeps reads sequential enough to be fast:
//   1. samples are cut into blocks of `block_size` consecutive samples (the last block may be short);
//   2. the order of the blocks is shuffled (Fisher-Yates);
//   3. the shuffled block sequence is cut into windows of `window_blocks` blocks, and the samples inside each window
//      are shuffled.
// A window therefore draws from `window_blocks` regions of the table; a reader touching one window reads at most
// `window_blocks` (+1 per region straddling a row group) row-group-sized regions.
#pragma once

#include <cstdint>
#include <vector>

namespace lakerun::data {

/// Mixes a 64-bit value (SplitMix64's finaliser): a bijection with strong avalanche.
uint64_t Mix64(uint64_t x);
/// Counter-based random value for (seed, epoch, stream, index).
uint64_t CounterRandom(uint64_t seed, uint64_t epoch, uint64_t stream, uint64_t index);
/// Maps a random 64-bit value onto [0, n) (multiply-shift; n > 0). Deterministic everywhere.
uint64_t Bounded(uint64_t random, uint64_t n);

struct ShuffleOptions {
  bool enabled = true;
  /// Consecutive samples that stay together as one block (the unit of the block shuffle). Must be > 0.
  uint64_t block_size = 1024;
  /// Blocks whose samples are mixed with each other. Must be > 0. block_size * window_blocks samples are shuffled
  /// together; larger means more randomness and more distinct regions read at once.
  uint64_t window_blocks = 8;
};

/// The order of samples [0, num_samples) in one epoch. Thread-compatible: At() caches the current window, so give
/// each thread its own copy (copies are cheap: O(num_samples / block_size) integers).
class GlobalOrder {
 public:
  GlobalOrder(uint64_t num_samples, uint64_t seed, uint64_t epoch, ShuffleOptions options = {});

  uint64_t size() const { return num_samples_; }
  /// The sample at position `pos` (< size()) of the epoch's order. Sequential calls are O(1) amortised.
  uint64_t At(uint64_t pos) const;
  /// The whole order (size() entries); for tests and small tables.
  std::vector<uint64_t> Materialize() const;

 private:
  void LoadWindow(uint64_t window) const;

  uint64_t num_samples_;
  uint64_t seed_;
  uint64_t epoch_;
  ShuffleOptions options_;
  std::vector<uint64_t> block_order_;    // shuffled block ids
  std::vector<uint64_t> window_starts_;  // first position of each window, plus size() at the end
  mutable uint64_t cached_window_ = UINT64_MAX;
  mutable std::vector<uint64_t> window_samples_;
};

}  // namespace lakerun::data
