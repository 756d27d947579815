// Column mapping: name mode resolves physical names, id mode resolves Parquet field ids; renames keep working.
#include <gtest/gtest.h>

#include "format/delta/delta_test_util.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

// The schema of PROTOCOL.md's column-mapping checkpoint example (asset, quantity, date, region).
const char kMappedSchema[] = R"({"type":"struct","fields":[
  {"name":"asset","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-b96921f0-2329-4cb3-8d79-184b2bdab23b"}},
  {"name":"quantity","type":"double","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-04ee4877-ee53-4cb9-b1fb-1a4eb74b508c"}},
  {"name":"date","type":"date","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-798f4abc-c63f-444c-9a04-e2cf1ecba115"}},
  {"name":"region","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-19034dc3-8e3d-4156-82fc-8e05533c088e"}}]})";

DeltaTable CreateMapped(const std::string& path, const std::string& mode) {
  CreateTableOptions options;
  options.partition_columns = {"region"};
  options.protocol.min_reader_version = 2;
  options.protocol.min_writer_version = 5;
  options.configuration = {{"delta.columnMapping.mode", mode}, {"delta.columnMapping.maxColumnId", "4"}};
  return CreateTable(path, ParseSchema(kMappedSchema, "test"), options);
}

std::vector<Value> SomeRows() {
  std::vector<Value> rows;
  for (int i = 0; i < 6; ++i) {
    rows.push_back(Value::Struct({{"asset", Value::String("a" + std::to_string(i))},
                                  {"quantity", Value::Double(i * 1.5)},
                                  {"date", Value::Int(18000 + i)},
                                  {"region", Value::String(i % 2 ? "eu" : "us")}}));
  }
  return rows;
}

TEST(DeltaColumnMappingTest, NameModeWritesAndReadsPhysicalNames) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateMapped(dir.path(), "name");
  AppendRows(table, SomeRows(), {});
  Snapshot s = table.Latest();
  EXPECT_EQ(s.column_mapping_mode(), ColumnMappingMode::kName);
  ASSERT_EQ(s.files.size(), 2u);
  // Partition values and stats use physical names; data files hold physical names and field ids.
  EXPECT_TRUE(s.files[0].partition_values.count("col-19034dc3-8e3d-4156-82fc-8e05533c088e"));
  EXPECT_NE(s.files[0].stats->find("col-04ee4877-ee53-4cb9-b1fb-1a4eb74b508c"), std::string::npos);
  auto pf = parquet::ParquetFile::Open(LocalFileSystem(), s.DataFilePath(s.files[0]));
  ASSERT_EQ(pf->schema().root().children.size(), 3u);
  EXPECT_EQ(pf->schema().root().children[0].name, "col-b96921f0-2329-4cb3-8d79-184b2bdab23b");
  EXPECT_EQ(pf->schema().root().children[0].field_id, 1);

  std::vector<Value> rows = TableScan(table, s).ReadAll();
  ASSERT_EQ(rows.size(), 6u);
  int eu = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(r.Field("asset")->as_string().substr(0, 1), "a");
    eu += r.Field("region")->as_string() == "eu";
  }
  EXPECT_EQ(eu, 3);
  ScanOptions filtered;
  filtered.filter = Filter::Parse("quantity >= 6.0 and region = 'eu'");
  EXPECT_EQ(PruneFiles(s, filtered.filter).size(), 1u);
  EXPECT_EQ(TableScan(table, s, filtered).ReadAll().size(), 1u);  // i = 5

  // Rename the display name 'asset' to 'ticker': same physical name, so the old files still read.
  Metadata m = s.metadata;
  auto renamed = std::make_shared<DataType>(*m.schema);
  renamed->fields[0].name = "ticker";
  m.schema = renamed;
  m.schema_string = SchemaToJson(*renamed);
  ActionSet change;
  change.metadata = m;
  Commit(table, change, {});
  ScanOptions only;
  only.columns = {"ticker"};
  std::vector<Value> after = TableScan(table, table.Latest(), only).ReadAll();
  ASSERT_EQ(after.size(), 6u);
  EXPECT_EQ(after[0].Field("ticker")->as_string().substr(0, 1), "a");
}

TEST(DeltaColumnMappingTest, IdModeResolvesByFieldIdNotName) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateMapped(dir.path(), "id");
  // A data file whose column names match nothing in the schema: only the field ids connect them.
  using namespace lakerun::parquet;
  SchemaNode a = Leaf("x_one", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String());
  a.field_id = 1;
  SchemaNode q = Leaf("x_two", PhysicalType::kDouble, Repetition::kOptional);
  q.field_id = 2;
  SchemaNode unknown = Leaf("x_nine", PhysicalType::kInt32, Repetition::kOptional);
  unknown.field_id = 9;
  const std::string file = dir.Join("region=eu/data.parquet");
  LocalFileSystem().CreateDirs(dir.Join("region=eu"));
  {
    ParquetWriter writer(LocalFileSystem(), file, parquet::Schema::FromFields({a, q, unknown}));
    writer.WriteRows({Value::Struct({{"x_one", Value::String("BTC")}, {"x_two", Value::Double(2.5)},
                                     {"x_nine", Value::Int(7)}}),
                      Value::Struct({{"x_one", Value::String("ETH")}, {"x_two", Value::Double(4.0)},
                                     {"x_nine", Value::Int(8)}})});
    writer.Close();
  }
  AddFile add;
  add.path = "region=eu/data.parquet";
  add.partition_values["col-19034dc3-8e3d-4156-82fc-8e05533c088e"] = "eu";
  add.size = static_cast<int64_t>(LocalFileSystem().Stat(file)->size);
  ActionSet actions;
  actions.adds.push_back(add);
  Commit(table, actions, {});
  std::vector<Value> rows = TableScan(table, table.Latest()).ReadAll();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], Value::Struct({{"asset", Value::String("BTC")},
                                    {"quantity", Value::Double(2.5)},
                                    {"date", Value::Null()},  // id 3 is not in the file
                                    {"region", Value::String("eu")}}));
  EXPECT_EQ(rows[1].Field("asset")->as_string(), "ETH");
}

TEST(DeltaColumnMappingTest, IdModeRefusesFilesWithoutFieldIds) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateMapped(dir.path(), "id");
  using namespace lakerun::parquet;
  const std::string file = dir.Join("plain.parquet");
  {
    ParquetWriter writer(LocalFileSystem(), file,
                         parquet::Schema::FromFields({Leaf("asset", PhysicalType::kByteArray, Repetition::kOptional,
                                                           LogicalType::String())}));
    writer.WriteRows({Value::Struct({{"asset", Value::String("x")}})});
    writer.Close();
  }
  AddFile add;
  add.path = "plain.parquet";
  ActionSet actions;
  actions.adds.push_back(add);
  Commit(table, actions, {});
  EXPECT_THROW_WITH(TableScan(table, table.Latest()).ReadAll(), CorruptDataError, "plain.parquet", "field ids");
}

}  // namespace
}  // namespace lakerun::delta
