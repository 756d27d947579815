// Which I/O units (row groups) an epoch will need next, in the order it first needs them, looking a fixed number of
// samples ahead of the batches handed out so far. Lets the loader decode upcoming units on every thread at once
// instead of each batch decoding, or waiting for, the units it touches. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lakerun/data/epoch_plan.h"
#include "unit_index.h"

namespace lakerun::data {

class UnitLookahead {
 public:
  /// `plan` is copied (its window cache must not be shared with the batch builder's), `units` says which unit holds
  /// each row (kept by reference: it must outlive this object); plan positions [begin, end) are scanned.
  UnitLookahead(const EpochPlan& plan, const UnitIndex& units, uint64_t begin, uint64_t end);

  /// Units first needed at plan positions below `limit` (capped at `end`) that earlier calls did not return, in the
  /// order of first need. Each unit is returned at most once; scanning stops early once every unit was returned.
  std::vector<size_t> Advance(uint64_t limit);

 private:
  EpochPlan plan_;
  const UnitIndex& units_;
  uint64_t end_;
  uint64_t next_ = 0;           // next plan position to scan
  std::vector<bool> returned_;  // per unit
  size_t returned_count_ = 0;
  size_t last_unit_ = 0;        // unit of the last scanned sample (consecutive samples often share it)
};

}  // namespace lakerun::data
