// Nullable columns, variable-length lists and raw bytes through the Loader: from memory and from Parquet files.
#include "lakerun/data/column_policy.h"

#include <ATen/ATen.h>

#include <cstring>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

// One epoch, unshuffled, one batch of every row, decoded on `threads` threads.
Batch OneBatch(const std::shared_ptr<RowSource>& source, LoaderOptions o, size_t threads = 0) {
  o.batch_size = static_cast<int64_t>(source->num_rows());
  o.shuffle.enabled = false;
  o.num_threads = threads;
  Loader loader(source, o);
  std::optional<Batch> batch = loader.Next();
  EXPECT_TRUE(batch.has_value());
  EXPECT_FALSE(loader.Next().has_value());
  return batch ? std::move(*batch) : Batch{};
}

std::vector<uint8_t> Int64Bytes(const std::vector<int64_t>& v) {
  std::vector<uint8_t> out(v.size() * 8);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// id 0..5; "age" int64 with rows 1 and 4 null; "tokens" lists of lengths 0..5 (element k of row i = 10 i + k).
std::shared_ptr<RowSource> MemoryTable(uint64_t unit_rows) {
  MemoryRowSource::Column id{{"id", ElementType::kInt64, {}}, Int64Bytes({0, 1, 2, 3, 4, 5}), {}};
  MemoryRowSource::Column age{{"age", ElementType::kInt64, {}, /*nullable=*/true}, Int64Bytes({30, 0, 32, 33, 0, 35}),
                              {}, {1, 0, 1, 1, 0, 1}};
  std::vector<int64_t> elements, offsets{0};
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t k = 0; k < i; ++k) elements.push_back(10 * i + k);
    offsets.push_back(static_cast<int64_t>(elements.size()));
  }
  MemoryRowSource::Column tokens{{"tokens", ElementType::kInt64, {3}, false, /*is_list=*/true},
                                 Int64Bytes(elements), offsets};
  return std::make_shared<MemoryRowSource>(std::vector<MemoryRowSource::Column>{id, age, tokens}, unit_rows, "mem");
}

TEST(ColumnPolicyTest, NullWithoutPolicyNamesColumnUnitAndRow) {
  LoaderOptions o;
  o.lists["tokens"] = {};
  EXPECT_THROW_WITH(OneBatch(MemoryTable(4), o), InvalidArgument, "column 'age'", "mem unit 0", "table row 1",
                    "is null", "LoaderOptions::nulls[\"age\"]");
}

TEST(ColumnPolicyTest, NullsBecomeTheFillValueWithAValidMask) {
  for (uint64_t unit_rows : {1, 4, 6}) {
    for (size_t threads : {0, 2}) {
      LoaderOptions o;
      o.lists["tokens"] = {};
      o.nulls["age"].fill_value = -1;
      const Batch b = OneBatch(MemoryTable(unit_rows), o, threads);
      EXPECT_TRUE(at::equal(b.at("age"), at::tensor(std::vector<int64_t>{30, -1, 32, 33, -1, 35})));
      EXPECT_TRUE(at::equal(b.at("age.valid"), at::tensor(std::vector<uint8_t>{1, 0, 1, 1, 0, 1}).to(at::kBool)));
      o.nulls["age"].emit_mask = false;
      EXPECT_EQ(OneBatch(MemoryTable(unit_rows), o, threads).tensors.count("age.valid"), 0u);
    }
  }
}

TEST(ColumnPolicyTest, VariableLengthListsArePaddedWithLengths) {
  LoaderOptions o;
  o.nulls["age"] = {};
  o.lists["tokens"].pad_value = -7;
  const Batch b = OneBatch(MemoryTable(4), o);
  const at::Tensor t = b.at("tokens");
  ASSERT_EQ(t.sizes(), (at::IntArrayRef{6, 5}));
  EXPECT_TRUE(at::equal(b.at("tokens.lengths"), at::arange(6, at::kLong)));
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(t[i][k].item<int64_t>(), k < i ? 10 * i + k : -7);
  }
}

TEST(ColumnPolicyTest, FixedLengthListsRefuseOtherLengthsUnlessPaddedOrTruncated) {
  LoaderOptions o;
  o.nulls["age"] = {};
  // No list policy: the column's fixed length (3) is required.
  EXPECT_THROW_WITH(OneBatch(MemoryTable(6), o), InvalidArgument, "column 'tokens'", "table row 0",
                    "list of 0 elements", "fixed length is 3", "LoaderOptions::lists[\"tokens\"]");
  o.lists["tokens"].pad_to = 4;
  EXPECT_THROW_WITH(OneBatch(MemoryTable(6), o), InvalidArgument, "column 'tokens'", "table row 5",
                    "list of 5 elements", "pad_to 4");
  o.lists["tokens"].truncate = true;
  const Batch b = OneBatch(MemoryTable(6), o);
  ASSERT_EQ(b.at("tokens").sizes(), (at::IntArrayRef{6, 4}));
  EXPECT_EQ(b.at("tokens.lengths")[5].item<int64_t>(), 4);
  EXPECT_EQ(b.at("tokens")[5][3].item<int64_t>(), 53);
  EXPECT_EQ(b.at("tokens")[2][2].item<int64_t>(), 0);
}

