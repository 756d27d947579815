// Creating tables, appending rows, reading them back: statistics, pruning, txn idempotence, deletion vectors,
// schema evolution, crashes and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "format/delta/delta_test_util.h"
#include "format/delta/json_codec.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

DataTypePtr TestSchema() {
  return ParseSchema(R"({"type":"struct","fields":[
    {"name":"id","type":"long","nullable":true,"metadata":{}},
    {"name":"name","type":"string","nullable":true,"metadata":{}},
    {"name":"score","type":"double","nullable":true,"metadata":{}},
    {"name":"day","type":"date","nullable":true,"metadata":{}},
    {"name":"split","type":"string","nullable":true,"metadata":{}}]})",
                     "test");
}

Value TestRow(int64_t id, const std::string& split) {
  return Value::Struct({{"id", Value::Int(id)},
                        {"name", id % 5 == 0 ? Value::Null() : Value::String("n" + std::to_string(id))},
                        {"score", Value::Double(id * 0.5)},
                        {"day", Value::Int(19000 + id)},
                        {"split", Value::String(split)}});
}

std::vector<Value> Rows(int64_t from, int64_t to, const std::string& split) {
  std::vector<Value> out;
  for (int64_t i = from; i < to; ++i) out.push_back(TestRow(i, split));
  return out;
}

std::vector<int64_t> Ids(const std::vector<Value>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(r.Field("id")->as_int());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

class DeltaWriterTest : public ::testing::Test {
 protected:
  DeltaTable Create(CreateTableOptions options = {}) {
    if (options.partition_columns.empty()) options.partition_columns = {"split"};
    return CreateTable(dir_.path(), TestSchema(), options);
  }
  lakerun::testing::TempDir dir_;
};

TEST_F(DeltaWriterTest, AppendedRowsReadBackWithPartitionsAndStats) {
  DeltaTable table = Create();
  WriteOptions opts;
  CommitResult r = AppendRows(table, Rows(0, 20, "train"), opts);
  EXPECT_EQ(r.version, 1);
  std::vector<Value> test_rows = Rows(100, 105, "test");
  AppendRows(table, test_rows, opts);

  Snapshot s = table.Latest();
  EXPECT_EQ(s.version, 2);
  ASSERT_EQ(s.files.size(), 2u);
  EXPECT_EQ(s.NumRecords(), 25);
  const AddFile* train = nullptr;
  for (const auto& f : s.files) {
    if (f.partition_values.at("split") == "train") train = &f;
  }
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->path.rfind("split=train/part-00000-", 0), 0u) << train->path;
  EXPECT_NE(train->path.find(".zstd.parquet"), std::string::npos);
  auto stats = nlohmann::json::parse(*train->stats);
  EXPECT_EQ(stats["numRecords"], 20);
  EXPECT_EQ(stats["minValues"]["id"], 0);
  EXPECT_EQ(stats["maxValues"]["id"], 19);
  EXPECT_EQ(stats["maxValues"]["day"], "2022-01-27");  // day 19000 + 19
  EXPECT_EQ(stats["nullCount"]["name"], 4);
  EXPECT_FALSE(stats["minValues"].contains("split"));
  // The data file is zstd-compressed Parquet without the partition column.
  auto pf = parquet::ParquetFile::Open(LocalFileSystem(), s.DataFilePath(*train));
  EXPECT_EQ(pf->metadata().row_groups[0].columns[0].codec, parquet::Codec::kZstd);
  EXPECT_FALSE(pf->schema().FindColumn("split").has_value());

  TableScan scan(table, s);
  std::vector<Value> rows = scan.ReadAll();
  ASSERT_EQ(rows.size(), 25u);
  std::sort(rows.begin(), rows.end(),
            [](const Value& a, const Value& b) { return a.Field("id")->as_int() < b.Field("id")->as_int(); });
  EXPECT_EQ(rows[3], TestRow(3, "train"));
  EXPECT_EQ(rows[20], TestRow(100, "test"));
  EXPECT_TRUE(rows[5].Field("name")->is_null());
}

