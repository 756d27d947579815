// FlowersNet's shapes and configuration errors; the flag parser.
#include "model.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "options.h"

namespace lakerun::examples::flowers {
namespace {

TEST(FlowersNetTest, MapsImagesOfAnySizeToClassLogits) {
  for (int64_t channels : {1, 3}) {
    NetOptions options;
    options.in_channels = channels;
    options.num_classes = 5;
    FlowersNet net(options);
    EXPECT_EQ(net.Forward(torch::randn({4, channels, 56, 56})).sizes(), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(net.Forward(torch::randn({2, channels, 32, 40})).sizes(), (std::vector<int64_t>{2, 5}));
  }
  FlowersNet net({});
  EXPECT_THROW_WITH(net.Forward(torch::randn({2, 1, 56, 56})), InvalidArgument, "expected images [B, 3, H, W]");
}

TEST(FlowersNetTest, RejectsBadOptions) {
  NetOptions options;
  options.in_channels = 2;
  EXPECT_THROW_WITH(FlowersNet{options}, ConfigError, "in_channels must be 1 or 3, got 2");
  options.in_channels = 3;
  options.num_classes = 1;
  EXPECT_THROW_WITH(FlowersNet{options}, ConfigError, "num_classes must be at least 2, got 1");
}

TEST(FlowersFlagsTest, ParsesValuesAndNamesBadFlags) {
  const char* argv[] = {"flowers", "--batch-size", "16", "--lr=0.01", "--images", "/x", "--no-tracking", "--rebuild"};
  const FlowersOptions o = ParseFlags(8, argv);
  EXPECT_EQ(o.batch_size, 16);
  EXPECT_DOUBLE_EQ(o.lr, 0.01);
  EXPECT_EQ(o.images_dir, "/x");
  EXPECT_FALSE(o.tracking);
  EXPECT_TRUE(o.rebuild);
  EXPECT_EQ(o.stop_below, 0.55);
  const char* bad[] = {"flowers", "--batch-size", "-3"};
  EXPECT_THROW_WITH(ParseFlags(3, bad), ConfigError, "flag --batch-size: expected at least 1, got -3");
  const char* unknown[] = {"flowers", "--bogus"};
  EXPECT_THROW_WITH(ParseFlags(2, unknown), ConfigError, "unknown flag '--bogus'");
  const char* missing[] = {"flowers", "--lr"};
  EXPECT_THROW_WITH(ParseFlags(2, missing), ConfigError, "flag --lr: missing its value");
  const char* crop[] = {"flowers", "--resize", "32", "--crop", "56"};
  EXPECT_THROW_WITH(ParseFlags(5, crop), ConfigError, "flag --crop: 56 is larger than --resize 32");
}

}  // namespace
}  // namespace lakerun::examples::flowers
