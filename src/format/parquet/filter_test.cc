#include "lakerun/format/filter.h"

#include "lakerun/base/error.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "lakerun_testing/matchers.h"

namespace lakerun::format {
namespace {

using parquet::Value;
using lakerun::InvalidArgument;

TEST(FilterTest, ParsesAndPrintsBack) {
  const Filter f = Filter::Parse("label < 5 AND split = 'train' or `odd col` in (1, 2.5) and not x is null");
  EXPECT_EQ(f.ToString(), "((label < 5 AND split = 'train') OR (`odd col` IN (1, 2.5) AND x IS NOT NULL))");
  EXPECT_EQ(Filter::Parse(f.ToString()), f);
  EXPECT_EQ(Filter::Parse("a.b >= -3e2").ToString(), "a.b >= -3e+02");
  EXPECT_EQ(Filter::Parse("a.b >= -3e+02").value().as_double(), -300.0);
  EXPECT_EQ(Filter::Parse("s = 'it''s'").value().as_string(), "it's");
  EXPECT_EQ(Filter::Parse("`we``ird` != true").column(), "we`ird");
  EXPECT_EQ(Filter::Parse("x not in ('a')").op(), FilterOp::kNotIn);
  EXPECT_EQ(Filter::Parse("label==1").op(), FilterOp::kEq);
  EXPECT_EQ(Filter::Parse("a <> 1").op(), FilterOp::kNe);
  EXPECT_EQ(Filter::Parse("a = 1 or b = 2").Columns(), (std::vector<std::string>{"a", "b"}));
}

TEST(FilterTest, RefusesBadTextNamingTheOffset) {
  EXPECT_THROW_WITH(Filter::Parse("label <"), InvalidArgument, "filter 'label <'", "offset 7");
  EXPECT_THROW_WITH(Filter::Parse("label ~ 3"), InvalidArgument, "expected an operator", "'label'");
  EXPECT_THROW_WITH(Filter::Parse("label = 3 extra"), InvalidArgument, "unexpected text");
  EXPECT_THROW_WITH(Filter::Parse("a = 'open"), InvalidArgument, "unterminated string");
  EXPECT_THROW_WITH(Filter::Parse("a = null"), InvalidArgument, "IS NULL");
  EXPECT_THROW_WITH(Filter::Parse("a = 99999999999999999999"), InvalidArgument, "64-bit range");
  EXPECT_THROW_WITH(Filter::Parse("(a = 1"), InvalidArgument, "expected ')'");
  EXPECT_THROW_WITH(Filter::Parse("a = abc"), InvalidArgument, "quote strings");
}

TEST(FilterTest, NotIsPushedToTheLeaves) {
  EXPECT_EQ(Filter::Parse("not (a < 1 and b in (2))").ToString(), "(a >= 1 OR b NOT IN (2))");
  EXPECT_EQ(Filter::Parse("not not a = 1").ToString(), "a = 1");
  EXPECT_EQ(Filter::Parse("not (a is null or b != 'x')").ToString(), "(a IS NOT NULL AND b = 'x')");
  EXPECT_TRUE(Filter::Not(Filter()).is_false());
  EXPECT_TRUE(Filter::And({Filter(), Filter::Not(Filter())}).is_false());
  EXPECT_TRUE(Filter::Or({Filter::Not(Filter()), Filter()}).is_true());
}

// Rows of (a: nullable int, s: nullable string) and every filter below are checked three ways: Matches on Values,
// EvaluateRows on typed vectors, and MayMatch on the statistics of every slice, which must never prune a slice
// holding a matching row.
TEST(FilterTest, RowEvaluatorsAgreeAndStatisticsNeverPruneAMatch) {
  std::mt19937 rng(7);
  const int64_t n = 400;
  std::vector<int32_t> a(n);
  std::vector<uint8_t> a_valid(n), s_valid(n);
  std::vector<std::string> s(n);
  std::vector<std::string_view> s_views(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<int32_t>(rng() % 20) - 5;
    a_valid[i] = rng() % 10 != 0;
    s[i] = std::string(1, static_cast<char>('a' + rng() % 6));
    s_valid[i] = rng() % 7 != 0;
    s_views[i] = s[i];
  }
  auto value_of = [&](int64_t i, const std::string& c) {
    if (c == "a") return a_valid[i] ? Value::Int(a[i]) : Value::Null();
    return s_valid[i] ? Value::String(s[i]) : Value::Null();
  };
  auto column = [&](const std::string& c) {
    ColumnVector v;
    if (c == "a") {
      v.type = ColumnVector::Type::kInt32;
      v.values = a.data();
      v.validity = a_valid.data();
    } else {
      v.type = ColumnVector::Type::kBytes;
      v.views = s_views.data();
      v.validity = s_valid.data();
    }
    return v;
  };
  const char* filters[] = {"a = 3", "a != 3", "a < 0", "a <= 0.5", "a > 10", "a >= 14", "a in (1, 2, 14)",
                           "a not in (1, 2)", "a is null", "s is not null", "s = 'c'", "s > 'd'",
                           "s in ('a', 'f') or a < -3", "not (a > 2 and s <= 'b')", "a > 100", "a >= -5.0"};
  for (const char* text : filters) {
    const Filter f = Filter::Parse(text);
    std::vector<uint8_t> keep(n);
    EvaluateRows(f, n, column, keep.data());
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(keep[i] != 0, Matches(f, [&](const std::string& c) { return value_of(i, c); })) << text << " row " << i;
      kept += keep[i];
    }
    // Slices of 25 rows: their statistics must admit every slice that holds a kept row.
    for (int64_t b = 0; b < n; b += 25) {
      std::map<std::string, ColumnStatistics> stats;
      for (const char* c : {"a", "s"}) {
        ColumnStatistics cs{std::nullopt, std::nullopt, 0};
        for (int64_t i = b; i < b + 25; ++i) {
          const Value v = value_of(i, c);
          if (v.is_null()) {
            ++*cs.null_count;
            continue;
          }
          if (!cs.min || parquet::CompareValues(v, *cs.min) < 0) cs.min = v;
          if (!cs.max || parquet::CompareValues(v, *cs.max) > 0) cs.max = v;
        }
        stats[c] = cs;
      }
      const StatisticsView view{25, [&](const std::string& c) { return std::optional(stats.at(c)); }};
      bool any = false;
      for (int64_t i = b; i < b + 25; ++i) any = any || keep[i];
      if (any) EXPECT_TRUE(MayMatch(f, view)) << text << " slice " << b;
    }
    if (std::string(text) == "a > 100") EXPECT_EQ(kept, 0);
  }
}

TEST(FilterTest, StatisticsPruneWhatTheyProve) {
  const StatisticsView view{100, [](const std::string& c) -> std::optional<ColumnStatistics> {
                              if (c == "x") return ColumnStatistics{Value::Int(10), Value::Int(20), 0};
                              if (c == "n") return ColumnStatistics{std::nullopt, std::nullopt, 100};
                              if (c == "k") return ColumnStatistics{Value::String("b"), Value::String("b"), 0};
                              return std::nullopt;  // unknown column: nothing proven
                            }};
  auto may = [&](const char* text) { return MayMatch(Filter::Parse(text), view); };
  EXPECT_FALSE(may("x < 10"));
  EXPECT_TRUE(may("x <= 10"));
  EXPECT_FALSE(may("x > 20"));
  EXPECT_FALSE(may("x in (1, 25)"));
  EXPECT_TRUE(may("x in (1, 15)"));
  EXPECT_FALSE(may("x is null"));
  EXPECT_FALSE(may("n = 1"));           // every value null
  EXPECT_FALSE(may("n is not null"));
  EXPECT_TRUE(may("n is null"));
  EXPECT_FALSE(may("k != 'b'"));        // every value is 'b'
  EXPECT_FALSE(may("k not in ('a', 'b')"));
  EXPECT_TRUE(may("unknown = 3"));
  EXPECT_TRUE(may("x < 10 or unknown = 3"));
  EXPECT_FALSE(may("x < 10 and unknown = 3"));
  EXPECT_FALSE(may("x = 15.5 and x > 30"));
}

TEST(FilterTest, IncomparableConstantsAreRefusedNamingTheColumn) {
  int64_t v[2] = {1, 2};
  uint8_t keep[2];
  auto column = [&](const std::string&) { return ColumnVector{ColumnVector::Type::kInt64, v}; };
  EXPECT_THROW_WITH(EvaluateRows(Filter::Parse("id = 'x'"), 2, column, keep), InvalidArgument,
                    "column 'id' (int64)", "\"x\"");
  EXPECT_THROW_WITH(Matches(Filter::Parse("id = 'x'"), [](const std::string&) { return Value::Int(1); }),
                    InvalidArgument, "column 'id'");
}

}  // namespace
}  // namespace lakerun::format