TEST_F(DeltaWriterTest, PartitionAndStatisticsPruning) {
  DeltaTable table = Create();
  WriteOptions opts;
  opts.max_rows_per_file = 10;
  AppendRows(table, Rows(0, 30, "train"), opts);  // files with ids [0,10), [10,20), [20,30)
  AppendRows(table, Rows(30, 35, "test"), opts);
  Snapshot s = table.Latest();
  ASSERT_EQ(s.files.size(), 4u);
  auto kept = [&](const char* filter) { return PruneFiles(s, Filter::Parse(filter)).size(); };
  EXPECT_EQ(kept("split = 'test'"), 1u);
  EXPECT_EQ(kept("id >= 25"), 2u);
  EXPECT_EQ(kept("id < 10"), 1u);
  EXPECT_EQ(kept("id = 15 and split = 'train'"), 1u);
  EXPECT_EQ(kept("id < 5 or split = 'test'"), 2u);
  EXPECT_EQ(kept("id in (3, 33)"), 2u);
  EXPECT_EQ(kept("score > 100.0"), 0u);
  EXPECT_EQ(kept("day <= 19000"), 1u);
  EXPECT_EQ(kept("day <= '2022-01-08'"), 1u);  // day 19000
  EXPECT_EQ(kept("split is null"), 0u);
  EXPECT_THROW_WITH(kept("id = 'x'"), InvalidArgument, "column 'id'", "expected a number");
  EXPECT_THROW_WITH(kept("nope = 1"), InvalidArgument, "unknown column 'nope'");
  ScanOptions scan_opts;
  scan_opts.filter = Filter::Parse("id >= 25 and split = 'train'");
  scan_opts.columns = {"id"};
  TableScan scan(table, s, scan_opts);
  EXPECT_EQ(scan.files().size(), 1u);
  EXPECT_EQ(Ids(scan.ReadAll()), Range(25, 30));
  EXPECT_THROW_WITH(TableScan(table, s, ScanOptions{{"nope"}, {}}), InvalidArgument, "unknown column 'nope'");
}

TEST_F(DeltaWriterTest, RetriedTxnIsANoOp) {
  DeltaTable table = Create();
  WriteOptions opts;
  opts.commit.txn = Txn{"ingest-job", 7, std::nullopt};
  CommitResult first = AppendRows(table, Rows(0, 3, "train"), opts);
  EXPECT_FALSE(first.skipped);
  CommitResult again = AppendRows(table, Rows(0, 3, "train"), opts);
  EXPECT_TRUE(again.skipped);
  EXPECT_EQ(again.version, first.version);
  EXPECT_EQ(table.LatestVersion(), first.version);
  // A lower version of the same app is also already covered; a higher one commits.
  ActionSet none;
  CommitOptions copts;
  copts.txn = Txn{"ingest-job", 6, std::nullopt};
  EXPECT_TRUE(Commit(table, none, copts).skipped);
  copts.txn = Txn{"ingest-job", 8, std::nullopt};
  EXPECT_EQ(Commit(table, none, copts).version, first.version + 1);
  EXPECT_EQ(table.Latest().TxnVersion("ingest-job"), 8);
  EXPECT_EQ(TableScan(table, table.Latest()).ReadAll().size(), 3u);
  auto history = table.History();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].commit_info->operation, "CREATE TABLE");
  EXPECT_EQ(history[1].commit_info->operation, "WRITE");
  EXPECT_NE(history[1].commit_info->json.find("\"txnId\":\"ingest-job:7\""), std::string::npos);
}

TEST_F(DeltaWriterTest, InCommitTimestampsIncreaseAndDriveTimeTravel) {
  CreateTableOptions options;
  options.protocol.min_writer_version = 7;
  options.protocol.writer_features = std::vector<std::string>{"inCommitTimestamp"};
  options.configuration = {{"delta.enableInCommitTimestamps", "true"}};
  DeltaTable table = Create(options);
  for (int i = 0; i < 3; ++i) AppendRows(table, Rows(i, i + 1, "train"), {});
  auto history = table.History();
  ASSERT_EQ(history.size(), 4u);
  for (size_t i = 0; i < history.size(); ++i) {
    ASSERT_TRUE(history[i].commit_info && history[i].commit_info->in_commit_timestamp) << i;
    EXPECT_EQ(history[i].timestamp_ms, *history[i].commit_info->in_commit_timestamp);
    if (i > 0) {
      EXPECT_GT(history[i].timestamp_ms, history[i - 1].timestamp_ms);
    }
    // commitInfo is the first action of every commit.
    const std::string text = LocalFileSystem().ReadFile(dir_.Join("_delta_log/" + CommitFileName(history[i].version)));
    EXPECT_EQ(text.rfind("{\"commitInfo\"", 0), 0u);
  }
  EXPECT_EQ(table.AtTimestamp(history[2].timestamp_ms).version, 2);
  EXPECT_EQ(table.AtTimestamp(history[2].timestamp_ms).files.size(), 2u);
}

