// The Delta table's schema, not a data file's, defines the loader's columns: column mapping (name and id modes),
// columns added after older files were written (null there), and tables without files.
#include <ATen/ATen.h>
#include <gmock/gmock.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/column_policy.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

const char kMappedSchema[] = R"({"type":"struct","fields":[
  {"name":"asset","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-a"}},
  {"name":"quantity","type":"double","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-q"}},
  {"name":"day","type":"date","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-d"}},
  {"name":"region","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-r"}}]})";

delta::DeltaTable CreateMapped(const std::string& path, const std::string& mode) {
  delta::CreateTableOptions options;
  options.partition_columns = {"region"};
  options.protocol.min_reader_version = 2;
  options.protocol.min_writer_version = 5;
  options.configuration = {{"delta.columnMapping.mode", mode}, {"delta.columnMapping.maxColumnId", "4"}};
  return delta::CreateTable(path, delta::ParseSchema(kMappedSchema, "test"), options);
}

// The whole table in one unshuffled-order-independent batch: column -> per-id values (by the "key" column).
std::map<std::string, std::map<int64_t, double>> ReadNumbers(const std::shared_ptr<RowSource>& source,
                                                             const std::string& key, LoaderOptions o) {
  o.batch_size = static_cast<int64_t>(source->num_rows());
  Loader loader(source, o);
  auto b = loader.Next();
  std::map<std::string, std::map<int64_t, double>> out;
  if (!b) return out;
  const at::Tensor keys = b->at(key).to(at::kLong);
  for (const auto& [name, tensor] : b->tensors) {
    if (tensor.dim() != 1 || tensor.scalar_type() == at::kByte) continue;
    const at::Tensor t = tensor.to(at::kDouble);
    for (int64_t i = 0; i < keys.size(0); ++i) out[name][keys[i].item<int64_t>()] = t[i].item<double>();
  }
  return out;
}

TEST(TableSchemaTest, ColumnMappingNameModeReadsPhysicalNamesAndSurvivesARename) {
  testing::TempDir dir;
  delta::DeltaTable table = CreateMapped(dir.path(), "name");
  std::vector<pq::Value> rows;
  for (int i = 0; i < 6; ++i) {
    rows.push_back(pq::Value::Struct({{"asset", pq::Value::String("a" + std::to_string(i))},
                                      {"quantity", pq::Value::Double(i * 1.5)},
                                      {"day", pq::Value::Int(18000 + i)},
                                      {"region", pq::Value::String(i % 2 ? "eu" : "us")}}));
  }
  delta::AppendRows(table, rows, {});
  // Rename 'quantity' to 'qty': the physical name stays, so the files still read.
  delta::Snapshot s = table.Latest();
  delta::Metadata m = s.metadata;
  auto renamed = std::make_shared<delta::DataType>(*m.schema);
  renamed->fields[1].name = "qty";
  m.schema = renamed;
  m.schema_string = delta::SchemaToJson(*renamed);
  delta::ActionSet change;
  change.metadata = m;
  delta::Commit(table, change, {});

  TableOptions t;
  auto source = OpenTable(dir.path(), t);
  ASSERT_EQ(source->columns().size(), 4u);
  EXPECT_EQ(source->columns()[1].name, "qty");
  LoaderOptions o;
  o.raw_bytes = {"asset", "region"};
  auto numbers = ReadNumbers(source, "day", o);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(numbers["qty"][18000 + i], i * 1.5);
  t.filter = Filter::Parse("qty >= 3 and region = 'eu' and day < '2019-04-18'");  // day 18000 = 2019-04-14
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 1u);                         // i = 3 (day 18005 is too late)
  t.filter = Filter::Parse("qty >= 3 and region = 'eu'");
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 2u);  // i = 3, 5
}

TEST(TableSchemaTest, ColumnMappingIdModeMatchesFieldIdsAndReadsMissingIdsAsNull) {
  testing::TempDir dir;
  delta::DeltaTable table = CreateMapped(dir.path(), "id");
  // A data file whose names match nothing in the schema: only field ids connect them; id 3 (day) is missing.
  pq::SchemaNode a = pq::Leaf("x_one", pq::PhysicalType::kByteArray, pq::Repetition::kOptional,
                              pq::LogicalType::String());
  a.field_id = 1;
  pq::SchemaNode q = pq::Leaf("x_two", pq::PhysicalType::kDouble, pq::Repetition::kOptional);
  q.field_id = 2;
  LocalFileSystem().CreateDirs(dir.Join("region=eu"));
  {
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("region=eu/data.parquet"), pq::Schema::FromFields({a, q}));
    writer.WriteRows({pq::Value::Struct({{"x_one", pq::Value::String("BTC")}, {"x_two", pq::Value::Double(2.5)}}),
                      pq::Value::Struct({{"x_one", pq::Value::String("ETH")}, {"x_two", pq::Value::Double(4.0)}})});
    writer.Close();
  }
  delta::AddFile add;
  add.path = "region=eu/data.parquet";
  add.partition_values["col-r"] = "eu";
  add.size = static_cast<int64_t>(LocalFileSystem().Stat(dir.Join("region=eu/data.parquet"))->size);
  delta::ActionSet actions;
  actions.adds.push_back(add);
  delta::Commit(table, actions, {});

  TableOptions t;
  t.columns = {"quantity", "day"};
  auto source = OpenTable(dir.path(), t);
  ASSERT_EQ(source->num_rows(), 2u);
  EXPECT_TRUE(source->columns()[1].nullable);
  EXPECT_EQ(source->columns()[1].type, ElementType::kInt32);  // a date, typed from the table's schema
  LoaderOptions o;
  o.batch_size = 2;
  // Without a null policy the missing column is an error naming it; with one it is null on every row.
  EXPECT_THROW_WITH(({ Loader l(source, o); l.Next(); }), Error, "day");
  o.nulls["day"].fill_value = -7;
  Loader loader(source, o);
  auto b = loader.Next();
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(at::equal(b->at("day"), at::full({2}, -7, at::kInt)));
  EXPECT_FALSE(b->at("day.valid").any().item<bool>());
  EXPECT_DOUBLE_EQ(b->at("quantity").sum().item<double>(), 6.5);
  t.filter = Filter::Parse("day is null and quantity > 3");
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 1u);
}

