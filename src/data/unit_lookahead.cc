#include "unit_lookahead.h"

#include <algorithm>

namespace lakerun::data {

UnitLookahead::UnitLookahead(const EpochPlan& plan, const std::vector<uint64_t>& unit_starts, uint64_t begin,
                             uint64_t end)
    : plan_(plan), unit_starts_(unit_starts), end_(std::min(end, plan.size())), next_(begin),
      returned_(unit_starts.empty() ? 0 : unit_starts.size() - 1, false) {}

std::vector<size_t> UnitLookahead::Advance(uint64_t limit) {
  std::vector<size_t> units;
  const size_t num_units = returned_.size();
  limit = std::min(limit, end_);
  for (; next_ < limit && returned_count_ < num_units; ++next_) {
    const uint64_t row = plan_.SampleAt(next_);
    size_t unit = last_unit_;
    if (row < unit_starts_[unit] || row >= unit_starts_[unit + 1]) {
      unit = static_cast<size_t>(std::upper_bound(unit_starts_.begin(), unit_starts_.end(), row) -
                                 unit_starts_.begin()) - 1;
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
