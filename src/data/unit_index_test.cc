#include "unit_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lakerun/base/error.h"

namespace lakerun::data {
namespace {

size_t Brute(const std::vector<uint64_t>& starts, uint64_t row) {
  return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), row) - starts.begin()) - 1;
}

void ExpectEveryRowFound(const std::vector<uint64_t>& starts) {
  const UnitIndex index(starts);
  ASSERT_EQ(index.num_rows(), starts.back());
  for (uint64_t row = 0; row < starts.back(); ++row) {
    ASSERT_EQ(index.Find(row), Brute(starts, row)) << "row " << row << " of " << starts.back() << " in "
                                                   << starts.size() - 1 << " units";
  }
}

TEST(UnitIndexTest, FindsTheUnitOfEveryRowWhateverTheLayout) {
  ExpectEveryRowFound({0, 1});
  ExpectEveryRowFound({0, 60000});
  ExpectEveryRowFound({0, 10000, 20000, 30000, 40000, 50000, 60000});  // Fashion-MNIST's row groups
  ExpectEveryRowFound({0, 0, 0, 3, 3, 7, 7, 7, 8});                    // empty units anywhere, also first
  ExpectEveryRowFound({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});             // one row each
  ExpectEveryRowFound({0, 100000, 100001, 100002, 100003, 100010});    // one large unit, then tiny ones
  ExpectEveryRowFound({0, 3, 4, 5, 6, 7, 200000});                     // tiny units, then a large one
  uint64_t x = 12345;
  for (int layout = 0; layout < 50; ++layout) {
    std::vector<uint64_t> starts{0};
    const int units = 1 + layout % 17;
    for (int u = 0; u < units; ++u) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const uint64_t rows = (x >> 33) % (layout % 3 == 0 ? 3 : 5000);  // some layouts full of empty units
      starts.push_back(starts.back() + rows);
    }
    if (starts.back() == 0) starts.back() = 1;
    ExpectEveryRowFound(starts);
  }
}

TEST(UnitIndexTest, RejectsStartsThatAreNotALayout) {
  EXPECT_THROW(UnitIndex(std::vector<uint64_t>{}), Error);
  EXPECT_THROW(UnitIndex({1, 5}), Error);
  EXPECT_THROW(UnitIndex({0, 5, 4}), Error);
}

}  // namespace
}  // namespace lakerun::data
