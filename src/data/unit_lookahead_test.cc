#include "unit_lookahead.h"

#include <algorithm>
#include <vector>

#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

// The units of plan positions [begin, limit) in order of first need, computed the obvious way.
std::vector<size_t> FirstNeeds(const EpochPlan& plan, const std::vector<uint64_t>& starts, uint64_t begin,
                               uint64_t limit, std::vector<bool>* seen) {
  std::vector<size_t> out;
  for (uint64_t i = begin; i < limit; ++i) {
    const uint64_t row = plan.SampleAt(i);
    size_t unit = 0;
    while (row >= starts[unit + 1]) ++unit;
    if ((*seen)[unit]) continue;
    (*seen)[unit] = true;
    out.push_back(unit);
  }
  return out;
}

TEST(UnitLookaheadTest, ReturnsEachUnitOnceInOrderOfFirstNeed) {
  const std::vector<uint64_t> starts = {0, 100, 250, 251, 600, 1000};  // units of 100, 150, 1, 349, 400 rows
  for (uint64_t world : {1, 3}) {
    for (bool shuffle : {true, false}) {
      ShuffleOptions options;
      options.enabled = shuffle;
      options.block_size = 64;
      options.window_blocks = 3;
      const EpochPlan plan(1000, world, world - 1, RemainderPolicy::kPad, 11, 2, options);
      for (uint64_t begin : {uint64_t{0}, uint64_t{37}}) {
        const UnitIndex index(starts);
        UnitLookahead lookahead(plan, index, begin, plan.size());
        std::vector<bool> seen(starts.size() - 1, false);
        std::vector<size_t> got;
        for (uint64_t limit = begin; limit <= plan.size() + 50; limit += 29) {  // past the end is capped
          const std::vector<size_t> step = lookahead.Advance(limit);
          const uint64_t scanned_to = std::min<uint64_t>(limit, plan.size());
          const uint64_t from = limit == begin ? begin : std::max<uint64_t>(begin, limit - 29);
          EXPECT_EQ(step, FirstNeeds(plan, starts, std::min(from, scanned_to), scanned_to, &seen))
              << "world " << world << " shuffle " << shuffle << " begin " << begin << " limit " << limit;
          got.insert(got.end(), step.begin(), step.end());
        }
        std::vector<size_t> sorted = got;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) << "a unit came twice";
        if (world == 1 && begin == 0) {
          EXPECT_EQ(got.size(), starts.size() - 1);  // every row is needed once
        }
      }
    }
  }
}

TEST(UnitLookaheadTest, EmptySourceAndEmptyRangeReturnNothing) {
  const EpochPlan plan(0, 1, 0, RemainderPolicy::kPad, 1, 0);
  const std::vector<uint64_t> none = {0};
  const UnitIndex none_index(none);
  UnitLookahead empty(plan, none_index, 0, plan.size());
  EXPECT_TRUE(empty.Advance(100).empty());
  const EpochPlan some(10, 1, 0, RemainderPolicy::kPad, 1, 0);
  const std::vector<uint64_t> two = {0, 5, 10};
  const UnitIndex two_index(two);
  UnitLookahead nothing(some, two_index, 4, 4);
  EXPECT_TRUE(nothing.Advance(10).empty());
}

}  // namespace
}  // namespace lakerun::data
