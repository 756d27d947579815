// Filters through OpenTable: files, row groups and rows pruned at three levels, the rows left equal to a brute-force
// evaluation of the same filter, and every rank still given the same number of samples.
#include <ATen/ATen.h>
#include <gmock/gmock.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

// Row i: id = i, score = i * 0.5 (null every 7th row), name = "n<i % 10>", part = i / 100 (Delta partition).
pq::Value Row(int64_t i, bool with_part) {
  std::vector<std::pair<std::string, pq::Value>> fields = {
      {"id", pq::Value::Int(i)},
      {"score", i % 7 == 0 ? pq::Value::Null() : pq::Value::Double(static_cast<double>(i) * 0.5)},
      {"name", pq::Value::String("n" + std::to_string(i % 10))}};
  if (with_part) fields.emplace_back("part", pq::Value::Int(i / 100));
  return pq::Value::Struct(std::move(fields));
}

const int64_t kRows = 400;

// The ids of the rows of Row(0..kRows) that satisfy `filter`, by Filter's row evaluator.
std::set<int64_t> BruteForce(const Filter& filter) {
  std::set<int64_t> ids;
  for (int64_t i = 0; i < kRows; ++i) {
    const pq::Value row = Row(i, true);
    if (format::Matches(filter, [&](const std::string& c) { return *row.Field(c); })) ids.insert(i);
  }
  return ids;
}

// Every id the source yields through the loader on `world` ranks (which must all take the same number of steps).
std::multiset<int64_t> LoadIds(const std::shared_ptr<RowSource>& source, int64_t world) {
  std::multiset<int64_t> ids;
  std::set<int64_t> steps;
  for (int64_t rank = 0; rank < world; ++rank) {
    LoaderOptions o;
    o.batch_size = 5;
    o.rank = rank;
    o.world_size = world;
    o.remainder = RemainderPolicy::kPad;
    o.nulls["score"] = {};
    o.raw_bytes = {"name"};
    Loader loader(source, o);
    int64_t n = 0;
    while (auto b = loader.Next()) {
      const at::Tensor id = b->at("id");
      for (int64_t k = 0; k < id.size(0); ++k) ids.insert(id[k].item<int64_t>());
      ++n;
    }
    steps.insert(n);
  }
  EXPECT_EQ(steps.size(), 1u) << "ranks took different numbers of steps";
  return ids;
}

const char* kFilters[] = {
    "id >= 45 and id < 70",
    "id < 10 or id >= 390",
    "score > 150.0",
    "score is null",
    "score is not null and id < 30",
    "name in ('n3', 'n7') and id > 300",
    "not (name = 'n1' or id < 350)",
    "id = 123",
    "id > 1000",
    "part = 2 and name != 'n0'",
    "part >= 3 or score <= 2.0",
};

TEST(TableFilterTest, ParquetRowsEqualABruteForceFilterAtEveryLevel) {
  testing::TempDir dir;
  const pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("id", pq::PhysicalType::kInt64),
       pq::Leaf("score", pq::PhysicalType::kDouble, pq::Repetition::kOptional),
       pq::Leaf("name", pq::PhysicalType::kByteArray, pq::Repetition::kRequired, pq::LogicalType::String()),
       pq::Leaf("part", pq::PhysicalType::kInt64)});
  // Two files of 200 rows, row groups of 50 rows.
  LocalFileSystem().CreateDirs(dir.Join("t"));
  for (int f = 0; f < 2; ++f) {
    pq::WriterOptions options;
    options.row_group_rows = 50;
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("t/part-" + std::to_string(f) + ".parquet"), schema,
                             options);
    std::vector<pq::Value> rows;
    for (int64_t i = f * 200; i < (f + 1) * 200; ++i) rows.push_back(Row(i, true));
    writer.WriteRows(rows);
    writer.Close();
  }
  for (const char* text : kFilters) {
    TableOptions t;
    t.filter = Filter::Parse(text);
    const std::set<int64_t> want = BruteForce(t.filter);
    auto source = OpenTable(dir.Join("t"), t);
    EXPECT_EQ(source->num_rows(), want.size()) << text;
    const std::multiset<int64_t> got = LoadIds(source, 3);
    EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()), want) << text;
    // Units cut into slices of rows filter the same rows.
    t.unit_bytes = 256;
    auto sliced = OpenTable(dir.Join("t"), t);
    EXPECT_GE(sliced->num_units(), source->num_units()) << text;
    EXPECT_EQ(sliced->num_rows(), want.size()) << text;
  }
  // Row groups the statistics rule out are not units at all.
  TableOptions t;
  t.filter = Filter::Parse("id >= 45 and id < 70");
  EXPECT_EQ(OpenTable(dir.Join("t"), t)->num_units(), 2u);  // row groups 0-49 and 50-99 of the first file
  t.filter = Filter::Parse("id >= 45 and id < 70 and name = 'zz'");
  EXPECT_EQ(OpenTable(dir.Join("t"), t)->num_rows(), 0u);
  t.filter = Filter::Parse("score = 'x'");
  EXPECT_THROW_WITH(OpenTable(dir.Join("t"), t), InvalidArgument, "filter on column 'score'");
  t.filter = Filter::Parse("nope = 1");
  EXPECT_THROW_WITH(OpenTable(dir.Join("t"), t), InvalidArgument, "no column 'nope'");
}

