// ParseFileStats: only the requested columns, typed as ParseStatsValue types them; odd stats never throw.
#include <gtest/gtest.h>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/file_stats.h"
#include "lakerun/format/delta/values.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

// Keeps the types alive for the column maps the tests build.
const DataType* Type(const char* name) {
  static std::map<std::string, DataTypePtr>* types = new std::map<std::string, DataTypePtr>();
  DataTypePtr& t = (*types)[name];
  if (!t) t = PrimitiveType(name);
  return t.get();
}

constexpr const char* kStats =
    R"({"numRecords":100,"minValues":{"id":-5,"score":0.25,"name":"alpha","ts":"2024-01-02T03:04:05.678Z",)"
    R"("day":"2017-12-10","s":{"x":3,"y":{"z":"deep"}}},"maxValues":{"id":90,"score":1e2,"name":"zulu",)"
    R"("ts":"2024-01-02T03:04:06.000Z","day":"2017-12-31","s":{"x":30,"y":{"z":"deeper"}}},)"
    R"("nullCount":{"id":0,"score":7,"name":1,"ts":0,"day":0,"s":{"x":2,"y":{"z":4}}},"tightBounds":true})";

TEST(DeltaFileStatsTest, ParsesNumbersStringsDatesAndTimestamps) {
  auto stats = ParseFileStats(kStats, {{"id", Type("long")},
                                       {"score", Type("double")},
                                       {"name", Type("string")},
                                       {"ts", Type("timestamp")},
                                       {"day", Type("date")}});
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->num_records, 100);
  const auto& c = stats->columns;
  EXPECT_EQ(c.at("id").min, Value::Int(-5));
  EXPECT_EQ(c.at("id").max, Value::Int(90));
  EXPECT_EQ(c.at("id").null_count, 0);
  EXPECT_EQ(c.at("score").min, Value::Double(0.25));
  EXPECT_EQ(c.at("score").max, Value::Double(100));
  EXPECT_EQ(c.at("score").null_count, 7);
  EXPECT_EQ(c.at("name").min, Value::String("alpha"));
  EXPECT_EQ(c.at("name").max, Value::String("zulu"));
  // Timestamps are held to the millisecond; dates as days.
  EXPECT_EQ(c.at("ts").min, ParseStatsValue("\"2024-01-02T03:04:05.678Z\"", *Type("timestamp")));
  EXPECT_EQ(c.at("ts").min->as_int() % 1000000, 678000);
  EXPECT_EQ(c.at("day").min, Value::Int(17510));
  EXPECT_EQ(c.at("day").max, Value::Int(17531));
}

TEST(DeltaFileStatsTest, OnlyRequestedColumnsAppear) {
  auto stats = ParseFileStats(kStats, {{"name", Type("string")}});
  ASSERT_TRUE(stats.has_value());
  ASSERT_EQ(stats->columns.size(), 1u);
  EXPECT_EQ(stats->columns.begin()->first, "name");
  auto none = ParseFileStats(kStats, {});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->num_records, 100);
  EXPECT_TRUE(none->columns.empty());
}

TEST(DeltaFileStatsTest, NestedStructLeavesUseDottedKeys) {
  auto stats = ParseFileStats(kStats, {{"s.x", Type("integer")}, {"s.y.z", Type("string")}});
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->columns.at("s.x").min, Value::Int(3));
  EXPECT_EQ(stats->columns.at("s.x").max, Value::Int(30));
  EXPECT_EQ(stats->columns.at("s.x").null_count, 2);
  EXPECT_EQ(stats->columns.at("s.y.z").min, Value::String("deep"));
  EXPECT_EQ(stats->columns.at("s.y.z").max, Value::String("deeper"));
  EXPECT_EQ(stats->columns.at("s.y.z").null_count, 4);
}

