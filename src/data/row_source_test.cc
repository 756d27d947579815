#include "lakerun/data/row_source.h"

#include <cstring>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

MemoryRowSource::Column Int64Column(const std::string& name, int64_t n) {
  MemoryRowSource::Column c{{name, ElementType::kInt64, {}}, {}, {}};
  c.bytes.resize(n * 8);
  for (int64_t i = 0; i < n; ++i) std::memcpy(c.bytes.data() + i * 8, &i, 8);
  return c;
}

TEST(MemoryRowSourceTest, CutsRowsIntoUnitsAndReadsThem) {
  MemoryRowSource::Column text{{"text", ElementType::kBinary, {}}, {}, {0}};
  for (int i = 0; i < 10; ++i) {
    const std::string v(i, 'a' + i);
    text.bytes.insert(text.bytes.end(), v.begin(), v.end());
    text.offsets.push_back(static_cast<int64_t>(text.bytes.size()));
  }
  MemoryRowSource source({Int64Column("id", 10), text}, 4);
  EXPECT_EQ(source.num_rows(), 10u);
  ASSERT_EQ(source.num_units(), 3u);
  EXPECT_EQ(source.unit_start(2), 8u);
  EXPECT_EQ(source.unit_start(3), 10u);
  const auto unit = source.ReadUnit(1);
  ASSERT_EQ(unit->rows, 4u);
  int64_t id;
  std::memcpy(&id, unit->columns[0].data + 8, 8);
  EXPECT_EQ(id, 5);
  const ColumnChunk& t = unit->columns[1];
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(t.data) + t.offsets[1], t.offsets[2] - t.offsets[1]),
            "fffff");
}

TEST(MemoryRowSourceTest, RejectsMismatchedColumnsAndReportsInjectedCorruption) {
  EXPECT_THROW_WITH(MemoryRowSource({Int64Column("a", 3), Int64Column("b", 4)}, 2, "t"), InvalidArgument, "'b'",
                    "4 rows", "expected 3");
  MemoryRowSource source({Int64Column("a", 3)}, 2, "table.parquet");
  source.FailUnit(1);
  EXPECT_THROW_WITH(source.ReadUnit(1), CorruptDataError, "table.parquet unit 1");
}

}  // namespace
}  // namespace lakerun::data
