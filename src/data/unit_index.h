// Which I/O unit holds a table row, in constant time for the usual layouts. Torch-free, internal.
//
// Rows are cut into buckets of 2^shift rows, about two per unit; each bucket remembers the units that overlap it, so
// a lookup binary-searches only those (usually one or two) instead of every unit's start. A shuffled batch looks up
// every sample, each in another unit than the last, so this is on the collation's hot path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lakerun::data {

class UnitIndex {
 public:
  UnitIndex() = default;
  /// `starts`: the first row of every unit plus the row count at the end (non-decreasing; empty units allowed).
  explicit UnitIndex(std::vector<uint64_t> starts);

  /// The unit holding `row` (< num_rows()): the last unit u with starts[u] <= row < starts[u + 1].
  size_t Find(uint64_t row) const;

  const std::vector<uint64_t>& starts() const { return starts_; }
  size_t num_units() const { return starts_.empty() ? 0 : starts_.size() - 1; }
  uint64_t num_rows() const { return starts_.empty() ? 0 : starts_.back(); }

 private:
  std::vector<uint64_t> starts_;
  int shift_ = 0;
  std::vector<uint32_t> first_unit_;  // per bucket (plus one past the last): first unit overlapping it
};

}  // namespace lakerun::data