TEST_F(DeltaWriterTest, CreatingAnExistingTableFails) {
  Create();
  EXPECT_THROW_WITH(Create(), InvalidArgument, "already exists");
  CreateTableOptions bad;
  bad.partition_columns = {"missing"};
  lakerun::testing::TempDir other;
  EXPECT_THROW_WITH(CreateTable(other.path(), TestSchema(), bad), InvalidArgument, "'missing'");
}

TEST_F(DeltaWriterTest, DeletionVectorsHideRowsInlineAndOnDisk) {
  CreateTableOptions options;
  options.partition_columns = {"split"};
  options.protocol.min_reader_version = 3;
  options.protocol.min_writer_version = 7;
  options.protocol.reader_features = std::vector<std::string>{"deletionVectors"};
  options.protocol.writer_features = std::vector<std::string>{"deletionVectors"};
  DeltaTable table = Create(options);
  AppendRows(table, Rows(0, 10, "train"), {});
  Snapshot s1 = table.Latest();
  ASSERT_EQ(s1.files.size(), 1u);
  // DELETE rows 1 and 3 with an inline DV: remove the file, add it back with the DV.
  AddFile with_dv = s1.files[0];
  with_dv.deletion_vector = InlineDeletionVector({1, 3});
  ActionSet del;
  del.removes.push_back(RemoveOf(s1.files[0], 1));
  del.adds.push_back(with_dv);
  Commit(table, del, {});
  EXPECT_EQ(Ids(TableScan(table, table.Latest()).ReadAll()), (std::vector<int64_t>{0, 2, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(table.Latest().NumRecords(), 8);
  // Then rows 1, 3 and 9 with a DV file.
  AddFile with_file_dv = s1.files[0];
  with_file_dv.deletion_vector = WriteDeletionVectorFile(LocalFileSystem(), dir_.path(), {1, 3, 9}, "ab");
  ActionSet del2;
  del2.removes.push_back(RemoveOf(with_dv, 2));
  del2.adds.push_back(with_file_dv);
  Commit(table, del2, {});
  Snapshot s3 = table.Latest();
  ASSERT_EQ(s3.files.size(), 1u);
  TableScan scan(table, s3);
  auto batch = scan.Next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->deleted, 3);
  EXPECT_EQ(batch->rows_in_file, 10);
  EXPECT_EQ(Ids(batch->rows), (std::vector<int64_t>{0, 2, 4, 5, 6, 7, 8}));
  // The bulk plan carries the same information for ColumnData readers.
  ScanOptions plan_opts;
  plan_opts.columns = {"id", "split"};
  std::vector<FileScanTask> tasks = PlanScan(table, s3, plan_opts);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].deleted_rows, (std::vector<uint64_t>{1, 3, 9}));
  ASSERT_EQ(tasks[0].columns.size(), 2u);
  EXPECT_EQ(tasks[0].columns[0].second, "id");
  EXPECT_FALSE(tasks[0].columns[1].second.has_value());
  EXPECT_EQ(tasks[0].partition_values.at("split"), Value::String("train"));
  // Time travel still sees the older DV.
  EXPECT_EQ(TableScan(table, table.AtVersion(2)).ReadAll().size(), 8u);
  // A corrupt DV file is reported with the table version and both files.
  FaultInjectingFileSystem faulty(LocalFileSystem());
  faulty.CorruptByte(".bin", 12);
  DeltaTable faulty_table(dir_.path(), faulty);
  EXPECT_THROW_WITH(TableScan(faulty_table, s3).ReadAll(), CorruptDataError, "version 3", "checksum mismatch",
                    ".parquet", "deletion_vector_");
}