TEST(ColumnPolicyTest, BinaryColumnsAreRawBytesOrRefused) {
  const std::vector<std::string> words = {"a", "", "three", "xy"};
  MemoryRowSource::Column text{{"text", ElementType::kBinary, {}}, {}, {0}};
  for (const std::string& w : words) {
    text.bytes.insert(text.bytes.end(), w.begin(), w.end());
    text.offsets.push_back(static_cast<int64_t>(text.bytes.size()));
  }
  text.validity = {1, 1, 1, 0};
  auto source = std::make_shared<MemoryRowSource>(std::vector<MemoryRowSource::Column>{text}, 3, "words");
  LoaderOptions o;
  EXPECT_THROW_WITH(Loader(source, o), NotImplemented, "column 'text'", "LoaderOptions::raw_bytes");
  o.raw_bytes = {"text"};
  EXPECT_THROW_WITH(OneBatch(source, o), InvalidArgument, "column 'text'", "table row 3", "is null");
  o.nulls["text"] = {};
  const Batch b = OneBatch(source, o, 2);
  EXPECT_TRUE(at::equal(b.at("text.offsets"), at::tensor(std::vector<int64_t>{0, 1, 1, 6, 6})));
  EXPECT_EQ(b.bytes("text", 0), "a");
  EXPECT_EQ(b.bytes("text", 1), "");
  EXPECT_EQ(b.bytes("text", 2), "three");
  EXPECT_EQ(b.bytes("text", 3), "");
  EXPECT_TRUE(at::equal(b.at("text.valid"), at::tensor(std::vector<uint8_t>{1, 1, 1, 0}).to(at::kBool)));
  EXPECT_THROW_WITH(b.bytes("text", 4), InvalidArgument, "out of range");
  EXPECT_THROW_WITH(b.bytes("text.valid", 0), InvalidArgument, "not a raw-bytes column");
}

TEST(ColumnPolicyTest, PoliciesForUnknownOrUnsuitableColumnsAreRejected) {
  LoaderOptions o;
  o.nulls["nope"] = {};
  EXPECT_THROW_WITH(Loader(MemoryTable(4), o), InvalidArgument, "null policies", "'nope'");
  LoaderOptions l;
  l.lists["age"] = {};
  EXPECT_THROW_WITH(Loader(MemoryTable(4), l), InvalidArgument, "list policy", "'age'", "not a list");
  LoaderOptions r;
  r.raw_bytes = {"id"};
  EXPECT_THROW_WITH(Loader(MemoryTable(4), r), InvalidArgument, "'id'", "not binary");
}

// A Parquet file as Spark writes it: every column optional. Rows i = 0..n-1: score = i * 0.5 (null when i % 3 == 1),
// seq = list of i % 4 ints (null list when i % 5 == 4; element k null when k == 2), name = "n<i>" (null when
// i % 7 == 6), dense = i (declared optional, never null).
void WriteNullableFile(const std::string& path, int64_t n, int64_t row_group_rows) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("score", pq::PhysicalType::kDouble, pq::Repetition::kOptional),
       pq::ListOf("seq", pq::Leaf("element", pq::PhysicalType::kInt32, pq::Repetition::kOptional)),
       pq::Leaf("name", pq::PhysicalType::kByteArray, pq::Repetition::kOptional, pq::LogicalType::String()),
       pq::Leaf("dense", pq::PhysicalType::kInt64, pq::Repetition::kOptional)});
  pq::ParquetWriter writer(LocalFileSystem(), path, schema);
  for (int64_t begin = 0; begin < n; begin += row_group_rows) {
    std::vector<pq::Value> rows;
    for (int64_t i = begin; i < std::min(n, begin + row_group_rows); ++i) {
      std::vector<pq::Value> seq;
      for (int64_t k = 0; k < i % 4; ++k) seq.push_back(k == 2 ? pq::Value::Null() : pq::Value::Int(i * 10 + k));
      rows.push_back(pq::Value::Struct(
          {{"score", i % 3 == 1 ? pq::Value::Null() : pq::Value::Double(i * 0.5)},
           {"seq", i % 5 == 4 ? pq::Value::Null() : pq::Value::List(seq)},
           {"name", i % 7 == 6 ? pq::Value::Null() : pq::Value::String("n" + std::to_string(i))},
           {"dense", pq::Value::Int(i)}}));
    }
    writer.WriteRowGroup(pq::ShredRecords(schema, rows));
  }
  writer.Close();
}