TEST(TableFilterTest, DeltaFilesAreDroppedByPartitionValuesAndStatsThenRowsFiltered) {
  testing::TempDir dir;
  const std::string root = dir.Join("delta");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false},
                                   delta::StructField{"score", delta::PrimitiveType("double"), true},
                                   delta::StructField{"name", delta::PrimitiveType("string"), false},
                                   delta::StructField{"part", delta::PrimitiveType("long"), false}});
  delta::CreateTableOptions create;
  create.partition_columns = {"part"};
  delta::DeltaTable table = delta::CreateTable(root, schema, create);
  delta::WriteOptions write;
  write.max_rows_per_file = 50;
  write.parquet.row_group_rows = 25;
  std::vector<pq::Value> rows;
  for (int64_t i = 0; i < kRows; ++i) rows.push_back(Row(i, true));
  delta::AppendRows(table, rows, write);
  for (const char* text : kFilters) {
    TableOptions t;
    t.filter = Filter::Parse(text);
    const std::set<int64_t> want = BruteForce(t.filter);
    auto source = OpenTable(root, t);
    EXPECT_EQ(source->num_rows(), want.size()) << text;
    const std::multiset<int64_t> got = LoadIds(source, 2);
    EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()), want) << text;
  }
  // Stats drop files: "id = 123" keeps one file of eight (and one row group of its two).
  TableOptions t;
  t.filter = Filter::Parse("id = 123");
  EXPECT_EQ(OpenTable(root, t)->num_units(), 1u);
  // drop_null_rows is "score IS NOT NULL", counted before sharding.
  t.filter = Filter();
  t.drop_null_rows = {"score"};
  EXPECT_EQ(OpenTable(root, t)->num_rows(), BruteForce(Filter::Parse("score is not null")).size());
  t.drop_null_rows.clear();
  t.filter = Filter::Parse("name = 3");
  EXPECT_THROW_WITH(OpenTable(root, t), InvalidArgument, "column 'name'", "expected a string");
}

TEST(TableFilterTest, PagesThePageIndexKeepsAreFilteredExactly) {
  testing::TempDir dir;
  // One row group of 20,000 rows in pages of about 512 rows: id ascending, noise not. The page index narrows the
  // rows whose filter columns are decoded (measured in bench/data/table_filter_bench.cc); the rows kept stay exact.
  const std::string path = dir.Join("pages.parquet");
  pq::WriterOptions options;
  options.page_bytes = 4096;
  options.dictionary = false;
  pq::ParquetWriter writer(LocalFileSystem(), path,
                           pq::Schema::FromFields({pq::Leaf("id", pq::PhysicalType::kInt64),
                                                   pq::Leaf("noise", pq::PhysicalType::kInt64)}),
                           options);
  std::vector<pq::Value> rows;
  for (int64_t i = 0; i < 20000; ++i) {
    rows.push_back(pq::Value::Struct({{"id", pq::Value::Int(i)}, {"noise", pq::Value::Int((i * 7919) % 1000)}}));
  }
  writer.WriteRows(rows);
  writer.Close();
  TableOptions t;
  t.filter = Filter::Parse("id >= 12000 and id < 12100 and noise < 500");
  auto source = OpenTable(path, t);
  std::set<int64_t> want;
  for (int64_t i = 12000; i < 12100; ++i) {
    if ((i * 7919) % 1000 < 500) want.insert(i);
  }
  EXPECT_EQ(source->num_rows(), want.size());
  std::set<int64_t> got;
  LoaderOptions o;
  o.batch_size = 7;
  Loader loader(source, o);
  while (auto b = loader.Next()) {
    for (int64_t k = 0; k < b->at("id").size(0); ++k) got.insert(b->at("id")[k].item<int64_t>());
  }
  EXPECT_EQ(got, want);
  // Ranges of pages at both ends and in the middle; no page can match; a column without order (every page kept).
  t.filter = Filter::Parse("id < 700 or (id >= 9000 and id < 9003) or id >= 19990");
  EXPECT_EQ(OpenTable(path, t)->num_rows(), 713u);
  t.filter = Filter::Parse("id > 20000 or id < 0");
  EXPECT_EQ(OpenTable(path, t)->num_rows(), 0u);
  EXPECT_EQ(OpenTable(path, t)->num_units(), 0u);
  t.filter = Filter::Parse("noise = 7");
  EXPECT_EQ(OpenTable(path, t)->num_rows(), 20u);
}

}  // namespace
}  // namespace lakerun::data
