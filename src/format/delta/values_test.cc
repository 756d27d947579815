// Partition values and statistics: the serializations of PROTOCOL.md ("Partition Value Serialization").
#include <gtest/gtest.h>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/values.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

Value Parse(const std::optional<std::string>& text, const char* type) {
  return ParsePartitionValue(text, *PrimitiveType(type), "table t version 1 file f");
}

TEST(DeltaValuesTest, ParsesPartitionValuesByType) {
  EXPECT_TRUE(Parse("", "integer").is_null());
  EXPECT_TRUE(Parse(std::nullopt, "string").is_null());
  EXPECT_EQ(Parse("-42", "long"), Value::Int(-42));
  EXPECT_EQ(Parse("true", "boolean"), Value::Bool(true));
  EXPECT_EQ(Parse("1.5", "double"), Value::Double(1.5));
  EXPECT_EQ(Parse("1970-01-01", "date"), Value::Int(0));
  EXPECT_EQ(Parse("2017-12-10", "date"), Value::Int(17510));
  EXPECT_EQ(Parse("1970-01-01 00:00:00", "timestamp"), Value::Int(0));
  EXPECT_EQ(Parse("1970-01-01 00:00:00.123456", "timestamp_ntz"), Value::Int(123456));
  EXPECT_EQ(Parse("1970-01-01T00:00:01.5Z", "timestamp"), Value::Int(1500000));
  EXPECT_EQ(Parse("12.34", "decimal(10,2)"), Value::Int(1234));
  EXPECT_EQ(Parse("a/b=c", "string"), Value::String("a/b=c"));
  EXPECT_THROW_WITH(Parse("12x", "integer"), CorruptDataError, "table t version 1 file f", "'12x'", "integer");
  EXPECT_THROW_WITH(Parse("2017-13-01", "date"), CorruptDataError, "date");
}

TEST(DeltaValuesTest, FormatsRoundTrip) {
  EXPECT_EQ(FormatPartitionValue(Value::Int(17510), *PrimitiveType("date")), "2017-12-10");
  EXPECT_EQ(FormatPartitionValue(Value::Int(1500000), *PrimitiveType("timestamp")), "1970-01-01T00:00:01.500000Z");
  EXPECT_EQ(FormatPartitionValue(Value::Int(-1234), *PrimitiveType("decimal(10,2)")), "-12.34");
  EXPECT_EQ(FormatPartitionValue(Value::Null(), *PrimitiveType("long")), std::nullopt);
  EXPECT_EQ(FormatStatsValue(Value::Int(1500999), *PrimitiveType("timestamp")), "\"1970-01-01T00:00:01.500Z\"");
  EXPECT_EQ(ParseStatsValue("\"1970-01-01T00:00:01.500Z\"", *PrimitiveType("timestamp")), Value::Int(1500000));
  EXPECT_EQ(ParseStatsValue("\"2017-12-10\"", *PrimitiveType("date")), Value::Int(17510));
  EXPECT_EQ(ParseStatsValue("7", *PrimitiveType("double")), Value::Double(7));
  EXPECT_EQ(ParseStatsValue("\"x\"", *PrimitiveType("long")), std::nullopt);
  for (int64_t days : {-719468, -1, 0, 59, 11016, 2932896}) {
    EXPECT_EQ(Parse(CivilFromDays(days), "date"), Value::Int(days)) << days;
  }
}

}  // namespace
}  // namespace lakerun::delta