TEST(DeltaFileStatsTest, MissingAndIllTypedEntriesAreAbsent) {
  const char* text =
      R"({"numRecords":"many","minValues":{"a":1.5,"b":null,"c":"x","d":[1,2]},"maxValues":{"a":2},)"
      R"("nullCount":{"a":"zero","c":1}})";
  auto stats = ParseFileStats(text, {{"a", Type("long")},
                                     {"b", Type("long")},
                                     {"c", Type("long")},
                                     {"d", Type("string")},
                                     {"missing", Type("long")}});
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->num_records, std::nullopt);
  const auto& c = stats->columns;
  EXPECT_EQ(c.at("a").min, std::nullopt);  // 1.5 is no long
  EXPECT_EQ(c.at("a").max, Value::Int(2));
  EXPECT_EQ(c.at("a").null_count, std::nullopt);
  EXPECT_EQ(c.count("b"), 0u);
  EXPECT_EQ(c.at("c").min, std::nullopt);
  EXPECT_EQ(c.at("c").null_count, 1);
  EXPECT_EQ(c.count("d"), 0u);
  EXPECT_EQ(c.count("missing"), 0u);
  // Sections of the wrong kind, and integers too large for int64, are ignored too.
  auto odd = ParseFileStats(R"({"minValues":[1],"maxValues":{"a":99999999999999999999},"nullCount":3})",
                            {{"a", Type("long")}});
  ASSERT_TRUE(odd.has_value());
  EXPECT_TRUE(odd->columns.empty());
  // Numbers fit double columns; strings do not.
  auto dbl = ParseFileStats(R"({"minValues":{"f":-1,"g":"1.0"},"maxValues":{"f":2.5E-1}})",
                            {{"f", Type("float")}, {"g", Type("double")}});
  ASSERT_TRUE(dbl.has_value());
  EXPECT_EQ(dbl->columns.at("f").min, Value::Float(-1));
  EXPECT_EQ(dbl->columns.at("f").max, Value::Float(0.25f));
  EXPECT_EQ(dbl->columns.count("g"), 0u);
}

TEST(DeltaFileStatsTest, MalformedJsonIsNotStats) {
  const std::map<std::string, const DataType*> cols = {{"id", Type("long")}};
  for (const char* bad : {"", "null", "[1]", "\"text\"", "42", "{", R"({"numRecords":1)", R"({"numRecords":01})",
                          R"({"minValues":{"id":1}} trailing)", R"({"minValues":{"id":1,}})", R"({'id':1})",
                          R"({"minValues":{"id":tru}})", R"({"a":"bad \q escape"})", "{\"a\":\"raw\ncontrol\"}",
                          R"({"a":"\ud800 lone surrogate"})", R"({"numRecords":-})", R"({"a":1.})"}) {
    EXPECT_EQ(ParseFileStats(bad, cols), std::nullopt) << bad;
  }
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"a":)";
  deep += "1";
  for (int i = 0; i < 200; ++i) deep += "}";
  EXPECT_EQ(ParseFileStats(deep, cols), std::nullopt);
  auto empty = ParseFileStats(" {} ", cols);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->num_records, std::nullopt);
}

TEST(DeltaFileStatsTest, EscapedStringsAndKeys) {
  const char* text = R"({"minValues":{"na\"me":"a\\b\"c\u00e9\ud83d\ude00\n","s\/t":"x"},)"
                     R"("maxValues":{"na\"me":"tab\there","s/t":"\/"}})";
  auto stats = ParseFileStats(text, {{"na\"me", Type("string")}, {"s/t", Type("string")}});
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->columns.at("na\"me").min, Value::String("a\\b\"c\xc3\xa9\xf0\x9f\x98\x80\n"));
  EXPECT_EQ(stats->columns.at("na\"me").max, Value::String("tab\there"));
  EXPECT_EQ(stats->columns.at("s/t").min, Value::String("x"));
  EXPECT_EQ(stats->columns.at("s/t").max, Value::String("/"));
}

TEST(DeltaFileStatsTest, AgreesWithFormatStatsValue) {
  // What lakerun's writer puts in stats parses back to the same values (timestamps to the millisecond).
  const std::vector<std::pair<const char*, Value>> cases = {
      {"long", Value::Int(-123456789012)},   {"integer", Value::Int(42)},
      {"double", Value::Double(0.1)},        {"string", Value::String("quote\" and \\ and \x01")},
      {"date", Value::Int(-1)},              {"timestamp", Value::Int(1704067200123000)},
      {"timestamp_ntz", Value::Int(1500000)}};
  for (const auto& [type, value] : cases) {
    const std::string text = *FormatStatsValue(value, *Type(type));
    auto stats = ParseFileStats(StrCat(R"({"minValues":{"c":)", text, "}}"), {{"c", Type(type)}});
    ASSERT_TRUE(stats.has_value()) << type << " " << text;
    EXPECT_EQ(stats->columns.at("c").min, value) << type << " " << text;
  }
}

}  // namespace
}  // namespace lakerun::delta
