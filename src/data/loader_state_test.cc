#include "lakerun/data/loader_state.h"

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

TEST(LoaderStateTest, RoundTripsThroughAMapIncludingFullWidthSeeds) {
  LoaderState state{3, 0xfedcba9876543210ULL, 60000, 8, 5, 1200, 4, 77};
  const auto map = state.ToMap();
  EXPECT_EQ(map.size(), 8u);
  EXPECT_EQ(map.at("samples_yielded"), 1200);
  EXPECT_EQ(LoaderState::FromMap(map), state);
}

TEST(LoaderStateTest, MissingOrNegativeKeysAreErrors) {
  auto map = LoaderState{}.ToMap();
  map.erase("epoch");
  EXPECT_THROW_WITH(LoaderState::FromMap(map), InvalidArgument, "'epoch'");
  map = LoaderState{}.ToMap();
  map["rank"] = -1;
  EXPECT_THROW_WITH(LoaderState::FromMap(map), InvalidArgument, "'rank'", "-1");
}

}  // namespace
}  // namespace lakerun::data
