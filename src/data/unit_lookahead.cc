#include "unit_lookahead.h"

#include <algorithm>

namespace lakerun::data {

UnitLookahead::UnitLookahead(const EpochPlan& plan, const UnitIndex& units, uint64_t begin, uint64_t end)
    : plan_(plan), units_(units), end_(std::min(end, plan.size())), next_(begin), returned_(units.num_units(), false) {}

std::vector<size_t> UnitLookahead::Advance(uint64_t limit) {
  std::vector<size_t> units;
  const size_t num_units = returned_.size();
  limit = std::min(limit, end_);
  const std::vector<uint64_t>& starts = units_.starts();
  for (; next_ < limit && returned_count_ < num_units; ++next_) {
    const uint64_t row = plan_.SampleAt(next_);
    size_t unit = last_unit_;
    if (row < starts[unit] || row >= starts[unit + 1]) {
      unit = units_.Find(row);
      last_unit_ = unit;
    }
    if (returned_[unit]) continue;
    returned_[unit] = true;
    ++returned_count_;
    units.push_back(unit);
  }
  return units;
}

}  // namespace lakerun::data
