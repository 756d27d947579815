#include "options.h"

#include <vector>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::examples {
namespace {

ExampleOptions Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fashion_mnist");
  return ParseOptions(static_cast<int>(args.size()), args.data());
}

TEST(ExampleOptionsTest, DefaultsArePyTorchsMnistExample) {
  const ExampleOptions o = Parse({});
  EXPECT_EQ(o.epochs, 3);
  EXPECT_DOUBLE_EQ(o.lr, 0.001);
  EXPECT_DOUBLE_EQ(o.momentum, 0.5);
  EXPECT_EQ(o.batch_size, 100);
  EXPECT_EQ(o.seed, 1u);
  EXPECT_EQ(o.sampler_seed, 0u);
  EXPECT_TRUE(o.dropout);
  EXPECT_EQ(o.scale_lr, dist::LrScaling::kNone);
  EXPECT_TRUE(o.shared_memory_gradients);
}

TEST(ExampleOptionsTest, ParsesBothFlagForms) {
  const ExampleOptions o = Parse({"--epochs", "5", "--lr=0.01", "--batch-size", "64", "--max-steps=20",
                                  "--checkpoint-dir", "/tmp/ck", "--resume", "--no-dropout", "--scale-lr",
                                  "--threads", "2", "--data-dir=/d"});
  EXPECT_EQ(o.epochs, 5);
  EXPECT_DOUBLE_EQ(o.lr, 0.01);
  EXPECT_EQ(o.batch_size, 64);
  EXPECT_EQ(o.max_steps, 20);
  EXPECT_EQ(o.checkpoint_dir, "/tmp/ck");
  EXPECT_TRUE(o.resume);
  EXPECT_FALSE(o.dropout);
  EXPECT_EQ(o.scale_lr, dist::LrScaling::kLinear);
  EXPECT_EQ(o.threads, 2);
  EXPECT_EQ(o.data_dir, "/d");
  EXPECT_EQ(Parse({"--scale-lr=sqrt"}).scale_lr, dist::LrScaling::kSqrt);
  EXPECT_FALSE(Parse({"--gradients-via-gloo"}).shared_memory_gradients);
}

TEST(ExampleOptionsTest, BadFlagsNameTheFlagAndValue) {
  EXPECT_THROW_WITH(Parse({"--epocs", "3"}), ConfigError, "unknown flag '--epocs'");
  EXPECT_THROW_WITH(Parse({"--batch-size", "0"}), ConfigError, "--batch-size", "at least 1", "got 0");
  EXPECT_THROW_WITH(Parse({"--lr", "fast"}), ConfigError, "--lr", "'fast'");
  EXPECT_THROW_WITH(Parse({"--lr", "-1"}), ConfigError, "--lr", "more than 0");
  EXPECT_THROW_WITH(Parse({"--epochs"}), ConfigError, "--epochs needs a value");
  EXPECT_THROW_WITH(Parse({"--resume"}), ConfigError, "--resume needs --checkpoint-dir");
  EXPECT_THROW_WITH(Parse({"--scale-lr=cubic"}), ConfigError, "--scale-lr", "'cubic'");
  EXPECT_THROW_WITH(Parse({"--target-accuracy", "1.5"}), ConfigError, "--target-accuracy");
}

}  // namespace
}  // namespace lakerun::examples
