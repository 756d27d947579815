// ReadLeadingRows and SelectColumns: the first rows of a file, reading only the pages they need.
#include "format/parquet/parquet_test_util.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

// One row group of 200k rows in small pages: id, a dictionary-encoded string, a nullable double.
MemFile OneLargeRowGroup(Codec codec) {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      Leaf("name", PhysicalType::kByteArray, Repetition::kRequired,
                                           LogicalType::String()),
                                      Leaf("score", PhysicalType::kDouble, Repetition::kOptional)});
  std::vector<Value> rows;
  for (int i = 0; i < 200000; ++i) {
    rows.push_back(Value::Struct({{"id", Value::Int(i * 7)},
                                  {"name", Value::String("name" + std::to_string(i % 50))},
                                  {"score", i % 3 ? Value::Double(i * 0.5) : Value::Null()}}));
  }
  WriterOptions o;
  o.codec = codec;
  o.page_bytes = 8 << 10;
  MemFile f;
  f.WriteRows(schema, rows, o);
  return f;
}

std::vector<Value> FirstRows(const MemFile& f, int64_t n, std::vector<std::string> columns = {}) {
  auto file = f.Open();
  TableReadOptions o;
  o.columns = std::move(columns);
  return TableReader(*file, o).ReadRows(n);
}

TEST(LeadingRowsTest, ReadsOnlyThePagesOfTheFirstRows) {
  for (Codec codec : {Codec::kUncompressed, Codec::kSnappy}) {
    MemFile f = OneLargeRowGroup(codec);
    FaultInjectingFileSystem counting(*f.fs);  // counts the bytes read through it
    auto file = ParquetFile::Open(counting, f.path);
    ASSERT_EQ(file->num_row_groups(), 1);
    const uint64_t after_footer = counting.bytes_read();
    const std::vector<Value> rows = ReadLeadingRows(*file, SelectColumns(file->schema(), {}, f.path), 3);
    const uint64_t read = counting.bytes_read() - after_footer;
    EXPECT_EQ(rows, FirstRows(f, 3));
    // A dictionary page and a data page per column, plus their headers: a few tens of KiB of a file of megabytes.
    EXPECT_LT(read, file->file_size() / 20) << "read " << read << " of " << file->file_size() << " bytes";
    EXPECT_GT(file->file_size(), 1000000u);
  }
}

TEST(LeadingRowsTest, MatchesTheTableReaderAcrossRowGroupsAndPages) {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      ListOf("l", Leaf("element", PhysicalType::kInt32, Repetition::kOptional)),
                                      Leaf("s", PhysicalType::kByteArray, Repetition::kOptional,
                                           LogicalType::String())});
  std::vector<Value> rows;
  for (int i = 0; i < 5000; ++i) {
    std::vector<Value> items;
    for (int k = 0; k < i % 4; ++k) items.push_back(k == 1 ? Value::Null() : Value::Int(i + k));
    rows.push_back(Value::Struct({{"id", Value::Int(i)},
                                  {"l", i % 7 == 0 ? Value::Null() : Value::List(std::move(items))},
                                  {"s", i % 5 ? Value::String(std::string(i % 30, 'x')) : Value::Null()}}));
  }
  WriterOptions o;
  o.row_group_rows = 1500;
  o.page_bytes = 1 << 10;
  o.page_version = 2;
  MemFile f;
  f.WriteRows(schema, rows, o);
  auto file = f.Open();
  const ColumnSelection all = SelectColumns(file->schema(), {}, f.path);
  for (int64_t n : {0, 1, 2, 100, 1499, 1500, 1501, 4000, 5000, 9000}) {
    EXPECT_EQ(ReadLeadingRows(*file, all, n), FirstRows(f, n)) << n;
  }
  const ColumnSelection projected = SelectColumns(file->schema(), {"s", "id"}, f.path);
  const std::vector<Value> got = ReadLeadingRows(*file, projected, 2000);
  ASSERT_EQ(got.size(), 2000u);
  EXPECT_EQ(got[1601].field_names(), (std::vector<std::string>{"s", "id"}));
  EXPECT_EQ(*got[1601].Field("id"), Value::Int(1601));
}

TEST(LeadingRowsTest, ATopLevelNameWithADotWinsOverADottedPath) {
  Schema schema = Schema::FromFields({Group("a", {Leaf("b", PhysicalType::kInt32)}),
                                      Leaf("a.b", PhysicalType::kInt32),
                                      Leaf("with space", PhysicalType::kInt32)});
  MemFile f;
  f.WriteRows(schema, {Value::Struct({{"a", Value::Struct({{"b", Value::Int(1)}})},
                                      {"a.b", Value::Int(2)},
                                      {"with space", Value::Int(3)}})});
  auto file = f.Open();
  const ColumnSelection exact = SelectColumns(file->schema(), {"with space", "a.b"}, f.path);
  EXPECT_EQ(exact.fields, (std::vector<int>{2, 1}));
  EXPECT_EQ(exact.columns, (std::vector<int>{1, 2}));
  const std::vector<Value> rows = ReadLeadingRows(*file, exact, 10);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], Value::Struct({{"with space", Value::Int(3)}, {"a.b", Value::Int(2)}}));
  // A path reaches the nested leaf through its group.
  const ColumnSelection nested = SelectColumns(file->schema(), {"a"}, f.path);
  EXPECT_EQ(nested.columns, (std::vector<int>{0}));
  EXPECT_THROW_WITH(SelectColumns(file->schema(), {"a.c"}, f.path), InvalidArgument, f.path, "no column 'a.c'");
}

}  // namespace
}  // namespace lakerun::parquet