TEST(TableSchemaTest, AColumnAddedLaterIsNullInOlderFilesAndEmptyTablesHaveTheirSchema) {
  testing::TempDir dir;
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false}});
  delta::DeltaTable table = delta::CreateTable(dir.path(), schema, {});
  // An empty table: zero rows, the schema's columns.
  auto empty = OpenTable(dir.path(), {});
  EXPECT_EQ(empty->num_rows(), 0u);
  ASSERT_EQ(empty->columns().size(), 1u);
  EXPECT_EQ(empty->columns()[0].name, "id");

  std::vector<pq::Value> old_rows;
  for (int i = 0; i < 4; ++i) old_rows.push_back(pq::Value::Struct({{"id", pq::Value::Int(i)}}));
  delta::AppendRows(table, old_rows, {});
  // Add a column, then write rows that have it.
  delta::Metadata m = table.Latest().metadata;
  auto evolved = std::make_shared<delta::DataType>(*m.schema);
  evolved->fields.push_back(delta::StructField{"extra", delta::PrimitiveType("double"), true});
  m.schema = evolved;
  m.schema_string = delta::SchemaToJson(*evolved);
  delta::ActionSet change;
  change.metadata = m;
  delta::Commit(table, change, {});
  std::vector<pq::Value> new_rows;
  for (int i = 4; i < 7; ++i) {
    new_rows.push_back(pq::Value::Struct({{"id", pq::Value::Int(i)}, {"extra", pq::Value::Double(i * 10.0)}}));
  }
  delta::AppendRows(table, new_rows, {});

  auto source = OpenTable(dir.path(), {});  // no columns named: every column of the table's schema
  ASSERT_EQ(source->columns().size(), 2u);
  EXPECT_EQ(source->columns()[1].name, "extra");
  EXPECT_TRUE(source->columns()[1].nullable);
  LoaderOptions o;
  o.nulls["extra"].fill_value = -1;
  auto numbers = ReadNumbers(source, "id", o);
  EXPECT_EQ(numbers["extra"], (std::map<int64_t, double>{{0, -1}, {1, -1}, {2, -1}, {3, -1}, {4, 40}, {5, 50},
                                                          {6, 60}}));
  TableOptions t;
  t.filter = Filter::Parse("extra >= 50 or extra is null");
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 6u);
  // The table at version 1 (before the column) has no 'extra'.
  t.filter = Filter();
  t.delta_version = 1;
  EXPECT_EQ(OpenTable(dir.path(), t)->columns().size(), 1u);
  t.columns = {"extra"};
  EXPECT_THROW_WITH(OpenTable(dir.path(), t), InvalidArgument, "no column 'extra'");
}

// Sets the modification time of a commit file: a Delta commit's timestamp without in-commit timestamps.
void SetCommitTime(const std::string& table, int version, int64_t ms) {
  char name[32];
  std::snprintf(name, sizeof name, "%020d.json", version);
  const std::string path = JoinPath(JoinPath(table, "_delta_log"), name);
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ms / 1000;
  times[0].tv_nsec = times[1].tv_nsec = (ms % 1000) * 1000000;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(TableSchemaTest, TimeTravelByTimestampReadsTheVersionCommittedBefore) {
  testing::TempDir dir;
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false}});
  delta::DeltaTable table = delta::CreateTable(dir.path(), schema, {});
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<pq::Value> rows;
    for (int i = 0; i < 3; ++i) rows.push_back(pq::Value::Struct({{"id", pq::Value::Int(batch * 10 + i)}}));
    delta::AppendRows(table, rows, {});
  }
  for (int version = 0; version <= 2; ++version) SetCommitTime(dir.path(), version, 1700000000000 + version * 60000);
  TableOptions t;
  t.delta_timestamp_ms = 1700000000000 + 90000;  // between versions 1 and 2
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 3u);
  t.delta_timestamp_ms = 1700000000000 + 120000;  // exactly version 2's
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 6u);
  t.delta_timestamp_ms = 1700000000000 + 30000;   // version 0: the empty table
  EXPECT_EQ(OpenTable(dir.path(), t)->num_rows(), 0u);
  t.delta_timestamp_ms = 1600000000000;           // before the first commit
  EXPECT_THROW_WITH(OpenTable(dir.path(), t), InvalidArgument, dir.path());
}

TEST(TableSchemaTest, AVoidColumnIsLeftOutOfTheDefaultColumnsAndRefusedWhenNamed) {
  testing::TempDir dir;
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false},
                                   delta::StructField{"nothing", delta::PrimitiveType("void"), true}});
  delta::DeltaTable table = delta::CreateTable(dir.path(), schema, {});
  delta::AppendRows(table, {pq::Value::Struct({{"id", pq::Value::Int(1)}})}, {});
  auto source = OpenTable(dir.path(), {});
  ASSERT_EQ(source->columns().size(), 1u);
  EXPECT_EQ(source->columns()[0].name, "id");
  TableOptions t;
  t.columns = {"nothing"};
  EXPECT_THROW_WITH(OpenTable(dir.path(), t), NotImplemented, "'nothing'", "void");
}

}  // namespace
}  // namespace lakerun::data
