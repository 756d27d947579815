#include "unit_index.h"

#include <algorithm>

#include "lakerun/base/error.h"

namespace lakerun::data {

UnitIndex::UnitIndex(std::vector<uint64_t> starts) : starts_(std::move(starts)) {
  LAKERUN_CHECK(!starts_.empty() && starts_.front() == 0, "unit starts must begin at row 0");
  LAKERUN_CHECK(std::is_sorted(starts_.begin(), starts_.end()), "unit starts must not decrease");
  LAKERUN_CHECK(starts_.size() - 1 < UINT32_MAX, "too many units: ", starts_.size() - 1);
  const uint64_t rows = starts_.back();
  const uint64_t units = starts_.size() - 1;
  // About two buckets per unit, at most 2^22 buckets (16 MB of index).
  const uint64_t target = std::min<uint64_t>(std::max<uint64_t>(1, 2 * units), uint64_t{1} << 22);
  while ((rows >> shift_) > target) ++shift_;
  const uint64_t buckets = (rows >> shift_) + 1;
  first_unit_.resize(buckets + 1);
  size_t unit = 0;
  for (uint64_t b = 0; b <= buckets; ++b) {
    const uint64_t row = b << shift_;
    // The unit holding the bucket's first row (for rows past the end: the last unit).
    while (unit + 1 < units && starts_[unit + 1] <= row) ++unit;
    first_unit_[b] = static_cast<uint32_t>(unit);
  }
}

size_t UnitIndex::Find(uint64_t row) const {
  const uint64_t bucket = row >> shift_;
  const size_t first = first_unit_[bucket];
  const size_t last = first_unit_[bucket + 1];  // the unit holding the next bucket's first row
  // The common case: the bucket's rows lie in `first` or the unit after it. Answered without a data-dependent branch
  // (shuffled rows would mispredict it half the time); starts_[first + 1] exists since first < num_units().
  if (last - first <= 1) return first + static_cast<size_t>(row >= starts_[first + 1]);
  const auto begin = starts_.begin() + static_cast<std::ptrdiff_t>(first);
  const auto end = starts_.begin() + static_cast<std::ptrdiff_t>(last) + 1;
  return static_cast<size_t>(std::upper_bound(begin, end, row) - starts_.begin()) - 1;
}

}  // namespace lakerun::data