TEST_F(DeltaWriterTest, ColumnsAddedLaterReadAsNullInOlderFiles) {
  DeltaTable table = Create();
  AppendRows(table, Rows(0, 4, "train"), {});
  // Schema evolution: add a nullable column with a new metaData action.
  Snapshot s = table.Latest();
  Metadata m = s.metadata;
  auto evolved = std::make_shared<DataType>(*m.schema);
  StructField extra;
  extra.name = "extra";
  extra.type = PrimitiveType("integer");
  evolved->fields.push_back(extra);
  m.schema = evolved;
  m.schema_string = SchemaToJson(*evolved);
  ActionSet change;
  change.metadata = m;
  Commit(table, change, {});
  std::vector<Value> more;
  for (int i = 10; i < 12; ++i) {
    Value row = TestRow(i, "train");
    auto fields = std::vector<std::pair<std::string, Value>>{};
    for (size_t k = 0; k < row.children().size(); ++k) fields.emplace_back(row.field_names()[k], row.children()[k]);
    fields.emplace_back("extra", Value::Int(i * 100));
    more.push_back(Value::Struct(fields));
  }
  AppendRows(table, more, {});
  ScanOptions opts;
  opts.columns = {"id", "extra"};
  std::vector<Value> rows = TableScan(table, table.Latest(), opts).ReadAll();
  ASSERT_EQ(rows.size(), 6u);
  int nulls = 0, hundreds = 0;
  for (const auto& r : rows) {
    if (r.Field("extra")->is_null()) {
      ++nulls;
    } else {
      EXPECT_EQ(r.Field("extra")->as_int(), r.Field("id")->as_int() * 100);
      ++hundreds;
    }
  }
  EXPECT_EQ(nulls, 4);
  EXPECT_EQ(hundreds, 2);
}

TEST_F(DeltaWriterTest, CrashBeforeCommitLeavesTheLastVersionReadable) {
  DeltaTable table = Create();
  AppendRows(table, Rows(0, 5, "train"), {});
  FaultInjectingFileSystem faulty(LocalFileSystem());
  faulty.CrashWritesAfter(200);  // dies while writing the data file
  DeltaTable crashing(dir_.path(), faulty);
  EXPECT_THROW(AppendRows(crashing, Rows(5, 500, "train"), {}), InjectedCrash);
  faulty.Reset();
  Snapshot s = table.Latest();
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(Ids(TableScan(table, s).ReadAll()), Range(0, 5));
  // Data written but the commit crashed: same result.
  ActionSet actions;
  actions.adds = WriteDataFiles(table, s, Rows(5, 8, "train"));
  faulty.CrashWritesAfter(0);
  EXPECT_THROW(Commit(crashing, actions, {}), InjectedCrash);
  faulty.Reset();
  EXPECT_EQ(table.Latest().version, 1);
  EXPECT_EQ(Ids(TableScan(table, table.Latest()).ReadAll()), Range(0, 5));
  // The next commit of the same files succeeds.
  EXPECT_EQ(Commit(table, actions, {}).version, 2);
  EXPECT_EQ(Ids(TableScan(table, table.Latest()).ReadAll()), Range(0, 8));
}

TEST_F(DeltaWriterTest, MissingDataFileNamesVersionAndFile) {
  DeltaTable table = Create();
  AppendRows(table, Rows(0, 5, "train"), {});
  Snapshot s = table.Latest();
  const std::string path = s.DataFilePath(s.files[0]);
  LocalFileSystem().Remove(path);
  EXPECT_THROW_WITH(TableScan(table, s).ReadAll(), IoError, "version 1", path);
}

TEST_F(DeltaWriterTest, UnsupportedWriterFeaturesAreRefused) {
  CreateTableOptions options;
  options.protocol.min_writer_version = 7;
  options.protocol.writer_features = std::vector<std::string>{"rowTracking"};
  DeltaTable table = Create(options);
  EXPECT_THROW_WITH(AppendRows(table, Rows(0, 1, "train"), {}), NotImplemented, "'rowTracking'");
  lakerun::testing::TempDir other;
  CreateTableOptions appendonly;
  appendonly.configuration = {{"delta.appendOnly", "true"}};
  DeltaTable t2 = CreateTable(other.path(), TestSchema(), appendonly);
  AppendRows(t2, Rows(0, 1, "x"), {});
  ActionSet del;
  del.removes.push_back(RemoveOf(t2.Latest().files[0], 1));
  EXPECT_THROW_WITH(Commit(t2, del, {}), NotImplemented, "append-only");
}

}  // namespace
}  // namespace lakerun::delta
