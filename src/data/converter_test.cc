#include "lakerun/data/converter.h"

#include <cstring>
#include <map>

#include "lakerun/base/error.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

// Rows [first, first + n): id = i, x = [2, 2] floats i + k, name = "r<i>".
void WriteSource(const std::string& path, int64_t first, int64_t n) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("id", pq::PhysicalType::kInt64),
       pq::ListOf("x", pq::Leaf("element", pq::PhysicalType::kFloat), pq::Repetition::kRequired),
       pq::Leaf("name", pq::PhysicalType::kByteArray)});
  pq::WriterOptions options;
  options.tensor_shapes["x"] = {2, 2};
  pq::ParquetWriter writer(LocalFileSystem(), path, schema, options);
  std::vector<int64_t> ids;
  std::vector<float> xs;
  std::vector<int16_t> reps, defs;
  std::vector<std::string> names;
  for (int64_t i = first; i < first + n; ++i) {
    ids.push_back(i);
    names.push_back("r" + std::to_string(i));
    for (int k = 0; k < 4; ++k) {
      xs.push_back(static_cast<float>(i + k));
      reps.push_back(k == 0 ? 0 : 1);
      defs.push_back(1);
    }
  }
  pq::ColumnData x = pq::ColumnData::Floats(xs);
  x.set_rep_levels(reps, 1);
  x.set_def_levels(defs, 1);
  writer.WriteRowGroup({pq::ColumnData::Int64s(ids), x, pq::ColumnData::ByteArrays(names)});
  writer.Close();
}

// id -> (x[1][1], name) over every unit of `source`.
std::map<int64_t, std::pair<float, std::string>> Rows(const RowSource& source) {
  std::map<int64_t, std::pair<float, std::string>> out;
  for (size_t u = 0; u < source.num_units(); ++u) {
    const auto unit = source.ReadUnit(u);
    for (uint64_t r = 0; r < unit->rows; ++r) {
      int64_t id;
      float x;
      std::memcpy(&id, unit->columns[0].data + r * 8, 8);
      std::memcpy(&x, unit->columns[1].data + r * 16 + 12, 4);
      const ColumnChunk& name = unit->columns[2];
      out[id] = {x, std::string(reinterpret_cast<const char*>(name.data) + name.offsets[r],
                                name.offsets[r + 1] - name.offsets[r])};
    }
  }
  return out;
}

TEST(ConverterTest, MaterialisesReusesAndClears) {
  testing::TempDir dir;
  const std::string table = dir.Join("table");
  LocalFileSystem().CreateDirs(table);
  WriteSource(table + "/a.parquet", 0, 50);
  WriteSource(table + "/b.parquet", 50, 25);
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  c.world_size = 3;
  c.row_group_rows = 7;
  c.rows_per_file = 10;
  TableOptions t;
  t.columns = {"id", "x", "name"};

  const ConvertedDataset first = ConvertTable(table, t, c);
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.rows, 75u);
  EXPECT_EQ(first.files, 9);  // ceil(75 / 30) = 3 groups of 3 files
  EXPECT_EQ(first.files % c.world_size, 0);
  const auto converted = OpenTable(first.path);
  EXPECT_EQ(converted->num_rows(), 75u);
  EXPECT_GT(converted->num_units(), 9u);  // row groups of at most 7 rows
  for (size_t u = 0; u < converted->num_units(); ++u) {
    EXPECT_LE(converted->unit_start(u + 1) - converted->unit_start(u), 7u);
  }
  EXPECT_EQ(converted->columns()[1].shape, (std::vector<int64_t>{2, 2}));
  const auto original = Rows(*OpenTable(table, t));
  EXPECT_EQ(Rows(*converted), original);
  EXPECT_EQ(original.at(60), (std::pair<float, std::string>{63.0f, "r60"}));

  const ConvertedDataset again = ConvertTable(table, t, c);
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.path, first.path);

  c.world_size = 4;  // other options: another entry
  const ConvertedDataset four = ConvertTable(table, t, c);
  EXPECT_FALSE(four.reused);
  EXPECT_NE(four.key, first.key);
  EXPECT_EQ(four.files % 4, 0);

  WriteSource(table + "/c.parquet", 75, 5);  // new data: a new entry
  c.world_size = 3;
  const ConvertedDataset grown = ConvertTable(table, t, c);
  EXPECT_FALSE(grown.reused);
  EXPECT_EQ(grown.rows, 80u);

  ClearConverterCache(c.cache_dir, first.key);
  EXPECT_FALSE(LocalFileSystem().Exists(first.path));
  EXPECT_TRUE(LocalFileSystem().Exists(grown.path));
  ClearConverterCache(c.cache_dir);
  EXPECT_FALSE(LocalFileSystem().Exists(grown.path));
  EXPECT_FALSE(ConvertTable(table, t, c).reused);
}

TEST(ConverterTest, RejectsBadOptions) {
  MemoryRowSource source({}, 1);
  ConverterOptions c;
  EXPECT_THROW_WITH(Convert(source, "f", c), InvalidArgument, "cache_dir");
  c.cache_dir = "/tmp/x";
  c.world_size = 0;
  EXPECT_THROW_WITH(Convert(source, "f", c), InvalidArgument, "world_size");
  c.world_size = 1;
  EXPECT_THROW_WITH(Convert(source, "", c), InvalidArgument, "fingerprint");
}

}  // namespace
}  // namespace lakerun::data
