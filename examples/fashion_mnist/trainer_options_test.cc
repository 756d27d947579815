#include "trainer_options.h"

#include <gtest/gtest.h>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::examples {
namespace {

TrainerExampleOptions Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fashion_mnist");
  return ParseTrainerExampleOptions(static_cast<int>(args.size()), args.data());
}

TEST(TrainerExampleOptionsTest, DefaultsAreTheSeedSettings) {
  const TrainerExampleOptions o = Parse({});
  EXPECT_EQ(o.batch_size, 100);
  EXPECT_DOUBLE_EQ(o.min_delta, 0.01);
  EXPECT_EQ(o.patience, 10);
  ASSERT_TRUE(o.stopping_threshold.has_value());
  EXPECT_DOUBLE_EQ(*o.stopping_threshold, 0.55);
  EXPECT_EQ(o.table, "data/fashion-mnist");
  EXPECT_FALSE(o.resume);
  EXPECT_EQ(o.strategy, train::Strategy::kDdp);
}

TEST(TrainerExampleOptionsTest, ParsesBothFlagForms) {
  const TrainerExampleOptions o = Parse({"--epochs", "30", "--lr=0.1", "--stopping-threshold", "none", "--resume",
                                         "--table", "/t", "--checkpoint-dir=/c", "--limit-train-batches", "3",
                                         "--no-tracking", "--threads", "2", "--strategy", "zero2"});
  EXPECT_EQ(o.epochs, 30);
  EXPECT_DOUBLE_EQ(o.lr, 0.1);
  EXPECT_FALSE(o.stopping_threshold.has_value());
  EXPECT_TRUE(o.resume);
  EXPECT_EQ(o.table, "/t");
  EXPECT_EQ(o.checkpoint_dir, "/c");
  EXPECT_EQ(o.limit_train_batches, 3);
  EXPECT_FALSE(o.tracking);
  EXPECT_EQ(o.threads, 2);
  EXPECT_EQ(o.strategy, train::Strategy::kZero2);
}

TEST(TrainerExampleOptionsTest, BadFlagsNameTheFlag) {
  EXPECT_THROW_WITH(Parse({"--batch-size", "0"}), ConfigError, "flag --batch-size: expected at least 1, got 0");
  EXPECT_THROW_WITH(Parse({"--lr", "fast"}), ConfigError, "flag --lr: expected a number, got 'fast'");
  EXPECT_THROW_WITH(Parse({"--epochs"}), ConfigError, "flag --epochs needs a value");
  EXPECT_THROW_WITH(Parse({"--bogus"}), ConfigError, "unknown flag '--bogus'");
  EXPECT_THROW_WITH(Parse({"--table="}), ConfigError, "flag --table");
  EXPECT_THROW_WITH(Parse({"--strategy", "fsdp2"}), ConfigError,
                    "flag --strategy: 'fsdp2' is not one of ddp, zero1, zero2, fsdp");
}

}  // namespace
}  // namespace lakerun::examples
