#include "lakerun/base/choices.h"

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun {
namespace {

enum class Fruit { kApple, kPear, kQuince };
constexpr NamedValue<Fruit> kFruitNames[] = {
    {Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}, {Fruit::kQuince, "quince"}, {Fruit::kApple, "malus"}};

TEST(ChoicesTest, NameOfIsTheFirstEntry) {
  EXPECT_STREQ(NameOf(Fruit::kApple, kFruitNames), "apple");
  EXPECT_STREQ(NameOf(Fruit::kQuince, kFruitNames), "quince");
  EXPECT_STREQ(NameOf(static_cast<Fruit>(7), kFruitNames), "?");
}

TEST(ChoicesTest, ParseAcceptsNamesAndAliases) {
  EXPECT_EQ(ParseNamed("fruit", "pear", kFruitNames), Fruit::kPear);
  EXPECT_EQ(ParseNamed("fruit", "malus", kFruitNames), Fruit::kApple);
}

TEST(ChoicesTest, ParseErrorListsTheChoicesAndTheNearest) {
  EXPECT_THROW_WITH(ParseNamed("--fruit", "quinse", kFruitNames), ConfigError,
                    "--fruit: 'quinse' is not one of apple, pear, quince (did you mean 'quince'?)");
  try {
    ParseNamed("--fruit", "banana", kFruitNames);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("did you mean")));
    EXPECT_THAT(e.what(), ::testing::Not(::testing::HasSubstr("malus")));  // aliases are not advertised
  }
}

TEST(ChoicesTest, NearestNameFindsLikelyMisspellings) {
  const std::vector<std::string> flags = {"--nproc-per-node", "--max-restarts", "--log-dir"};
  EXPECT_EQ(NearestName("--nproc_pr_node", flags), "--nproc-per-node");
  EXPECT_EQ(NearestName("--LOG-DIR", flags), "--log-dir");
  EXPECT_EQ(NearestName("--epochs", flags), std::nullopt);
  EXPECT_EQ(NearestName("", flags), std::nullopt);
}

}  // namespace
}  // namespace lakerun
