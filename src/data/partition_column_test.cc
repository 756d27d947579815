#include "partition_column.h"

#include <gmock/gmock.h>

#include <cstring>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

template <typename T>
T RowValue(const ColumnChunk& chunk, uint64_t row) {
  T v;
  std::memcpy(&v, chunk.data + row * sizeof(T), sizeof(T));
  return v;
}

ColumnInfo InfoOf(const char* type) {
  return PartitionColumnInfo("p", *delta::PrimitiveType(type), /*nullable=*/false, ColumnForm{}, "table t");
}

TEST(PartitionColumnTest, EveryRowHoldsTheValueInTheColumnsElementType) {
  EXPECT_EQ(RowValue<int8_t>(ConstantColumn(InfoOf("byte"), pq::Value::Int(-7), 3), 2), -7);
  EXPECT_EQ(RowValue<int16_t>(ConstantColumn(InfoOf("short"), pq::Value::Int(-300), 3), 2), -300);
  EXPECT_EQ(RowValue<int32_t>(ConstantColumn(InfoOf("integer"), pq::Value::Int(70000), 3), 2), 70000);
  EXPECT_EQ(RowValue<int64_t>(ConstantColumn(InfoOf("long"), pq::Value::Int(1LL << 40), 3), 2), 1LL << 40);
  EXPECT_EQ(RowValue<int32_t>(ConstantColumn(InfoOf("date"), pq::Value::Int(19000), 3), 1), 19000);
  EXPECT_EQ(RowValue<int64_t>(ConstantColumn(InfoOf("timestamp"), pq::Value::Int(123456789), 3), 0), 123456789);
  EXPECT_FLOAT_EQ(RowValue<float>(ConstantColumn(InfoOf("float"), pq::Value::Float(0.25f), 3), 2), 0.25f);
  EXPECT_DOUBLE_EQ(RowValue<double>(ConstantColumn(InfoOf("double"), pq::Value::Double(-1.5), 3), 2), -1.5);
  EXPECT_EQ(RowValue<uint8_t>(ConstantColumn(InfoOf("boolean"), pq::Value::Bool(true), 3), 2), 1);

  const ColumnChunk text = ConstantColumn(InfoOf("string"), pq::Value::String("train"), 3);
  ASSERT_NE(text.offsets, nullptr);
  for (uint64_t r = 0; r < 3; ++r) EXPECT_EQ(text.RowView(r, 0), "train");
  EXPECT_EQ(text.validity, nullptr);
}

TEST(PartitionColumnTest, ANullValueIsNullOnEveryRow) {
  const ColumnChunk ints = ConstantColumn(InfoOf("integer"), pq::Value::Null(), 4);
  ASSERT_NE(ints.validity, nullptr);
  for (uint64_t r = 0; r < 4; ++r) EXPECT_EQ(ints.validity[r], 0);
  const ColumnChunk text = ConstantColumn(InfoOf("string"), pq::Value::Null(), 2);
  ASSERT_NE(text.validity, nullptr);
  EXPECT_EQ(text.RowView(1, 0), "");
}

TEST(PartitionColumnTest, TypesWithoutATensorFormAreRefusedNamingTheColumn) {
  const auto nested = delta::MakeStruct({delta::StructField{"a", delta::PrimitiveType("long"), true}});
  EXPECT_THROW_WITH(PartitionColumnInfo("point", *nested, false, ColumnForm{}, "table t version 3"), NotImplemented,
                    "table t version 3", "column 'point'", "struct");
  EXPECT_EQ(PartitionColumnInfo("price", *delta::PrimitiveType("decimal(10,2)"), false, ColumnForm{}, "t").type,
            ElementType::kFloat64);
}

}  // namespace
}  // namespace lakerun::data
