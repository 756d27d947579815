#include <lakerun/dist/lr_scaling.h>

#include <lakerun/base/error.h>

#include <cmath>
#include <limits>

#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

TEST(LrScalingTest, ScalesByRule) {
  EXPECT_DOUBLE_EQ(ScaleLearningRate(0.001, 2), 0.002);
  EXPECT_DOUBLE_EQ(ScaleLearningRate(0.001, 4, LrScaling::kSqrt), 0.002);
  EXPECT_DOUBLE_EQ(ScaleLearningRate(0.01, 8, LrScaling::kNone), 0.01);
  EXPECT_DOUBLE_EQ(ScaleLearningRate(0.01, 1), 0.01);
}

TEST(LrScalingTest, RejectsBadInput) {
  EXPECT_THROW_WITH(ScaleLearningRate(0.1, 0), InvalidArgument, "world_size", "0");
  EXPECT_THROW_WITH(ScaleLearningRate(-0.1, 2), InvalidArgument, "base_lr", "-0.1");
  EXPECT_THROW_WITH(ScaleLearningRate(std::numeric_limits<double>::quiet_NaN(), 2), InvalidArgument, "base_lr");
}

}  // namespace
}  // namespace lakerun::dist
