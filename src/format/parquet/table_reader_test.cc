// TableReader: projection, row-group pruning from statistics, parallel decode.
#include "format/parquet/parquet_test_util.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun/base/thread_pool.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

// 5 row groups of 100 rows: id 0..499 (sorted), name "n<id>", score nullable (null in row group 2 only).
MemFile SortedFile() {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      Leaf("name", PhysicalType::kByteArray, Repetition::kRequired,
                                           LogicalType::String()),
                                      Leaf("score", PhysicalType::kDouble, Repetition::kOptional)});
  std::vector<Value> rows;
  for (int i = 0; i < 500; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%03d", i);
    rows.push_back(Value::Struct({{"id", Value::Int(i)},
                                  {"name", Value::String(name)},
                                  {"score", i / 100 == 2 ? Value::Null() : Value::Double(i * 0.25)}}));
  }
  WriterOptions o;
  o.row_group_rows = 100;
  MemFile f;
  f.WriteRows(schema, rows, o);
  return f;
}

std::vector<int> Surviving(const ParquetFile& f, const std::string& filter) {
  TableReadOptions o;
  o.filter = filter.empty() ? Filter() : Filter::Parse(filter);
  return TableReader(f, o).row_groups();
}

TEST(TableReaderTest, PrunesRowGroupsFromStatistics) {
  MemFile m = SortedFile();
  auto f = m.Open();
  EXPECT_EQ(Surviving(*f, ""), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Surviving(*f, "id >= 350"), (std::vector<int>{3, 4}));
  EXPECT_EQ(Surviving(*f, "id = 120"), (std::vector<int>{1}));
  EXPECT_EQ(Surviving(*f, "id < 100"), (std::vector<int>{0}));
  EXPECT_EQ(Surviving(*f, "id <= 100"), (std::vector<int>{0, 1}));
  EXPECT_EQ(Surviving(*f, "id > 499"), (std::vector<int>{}));
  EXPECT_EQ(Surviving(*f, "name = 'n250'"), (std::vector<int>{2}));
  EXPECT_EQ(Surviving(*f, "score is null"), (std::vector<int>{2}));
  EXPECT_EQ(Surviving(*f, "score is not null"), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(Surviving(*f, "score >= 100.0"), (std::vector<int>{4}));
  EXPECT_EQ(Surviving(*f, "id >= 150 and id < 250"), (std::vector<int>{1, 2}));
  EXPECT_EQ(Surviving(*f, "id < 50 or id >= 450"), (std::vector<int>{0, 4}));
  EXPECT_EQ(Surviving(*f, "id in (5, 305)"), (std::vector<int>{0, 3}));
  EXPECT_EQ(Surviving(*f, "not (id >= 100)"), (std::vector<int>{0}));
  TableReadOptions bad;
  bad.filter = Filter::Parse("nope = 1");
  EXPECT_THROW_WITH(TableReader(*f, bad), InvalidArgument, "'nope'");
  bad.filter = Filter::Parse("id = 'x'");
  EXPECT_THROW_WITH(TableReader(*f, bad), InvalidArgument, "filter on column 'id'");
}

TEST(TableReaderTest, ReadsPrunedRowsOnly) {
  MemFile m = SortedFile();
  auto f = m.Open();
  TableReadOptions o;
  o.columns = {"id"};
  o.filter = Filter::Parse("id >= 420");
  TableReader r(*f, o);
  auto rows = r.ReadRows(1000);
  ASSERT_EQ(rows.size(), 100u);  // the whole surviving row group; rows themselves are not filtered
  EXPECT_EQ(rows.front().ToString(), "{\"id\": 400}");
}

TEST(TableReaderTest, ReadRowsInPiecesSmallerThanARowGroupLosesNoRow) {
  MemFile m = SortedFile();
  auto f = m.Open();
  TableReadOptions o;
  o.columns = {"id"};
  TableReader r(*f, o);
  std::vector<int64_t> ids;
  while (true) {
    std::vector<Value> rows = r.ReadRows(37);  // row groups hold 100 rows
    if (rows.empty()) break;
    for (const Value& row : rows) ids.push_back(row.Field("id")->as_int());
  }
  ASSERT_EQ(ids.size(), 500u);
  for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(ids[static_cast<size_t>(i)], i);
}

TEST(TableReaderTest, ParallelDecodeMatchesSerial) {
  MemFile m = SortedFile();
  auto f = m.Open();
  ThreadPool pool(2, "decode");
  TableReader parallel(*f, {}, &pool);
  TableReader serial(*f, {});
  int groups = 0;
  while (auto a = parallel.Next()) {
    auto b = serial.Next();
    ASSERT_TRUE(b.has_value());
    ASSERT_EQ(a->data.size(), 3u);
    for (size_t i = 0; i < a->data.size(); ++i) EXPECT_TRUE(testing::SameColumn(a->data[i], b->data[i]));
    ++groups;
  }
  EXPECT_EQ(groups, 5);
  EXPECT_FALSE(serial.Next().has_value());
}

TEST(TableReaderTest, ErrorsFromPoolThreadsReachTheCaller) {
  MemFile m = SortedFile();
  auto clean = m.Open();
  FaultInjectingFileSystem faulty(*m.fs);
  faulty.CorruptByte("data.parquet", static_cast<uint64_t>(clean->metadata().row_groups[3].columns[1].start_offset()));
  auto f = ParquetFile::Open(faulty, m.path);
  ThreadPool pool(2, "decode");
  TableReader r(*f, {}, &pool);
  EXPECT_NO_THROW(r.ReadRowGroup(2));
  EXPECT_THROW_WITH(r.ReadRowGroup(3), CorruptDataError, "row group 3", "column 'name'");
}

TEST(TableReaderTest, UnknownColumnsAndRowGroupsAreRejected) {
  MemFile m = SortedFile();
  auto f = m.Open();
  TableReadOptions o;
  o.columns = {"missing"};
  EXPECT_THROW_WITH(TableReader(*f, o), InvalidArgument, "no column 'missing'");
  TableReadOptions g;
  g.row_groups = {7};
  EXPECT_THROW_WITH(TableReader(*f, g), InvalidArgument, "row group 7 out of range");
  EXPECT_THROW_WITH(f->ReadColumnChunk(0, 9), InvalidArgument, "column 9 out of range");
}

}  // namespace
}  // namespace lakerun::parquet