TEST(ColumnPolicyTest, ParquetNullsListsAndStringsAsSparkWritesThem) {
  lakerun::testing::TempDir dir;
  const std::string path = dir.path() + "/nullable.parquet";
  const int64_t n = 50;
  WriteNullableFile(path, n, 16);
  auto source = OpenTable(path);
  EXPECT_TRUE(source->columns()[0].nullable);
  EXPECT_TRUE(source->columns()[1].is_list);
  // Optional but never null: no policy needed.
  TableOptions dense_only;
  dense_only.columns = {"dense"};
  EXPECT_TRUE(at::equal(OneBatch(OpenTable(path, dense_only), {}).at("dense"), at::arange(n, at::kLong)));
  // A null without a policy names the column, the file and row group, and the row.
  TableOptions score_only;
  score_only.columns = {"score"};
  EXPECT_THROW_WITH(OneBatch(OpenTable(path, score_only), {}), InvalidArgument, "column 'score'",
                    "nullable.parquet row group 0", "table row 1", "is null");

  for (size_t threads : {0, 2}) {
    LoaderOptions o;
    o.nulls["score"].fill_value = -1;
    o.nulls["seq"].fill_value = -2;
    o.nulls["name"] = {};
    o.lists["seq"].pad_value = -3;
    o.raw_bytes = {"name"};
    const Batch b = OneBatch(source, o, threads);
    ASSERT_EQ(b.at("seq").sizes(), (at::IntArrayRef{n, 3}));
    for (int64_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(b.at("score")[i].item<double>(), i % 3 == 1 ? -1.0 : i * 0.5);
      EXPECT_EQ(b.at("score.valid")[i].item<bool>(), i % 3 != 1);
      const bool null_list = i % 5 == 4;
      EXPECT_EQ(b.at("seq.valid")[i].item<bool>(), !null_list);
      EXPECT_EQ(b.at("seq.lengths")[i].item<int64_t>(), null_list ? 0 : i % 4);
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t expected = null_list || k >= i % 4 ? -3 : k == 2 ? -2 : i * 10 + k;
        EXPECT_EQ(b.at("seq")[i][k].item<int32_t>(), expected);
      }
      EXPECT_EQ(b.bytes("name", i), i % 7 == 6 ? "" : "n" + std::to_string(i));
      EXPECT_EQ(b.at("name.valid")[i].item<bool>(), i % 7 != 6);
      EXPECT_EQ(b.at("dense")[i].item<int64_t>(), i);
    }
  }
}

TEST(ColumnPolicyTest, ParquetRequiredBytesReadAsViewsKeepEveryValue) {
  lakerun::testing::TempDir dir;
  const std::string path = dir.path() + "/bytes.parquet";
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("blob", pq::PhysicalType::kByteArray),
       pq::Leaf("fixed", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 3)});
  // Rows 0-39: distinct fixed values; rows 40-59: only two values, which dictionary-encode, so their views point
  // into the dictionary page rather than lying back to back.
  std::vector<std::string> blobs, fixed;
  for (int i = 0; i < 60; ++i) {
    blobs.push_back(std::string(static_cast<size_t>(i % 5), static_cast<char>('a' + i % 26)));
    const int v = i < 40 ? i : 100 + i % 2;
    fixed.push_back({static_cast<char>(v), static_cast<char>(v + 1), static_cast<char>(v + 2)});
  }
  {
    pq::ParquetWriter writer(LocalFileSystem(), path, schema);
    for (auto [begin, end] : {std::pair{0, 25}, std::pair{25, 40}, std::pair{40, 60}}) {
      writer.WriteRowGroup({pq::ColumnData::ByteArrays({blobs.begin() + begin, blobs.begin() + end}),
                            pq::ColumnData::FixedBytes(pq::PhysicalType::kFixedLenByteArray, 3,
                                                       {fixed.begin() + begin, fixed.begin() + end})});
    }
    writer.Close();
  }
  auto source = OpenTable(path);
  // ReadUnit keeps the contiguous layout; the loader's cache reads views, except for fixed-width values that lie
  // back to back in the decoded pages, which come as contiguous rows.
  EXPECT_EQ(source->ReadUnit(0)->columns[0].views, nullptr);
  UnitReadOptions views;
  views.allow_views = true;
  const auto distinct = source->ReadUnitWith(1, views);
  EXPECT_NE(distinct->columns[0].views, nullptr);
  EXPECT_EQ(distinct->columns[1].views, nullptr);
  ASSERT_NE(distinct->columns[1].data, nullptr);
  EXPECT_EQ(distinct->columns[1].size_bytes, 15u * 3u);
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(distinct->columns[1].data) + 3 * i, 3), fixed[25 + i]) << i;
  }
  const auto repeated = source->ReadUnitWith(2, views);
  ASSERT_NE(repeated->columns[1].views, nullptr);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(repeated->columns[1].views[i], fixed[40 + i]) << i;
  LoaderOptions o;
  o.raw_bytes = {"blob"};
  o.batch_size = 7;
  o.seed = 3;
  Loader loader(source, o);
  int seen = 0;
  while (auto b = loader.Next()) {
    for (int64_t k = 0; k < b->size(); ++k) {
      const int64_t id = b->sample_ids[k].item<int64_t>();
      EXPECT_EQ(b->bytes("blob", k), blobs[id]);
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(b->at("fixed")[k][j].item<uint8_t>(), static_cast<uint8_t>(fixed[id][j])) << id;
      }
      ++seen;
    }
  }
  EXPECT_EQ(seen, 60);
}

}  // namespace
}  // namespace lakerun::data
