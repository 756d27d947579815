// Which samples one rank yields in one epoch, in which order: sample-level assignment on top of GlobalOrder.
//
// Assignment (never by row group, so any row-group layout works, including 1 row group on 8 ranks):
//   - the epoch's global order has N positions; each rank gets P = ceil(N / W) (RemainderPolicy::kPad) or
//     floor(N / W) (RemainderPolicy::kDrop) samples, so every rank yields the same number of samples and batches;
//   - rank r takes the contiguous run of positions [r * P, (r + 1) * P) of the (padded) order, which keeps each
//     rank's reads to about 1/W of the table;
//   - with kPad, positions p >= N repeat the sample at position p mod N (the epoch's first samples); with kDrop
//     the last N mod W positions are skipped this epoch (a different set each epoch, since the order changes).
//
// Resume: the plan can start from a ResumePoint taken under another (or the same) world size. The positions the
// old ranks had not yet yielded are concatenated in old-rank order and re-split over the new ranks with the same
// policy, so after a resume the ranks together yield exactly the samples that were not yet yielded (plus repeats
// when padding is needed).
#pragma once

#include <cstdint>
#include <vector>

#include "lakerun/data/shuffle.h"

namespace lakerun::data {

enum class RemainderPolicy {
  kPad,   ///< repeat samples so every rank gets ceil(N / W): nothing is skipped (the default, for training)
  kDrop,  ///< skip the last N mod W positions so every rank gets floor(N / W): nothing is repeated
};

const char* ToString(RemainderPolicy policy);

/// Samples per rank for `num_samples` over `world_size` ranks.
uint64_t SamplesPerRank(uint64_t num_samples, uint64_t world_size, RemainderPolicy policy);

/// Where an interrupted epoch stopped: `world_size` ranks had each yielded `samples_yielded` samples of a plan that
/// started fresh (ResumePoint{world_size, 0} is a fresh epoch).
struct ResumePoint {
  uint64_t world_size = 1;
  uint64_t samples_yielded = 0;
};

class EpochPlan {
 public:
  /// `from.world_size` ranks had each yielded `from.samples_yielded` samples of this epoch; this plan covers the rest
  /// for `rank` of `world_size`. Throws InvalidArgument for rank >= world_size, a zero world size, or a resume point
  /// past the end of the epoch.
  EpochPlan(uint64_t num_samples, uint64_t world_size, uint64_t rank, RemainderPolicy policy, uint64_t seed,
            uint64_t epoch, ShuffleOptions shuffle = {}, ResumePoint from = {0, 0});

  /// Samples this rank yields under this plan (the same on every rank).
  uint64_t size() const { return per_rank_; }
  /// Table row (sample index in [0, N)) of this rank's i-th sample, i < size().
  uint64_t SampleAt(uint64_t i) const;
  /// Appends SampleAt(i) for i in [begin, end) to `out`: the same rows, stepping through the positions instead of
  /// dividing for each (a loader plans every batch this way, on the thread that calls Next()).
  void AppendSamples(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) const;
  /// Position in the padded global order of this rank's i-th sample (for tests and diagnostics).
  uint64_t PositionAt(uint64_t i) const;

  uint64_t num_samples() const { return num_samples_; }
  const ResumePoint& from() const { return from_; }

 private:
  uint64_t num_samples_;
  uint64_t rank_;
  ResumePoint from_;
  uint64_t origin_per_rank_ = 0;  // P under the origin world size
  uint64_t remaining_per_origin_rank_ = 0;
  uint64_t remaining_ = 0;  // positions not yet yielded, over all origin ranks
  uint64_t per_rank_ = 0;
  GlobalOrder order_;
};

}  // namespace lakerun::data

#include "lakerun/data/loader_state.h"

namespace lakerun::data {

/// How to continue a saved position on `world_size` ranks: the plan's resume point and how many of the new plan's
/// samples this rank has already yielded.
struct Continuation {
  ResumePoint from;
  uint64_t skip = 0;
};
/// Same world size: continues exactly where each rank stopped. Another world size: the not-yet-yielded samples of
/// all old ranks are re-split over the new ranks (elastic resume). Throws NotImplemented when the world size changes
/// a second time inside one epoch after samples were yielded under the first change.
Continuation ContinueFrom(const LoaderState& saved, uint64_t world_size);

}  // namespace lakerun::data
