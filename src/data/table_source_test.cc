// OpenTable over real Parquet files and Delta tables written by lakerun's writers, read through the Loader.
#include "lakerun/data/table_source.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>

#include <cstring>
#include <map>
#include <string>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun/data/column_policy.h"
#include "lakerun/data/loader.h"
#include "lakerun/format/delta/actions.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

// Rows [first, first + n): id = i, image = 4 bytes (i, i+1, i+2, i+3), x = [2, 3] floats i + 0.5 k.
void WriteFile(FileSystem& fs, const std::string& path, int64_t first, int64_t n, int64_t row_group_rows) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("id", pq::PhysicalType::kInt64),
       pq::Leaf("image", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 4),
       pq::ListOf("x", pq::Leaf("element", pq::PhysicalType::kFloat), pq::Repetition::kRequired)});
  pq::WriterOptions options;
  options.tensor_shapes["x"] = {2, 3};
  options.tensor_shapes["image"] = {2, 2};
  pq::ParquetWriter writer(fs, path, schema, options);
  for (int64_t begin = first; begin < first + n; begin += row_group_rows) {
    const int64_t end = std::min(first + n, begin + row_group_rows);
    std::vector<int64_t> ids;
    std::vector<std::string> images;
    std::vector<float> xs;
    std::vector<int16_t> reps, defs;
    for (int64_t i = begin; i < end; ++i) {
      ids.push_back(i);
      images.push_back(std::string{static_cast<char>(i), static_cast<char>(i + 1), static_cast<char>(i + 2),
                                   static_cast<char>(i + 3)});
      for (int k = 0; k < 6; ++k) {
        xs.push_back(static_cast<float>(i) + 0.5f * k);
        reps.push_back(k == 0 ? 0 : 1);
        defs.push_back(1);
      }
    }
    pq::ColumnData x = pq::ColumnData::Floats(xs);
    x.set_rep_levels(reps, 1);
    x.set_def_levels(defs, 1);
    writer.WriteRowGroup({pq::ColumnData::Int64s(ids),
                          pq::ColumnData::FixedBytes(pq::PhysicalType::kFixedLenByteArray, 4, images), x});
  }
  writer.Close();
}

std::map<int64_t, int> ReadAll(const std::shared_ptr<RowSource>& source, int64_t world, size_t threads) {
  std::map<int64_t, int> counts;
  for (int64_t rank = 0; rank < world; ++rank) {
    LoaderOptions o;
    o.batch_size = 7;
    o.rank = rank;
    o.world_size = world;
    o.remainder = RemainderPolicy::kDrop;
    o.num_threads = threads;
    Loader loader(source, o);
    while (auto b = loader.Next()) {
      const at::Tensor id = b->at("id");
      EXPECT_TRUE(at::equal(id, b->sample_ids));
      EXPECT_EQ(b->at("x").sizes(), (at::IntArrayRef{b->size(), 2, 3}));
      EXPECT_EQ(b->at("image").sizes(), (at::IntArrayRef{b->size(), 2, 2}));
      EXPECT_EQ(b->at("image").scalar_type(), at::kByte);
      EXPECT_TRUE(at::allclose(b->at("x").select(1, 1).select(1, 0), id.to(at::kFloat) + 1.5f));
      EXPECT_TRUE(at::equal(b->at("image").select(1, 1).select(1, 1), (id + 3).remainder(256).to(at::kByte)));
      for (int64_t k = 0; k < b->size(); ++k) ++counts[id[k].item<int64_t>()];
    }
  }
  return counts;
}

TEST(TableSourceTest, FolderOfFilesWithUnevenRowGroupsFeedsEveryRankExactlyOnce) {
  testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  WriteFile(fs, dir.Join("part-0.parquet"), 0, 100, 100);   // one row group
  WriteFile(fs, dir.Join("part-1.parquet"), 100, 37, 10);   // four
  fs.CreateDirs(dir.Join("sub"));
  WriteFile(fs, dir.Join("sub/part-2.parquet"), 137, 3, 1);  // three of one row
  fs.WriteAtomically(dir.Join("_SUCCESS"), "");
  auto source = OpenTable(dir.path());
  EXPECT_EQ(source->num_rows(), 140u);
  EXPECT_EQ(source->num_units(), 8u);
  ASSERT_EQ(source->columns().size(), 3u);
  EXPECT_EQ(source->columns()[2].type, ElementType::kFloat32);
  for (int64_t world : {1, 3, 8}) {
    const auto counts = ReadAll(source, world, world == 3 ? 0 : 2);
    EXPECT_EQ(counts.size(), static_cast<size_t>(140 - 140 % world)) << world;
    for (const auto& [id, c] : counts) ASSERT_EQ(c, 1) << id;
  }
}

// Every batch of one epoch (tensors by name), in order.
std::vector<std::map<std::string, at::Tensor>> Epoch(const std::shared_ptr<RowSource>& source, size_t threads) {
  LoaderOptions o;
  o.batch_size = 9;
  o.num_threads = threads;
  o.seed = 3;
  Loader loader(source, o);
  std::vector<std::map<std::string, at::Tensor>> out;
  while (auto b = loader.Next()) out.push_back(b->tensors);
  return out;
}

void ExpectSameBatches(const std::vector<std::map<std::string, at::Tensor>>& a,
                       const std::vector<std::map<std::string, at::Tensor>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << "batch " << i;
    for (const auto& [name, t] : a[i]) EXPECT_TRUE(at::equal(t, b[i].at(name))) << "batch " << i << " " << name;
  }
}

TEST(TableSourceTest, MappedAndReadFilesGiveTheSameBatches) {
  testing::TempDir dir;
  WriteFile(LocalFileSystem(), dir.Join("snappy.parquet"), 0, 300, 40);
  TableOptions mapped, read;
  mapped.memory_map = true;  // a loose Parquet file is read by default
  read.memory_map = false;
  for (size_t threads : {0, 2}) {
    const auto expected = Epoch(OpenTable(dir.Join("snappy.parquet"), read), threads);
    ASSERT_EQ(expected.size(), 34u);
    ExpectSameBatches(Epoch(OpenTable(dir.Join("snappy.parquet"), mapped), threads), expected);
  }
  // Stored uncompressed: byte values are views straight into the mapping, which must outlive the source.
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("id", pq::PhysicalType::kInt64),
       pq::Leaf("image", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 3)});
  pq::WriterOptions plain;
  plain.codec = pq::Codec::kUncompressed;
  {
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("plain.parquet"), schema, plain);
    for (int64_t begin = 0; begin < 100; begin += 30) {
      std::vector<int64_t> ids;
      std::vector<std::string> images;
      for (int64_t i = begin; i < std::min<int64_t>(100, begin + 30); ++i) {
        ids.push_back(i);
        images.push_back(std::string(3, static_cast<char>(i)));
      }
      writer.WriteRowGroup({pq::ColumnData::Int64s(ids),
                            pq::ColumnData::FixedBytes(pq::PhysicalType::kFixedLenByteArray, 3, images)});
    }
    writer.Close();
  }
  std::vector<std::map<std::string, at::Tensor>> from_mapping;
  {
    auto source = OpenTable(dir.Join("plain.parquet"), mapped);
    LoaderOptions o;
    o.batch_size = 9;
    o.num_threads = 2;
    o.seed = 3;
    Loader loader(source, o);
    source.reset();  // only the loader holds the source (and, through its cached units, the mapping) now
    while (auto b = loader.Next()) from_mapping.push_back(b->tensors);
  }
  ExpectSameBatches(from_mapping, Epoch(OpenTable(dir.Join("plain.parquet"), read), 2));
  for (const auto& batch : from_mapping) {
    EXPECT_TRUE(at::equal(batch.at("image").select(1, 2), batch.at("id").remainder(256).to(at::kByte)));
  }
}

TEST(TableSourceTest, LoadersSharingASourceDecodeIndependently) {
  // Decodes of every loader over one source share its decode memory (scratch_pool.h): loaders running at the same
  // time, and one after another, see exactly what a loader of their own would.
  testing::TempDir dir;
  WriteFile(LocalFileSystem(), dir.Join("t.parquet"), 0, 500, 50);
  auto shared = OpenTable(dir.Join("t.parquet"));
  const auto expected = Epoch(OpenTable(dir.Join("t.parquet")), 2);
  std::vector<std::vector<std::map<std::string, at::Tensor>>> got(3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = Epoch(shared, i); });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) ExpectSameBatches(g, expected);
  ExpectSameBatches(Epoch(shared, 1), expected);
}

TEST(TableSourceTest, OneRowGroupOnEightRanksAndProjection) {
  testing::TempDir dir;
  WriteFile(LocalFileSystem(), dir.Join("one.parquet"), 0, 5, 5);
  TableOptions t;
  t.columns = {"x", "id"};
  auto source = OpenTable(dir.Join("one.parquet"), t);
  ASSERT_EQ(source->columns().size(), 2u);
  EXPECT_EQ(source->columns()[0].name, "x");
  std::map<int64_t, int> counts;
  for (int64_t rank = 0; rank < 8; ++rank) {
    LoaderOptions o;
    o.batch_size = 4;
    o.rank = rank;
    o.world_size = 8;
    Loader loader(source, o);
    auto b = loader.Next();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->size(), 1);
    EXPECT_EQ(b->tensors.count("image"), 0u);
    ++counts[b->at("id")[0].item<int64_t>()];
    EXPECT_FALSE(loader.Next().has_value());
  }
  EXPECT_EQ(counts.size(), 5u);  // padding repeats 3 of the 5 rows
}

TEST(TableSourceTest, StatisticsFiltersPruneRowGroupsBeforeAnyRead) {
  testing::TempDir dir;
  WriteFile(LocalFileSystem(), dir.Join("t.parquet"), 0, 100, 10);
  TableOptions t;
  t.filter = Filter::Parse("id >= 45 and id < 70");
  auto source = OpenTable(dir.Join("t.parquet"), t);
  EXPECT_EQ(source->num_rows(), 25u);  // rows 45-69 of row groups 40-49, 50-59, 60-69
  EXPECT_EQ(source->num_units(), 3u);
  EXPECT_EQ(source->DescribeUnit(0), dir.Join("t.parquet") + " row group 4");
  t.filter = Filter::Parse("id = 'x'");
  EXPECT_THROW_WITH(OpenTable(dir.Join("t.parquet"), t), InvalidArgument, "'id'");
}

TEST(TableSourceTest, MissingAndCorruptFilesNameTheFileAndTheRank) {
  testing::TempDir dir;
  TableOptions t;
  t.rank = 5;
  EXPECT_THROW_WITH(OpenTable(dir.Join("nope.parquet"), t), IoError, "rank 5", "nope.parquet");
  LocalFileSystem().WriteAtomically(dir.Join("bad.parquet"), "PAR1 this is not parquet PAR1");
  EXPECT_THROW_WITH(OpenTable(dir.Join("bad.parquet"), t), CorruptDataError, "rank 5", "bad.parquet");

  // A file whose first page header is corrupt (the footer is fine, so it opens): the decoding error crosses the
  // prefetch queue to the consumer.
  WriteFile(LocalFileSystem(), dir.Join("t.parquet"), 0, 50, 10);
  FaultInjectingFileSystem faulty(LocalFileSystem());
  for (uint64_t offset = 4; offset < 12; ++offset) faulty.CorruptByte("t.parquet", offset);
  auto source = OpenTable(dir.Join("t.parquet"), {}, faulty);
  for (size_t threads : {0, 2}) {
    LoaderOptions o;
    o.rank = 1;
    o.world_size = 2;
    o.num_threads = threads;
    o.timeout = std::chrono::seconds(30);
    Loader loader(source, o);
    EXPECT_THROW_WITH(loader.Next(), Error, "rank 1 of 2", "epoch 0 batch 0", "t.parquet", "row group 0");
  }
}

// Row `row` of column `c` through the units of `source` (views allowed, as the loader reads them): its bytes, or
// nullopt when null.
std::optional<std::string> RowAt(const RowSource& source, uint64_t row, size_t c,
                                 std::map<size_t, std::shared_ptr<const UnitData>>* units) {
  size_t u = 0;
  while (source.unit_start(u + 1) <= row) ++u;
  auto& unit = (*units)[u];
  if (unit == nullptr) {
    UnitReadOptions views;
    views.allow_views = true;
    unit = source.ReadUnitWith(u, views);
    EXPECT_EQ(unit->rows, source.unit_start(u + 1) - source.unit_start(u)) << source.DescribeUnit(u);
  }
  const uint64_t local = row - source.unit_start(u);
  const ColumnChunk& chunk = unit->columns[c];
  if (chunk.validity != nullptr && !chunk.validity[local]) return std::nullopt;
  return std::string(chunk.RowView(local, source.columns()[c].row_bytes()));
}

void ExpectSameRows(const RowSource& whole, const RowSource& sliced) {
  ASSERT_EQ(whole.num_rows(), sliced.num_rows());
  ASSERT_EQ(whole.columns().size(), sliced.columns().size());
  std::map<size_t, std::shared_ptr<const UnitData>> whole_units, sliced_units;
  for (uint64_t r = 0; r < whole.num_rows(); ++r) {
    for (size_t c = 0; c < whole.columns().size(); ++c) {
      ASSERT_EQ(RowAt(whole, r, c, &whole_units), RowAt(sliced, r, c, &sliced_units))
          << "row " << r << " column " << whole.columns()[c].name;
    }
  }
}

// Rows [first, first + n): id = i; image = 4 bytes; s = a string of i % 5 bytes, null every 7th row; score = i / 4,
// null every 3rd row. Small pages, so a row group holds many.
void WriteNullableFile(FileSystem& fs, const std::string& path, int64_t first, int64_t n, int64_t row_group_rows,
                       bool dictionary) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("id", pq::PhysicalType::kInt64),
       pq::Leaf("image", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 4),
       pq::Leaf("s", pq::PhysicalType::kByteArray, pq::Repetition::kOptional),
       pq::Leaf("score", pq::PhysicalType::kDouble, pq::Repetition::kOptional)});
  pq::WriterOptions options;
  options.page_bytes = 600;
  options.dictionary = dictionary;
  pq::ParquetWriter writer(fs, path, schema, options);
  for (int64_t begin = first; begin < first + n; begin += row_group_rows) {
    const int64_t end = std::min(first + n, begin + row_group_rows);
    std::vector<int64_t> ids;
    std::vector<std::string> images, strings;
    std::vector<double> scores;
    std::vector<int16_t> s_def, score_def;
    for (int64_t i = begin; i < end; ++i) {
      ids.push_back(i);
      images.push_back(std::string{static_cast<char>(i), static_cast<char>(i >> 8), static_cast<char>(i * 3),
                                   static_cast<char>(7)});
      s_def.push_back(i % 7 == 0 ? 0 : 1);
      if (i % 7 != 0) strings.push_back(std::string(static_cast<size_t>(i % 5), static_cast<char>('a' + i % 26)));
      score_def.push_back(i % 3 == 0 ? 0 : 1);
      if (i % 3 != 0) scores.push_back(static_cast<double>(i) / 4);
    }
    writer.WriteRowGroup({pq::ColumnData::Int64s(ids),
                          pq::ColumnData::FixedBytes(pq::PhysicalType::kFixedLenByteArray, 4, images),
                          pq::ColumnData::ByteArrays(strings).set_def_levels(s_def, 1),
                          pq::ColumnData::Doubles(scores).set_def_levels(score_def, 1)});
  }
  writer.Close();
}

TEST(TableSourceTest, RowGroupsSlicedByUnitBytesHoldTheSameRowsAndReadOnlyTheirPages) {
  testing::TempDir dir;
  for (bool dictionary : {false, true}) {
    SCOPED_TRACE(dictionary ? "dictionary" : "plain");
    const std::string path = dir.Join(dictionary ? "d.parquet" : "p.parquet");
    WriteNullableFile(LocalFileSystem(), path, 0, 2500, 1000, dictionary);
    for (bool mapped : {false, true}) {
      TableOptions t;
      t.memory_map = mapped;
      const auto whole = OpenTable(path, t);
      ASSERT_EQ(whole->num_units(), 3u);
      for (uint64_t unit_bytes : {uint64_t{3000}, uint64_t{700}, uint64_t{1}}) {
        t.unit_bytes = unit_bytes;
        const auto sliced = OpenTable(path, t);
        EXPECT_GT(sliced->num_units(), whole->num_units()) << unit_bytes;
        EXPECT_THAT(sliced->DescribeUnit(1), ::testing::HasSubstr(" rows "));
        ExpectSameRows(*whole, *sliced);
      }
    }
  }
  // A slice reads only its pages: a unit of a tenth of the row group holds far less page memory than the row group.
  const std::string path = dir.Join("p.parquet");
  TableOptions t;
  const auto whole = OpenTable(path, t);
  t.unit_bytes = whole->UnitBytesHint(0) / 10;
  const auto sliced = OpenTable(path, t);
  EXPECT_GE(sliced->num_units(), 25u);
  EXPECT_LT(sliced->ReadUnit(3)->bytes * 3, whole->ReadUnit(0)->bytes);
  // Lists cannot be sliced.
  const std::string lists = dir.Join("lists.parquet");
  WriteFile(LocalFileSystem(), lists, 0, 100, 50);
  TableOptions l;
  l.unit_bytes = 100;
  EXPECT_THROW_WITH(OpenTable(lists, l), InvalidArgument, "'x' is a list", "unit_bytes");
  l.columns = {"id", "image"};
  EXPECT_EQ(OpenTable(lists, l)->num_rows(), 100u);
}

TEST(TableSourceTest, ALoaderWithACacheBelowAWindowsRowGroupsReadsSlicesAndYieldsEverySampleOnce) {
  testing::TempDir dir;
  const std::string path = dir.Join("t.parquet");
  WriteNullableFile(LocalFileSystem(), path, 0, 30000, 10000, false);
  const auto source = OpenTable(path);  // three row groups of 10000 rows, about 240 KB each
  ASSERT_EQ(source->num_units(), 3u);
  std::map<int64_t, int> seen;
  for (int64_t rank = 0; rank < 2; ++rank) {
    LoaderOptions o;
    o.batch_size = 64;
    o.rank = rank;
    o.world_size = 2;
    o.num_threads = 2;
    o.cache_bytes = 256 << 10;  // one row group, or a few slices of 64 KiB
    o.shuffle.block_size = 100;
    o.shuffle.window_blocks = 4;
    o.raw_bytes = {"s"};
    o.nulls["s"] = NullPolicy{};
    o.nulls["score"] = NullPolicy{-1, true};
    Loader loader(source, o);
    EXPECT_GE(loader.source().num_units(), 9u) << "the loader did not read the row groups in slices";
    o.fit_units_to_cache = false;
    EXPECT_EQ(Loader(source, o).source().num_units(), 3u);
    while (auto b = loader.Next()) {
      const at::Tensor id = b->at("id");
      EXPECT_TRUE(at::equal(id, b->sample_ids));
      for (int64_t k = 0; k < b->size(); ++k) {
        const int64_t i = id[k].item<int64_t>();
        ++seen[i];
        EXPECT_EQ(b->at("image")[k][1].item<uint8_t>(), static_cast<uint8_t>(i >> 8)) << i;
        EXPECT_EQ(b->at("score.valid")[k].item<bool>(), i % 3 != 0) << i;
        EXPECT_EQ(b->at("score")[k].item<double>(), i % 3 == 0 ? -1.0 : i / 4.0) << i;
        EXPECT_EQ(b->bytes("s", k), i % 7 == 0 ? std::string() : std::string(static_cast<size_t>(i % 5),
                                                                             static_cast<char>('a' + i % 26)))
            << i;
      }
    }
  }
  ASSERT_EQ(seen.size(), 30000u);
  for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << i;
  // A source with a list column cannot be sliced: the loader keeps its row groups (and warns).
  const std::string lists = dir.Join("lists.parquet");
  WriteFile(LocalFileSystem(), lists, 0, 300, 100);
  const auto list_source = OpenTable(lists);
  LoaderOptions o;
  o.cache_bytes = 1024;
  EXPECT_EQ(Loader(list_source, o).source().num_units(), 3u);
  EXPECT_EQ(ReadAll(list_source, 1, 1).size(), 300u);
}

TEST(TableSourceTest, SlicedUnitsDropTheRowsADeletionVectorRemoves) {
  testing::TempDir dir;
  const std::string root = dir.Join("table");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false},
                                   delta::StructField{"score", delta::PrimitiveType("double"), true}});
  delta::CreateTableOptions create;
  create.protocol.min_reader_version = 3;
  create.protocol.min_writer_version = 7;
  create.protocol.reader_features = std::vector<std::string>{"deletionVectors"};
  create.protocol.writer_features = std::vector<std::string>{"deletionVectors"};
  delta::DeltaTable table = delta::CreateTable(root, schema, create);
  std::vector<pq::Value> rows;
  for (int64_t i = 0; i < 900; ++i) {
    rows.push_back(pq::Value::Struct({{"id", pq::Value::Int(i)},
                                      {"score", i % 4 == 0 ? pq::Value::Null() : pq::Value::Double(i * 0.5)}}));
  }
  delta::WriteOptions write;
  write.parquet.page_bytes = 500;
  write.parquet.row_group_rows = 400;
  delta::AppendRows(table, rows, write);
  // Delete rows 0-9 (a whole first slice), every 13th row, and the last row.
  std::vector<uint64_t> deleted;
  for (uint64_t i = 0; i < 900; ++i) {
    if (i < 10 || i % 13 == 5 || i == 899) deleted.push_back(i);
  }
  const delta::Snapshot snapshot = table.Latest();
  ASSERT_EQ(snapshot.files.size(), 1u);
  delta::AddFile with_dv = snapshot.files[0];
  with_dv.deletion_vector = delta::InlineDeletionVector(deleted);
  delta::ActionSet del;
  del.removes.push_back(delta::RemoveOf(snapshot.files[0], 1));
  del.adds.push_back(with_dv);
  delta::Commit(table, del, {});

  TableOptions t;
  const auto whole = OpenTable(root, t);
  ASSERT_EQ(whole->num_rows(), 900u - deleted.size());
  t.unit_bytes = 80;  // slices of 10 rows (16 bytes a row)
  const auto sliced = OpenTable(root, t);
  EXPECT_GT(sliced->num_units(), 80u);
  ExpectSameRows(*whole, *sliced);
  std::map<size_t, std::shared_ptr<const UnitData>> units;
  const auto first = RowAt(*sliced, 0, 0, &units);  // rows 0-9 are deleted: the table starts at id 10
  ASSERT_TRUE(first.has_value());
  int64_t id = 0;
  std::memcpy(&id, first->data(), sizeof(id));
  EXPECT_EQ(id, 10);
}

TEST(TableSourceTest, DeltaTableAtAVersionWithPartitionPruning) {
  testing::TempDir dir;
  const std::string root = dir.Join("table");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false},
                                   delta::StructField{"score", delta::PrimitiveType("double"), false},
                                   delta::StructField{"split", delta::PrimitiveType("string"), false}});
  delta::CreateTableOptions create;
  create.partition_columns = {"split"};
  delta::DeltaTable table = delta::CreateTable(root, schema, create);
  auto rows = [](int64_t first, int64_t n, const std::string& split) {
    std::vector<pq::Value> out;
    for (int64_t i = first; i < first + n; ++i) {
      out.push_back(pq::Value::Struct({{"id", pq::Value::Int(i)},
                                       {"score", pq::Value::Double(i * 0.25)},
                                       {"split", pq::Value::String(split)}}));
    }
    return out;
  };
  const int64_t v1 = delta::AppendRows(table, rows(0, 30, "train")).version;
  delta::AppendRows(table, rows(30, 10, "test"));
  delta::AppendRows(table, rows(40, 5, "train"));

  TableOptions t;
  t.columns = {"id", "score"};
  EXPECT_EQ(OpenTable(root, t)->num_rows(), 45u);
  t.filter = Filter::Parse("split = 'train'");
  EXPECT_EQ(OpenTable(root, t)->num_rows(), 35u);
  t.delta_version = v1;
  auto source = OpenTable(root, t);
  ASSERT_EQ(source->num_rows(), 30u);
  LoaderOptions o;
  o.batch_size = 30;
  Loader loader(source, o);
  auto b = loader.Next();
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(at::allclose(b->at("score"), b->at("id").to(at::kDouble) * 0.25));
  EXPECT_EQ(std::get<0>(at::sort(b->at("id"))).equal(at::arange(30, at::kLong)), true);
  // A string partition column comes from the log, as raw bytes.
  t.columns = {"id", "split"};
  t.filter = Filter();
  t.delta_version.reset();
  source = OpenTable(root, t);
  ASSERT_EQ(source->columns().size(), 2u);
  EXPECT_EQ(source->columns()[1].type, ElementType::kBinary);
  o.batch_size = 45;
  o.raw_bytes = {"split"};
  Loader with_split(source, o);
  b = with_split.Next();
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(b->size(), 45);
  for (int64_t i = 0; i < 45; ++i) {
    const int64_t id = b->at("id")[i].item<int64_t>();
    EXPECT_EQ(b->bytes("split", i), id >= 30 && id < 40 ? "test" : "train") << "id " << id;
  }
}

// Rows of a table partitioned by `label` (integer) and `day` (date), `n` rows from id `first`.
std::vector<pq::Value> LabelledRows(int64_t first, int64_t n, std::optional<int64_t> label, int64_t day) {
  std::vector<pq::Value> out;
  for (int64_t i = first; i < first + n; ++i) {
    out.push_back(pq::Value::Struct({{"id", pq::Value::Int(i)},
                                     {"label", label ? pq::Value::Int(*label) : pq::Value::Null()},
                                     {"day", pq::Value::Int(day)}}));
  }
  return out;
}

TEST(TableSourceTest, NumericAndDatePartitionColumnsBecomeTensorsOnEveryRow) {
  testing::TempDir dir;
  const std::string root = dir.Join("table");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false},
                                   delta::StructField{"label", delta::PrimitiveType("integer"), true},
                                   delta::StructField{"day", delta::PrimitiveType("date"), false}});
  delta::CreateTableOptions create;
  create.partition_columns = {"label", "day"};
  create.protocol.min_reader_version = 3;
  create.protocol.min_writer_version = 7;
  create.protocol.reader_features = std::vector<std::string>{"deletionVectors"};
  create.protocol.writer_features = std::vector<std::string>{"deletionVectors"};
  delta::DeltaTable table = delta::CreateTable(root, schema, create);
  delta::WriteOptions write;
  write.parquet.row_group_rows = 8;  // several row groups per file, so units cut files
  delta::AppendRows(table, LabelledRows(0, 20, 3, 19000), write);
  delta::AppendRows(table, LabelledRows(20, 20, 7, 19001), write);
  delta::AppendRows(table, LabelledRows(40, 10, std::nullopt, 19001), write);
  // Row id 5 of the first file is deleted: partition values stay aligned with the rows left.
  const delta::Snapshot snapshot = table.Latest();
  for (const delta::AddFile& add : snapshot.files) {
    if (add.partition_values.at("label") != std::optional<std::string>("3")) continue;
    delta::AddFile with_dv = add;
    with_dv.deletion_vector = delta::InlineDeletionVector({5});
    delta::ActionSet del;
    del.removes.push_back(delta::RemoveOf(add, 1));
    del.adds.push_back(with_dv);
    delta::Commit(table, del, {});
  }

  auto expected_label = [](int64_t id) { return id < 20 ? 3 : id < 40 ? 7 : -1; };
  for (const uint64_t unit_bytes : {uint64_t{0}, uint64_t{40}}) {  // whole row groups, then slices of a few rows
    TableOptions t;
    t.columns = {"label", "id", "day"};
    t.unit_bytes = unit_bytes;
    auto source = OpenTable(root, t);
    ASSERT_EQ(source->num_rows(), 49u);
    ASSERT_EQ(source->columns().size(), 3u);
    EXPECT_EQ(source->columns()[0].type, ElementType::kInt32);
    EXPECT_TRUE(source->columns()[0].nullable);
    EXPECT_EQ(source->columns()[2].type, ElementType::kInt32);
    EXPECT_FALSE(source->columns()[2].nullable);
    LoaderOptions o;
    o.batch_size = 49;
    o.nulls["label"] = NullPolicy{/*fill_value=*/-1, /*emit_mask=*/true};
    Loader loader(source, o);
    auto b = loader.Next();
    ASSERT_TRUE(b.has_value());
    ASSERT_EQ(b->at("label").scalar_type(), at::kInt);
    std::set<int64_t> ids;
    for (int64_t i = 0; i < b->size(); ++i) {
      const int64_t id = b->at("id")[i].item<int64_t>();
      ids.insert(id);
      EXPECT_EQ(b->at("label")[i].item<int32_t>(), expected_label(id)) << "id " << id;
      EXPECT_EQ(b->at("label.valid")[i].item<bool>(), id < 40) << "id " << id;
      EXPECT_EQ(b->at("day")[i].item<int32_t>(), id < 20 ? 19000 : 19001) << "id " << id;
    }
    EXPECT_EQ(ids.size(), 49u);
    EXPECT_EQ(ids.count(5), 0u);
  }
  // Filters on partition columns still prune whole files.
  TableOptions t;
  t.columns = {"id", "label"};
  t.filter = Filter::Parse("label = 7");
  EXPECT_EQ(OpenTable(root, t)->num_rows(), 20u);
}

TEST(TableSourceTest, HiveStyleFoldersOfLooseParquetFilesArePartitionColumns) {
  testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  const std::string root = dir.Join("events");
  // label=<int>/split=<text>/part.parquet, one null label, one escaped split value, ids 0..59 in six files.
  const std::vector<std::pair<std::string, std::string>> folders = {
      {"label=3", "split=train"}, {"label=3", "split=test"},       {"label=7", "split=train"},
      {"label=7", "split=a%2Fb"}, {"label=__HIVE_DEFAULT_PARTITION__", "split=train"}, {"label=12", "split=train"}};
  for (size_t i = 0; i < folders.size(); ++i) {
    const std::string folder = root + "/" + folders[i].first + "/" + folders[i].second;
    fs.CreateDirs(folder);
    WriteFile(fs, folder + "/part-0.parquet", static_cast<int64_t>(i) * 10, 10, 4);
  }
  const std::vector<std::optional<int64_t>> label_of_file = {3, 3, 7, 7, std::nullopt, 12};
  const std::vector<std::string> split_of_file = {"train", "test", "train", "a/b", "train", "train"};

  TableOptions t;
  t.columns = {"id", "label", "split"};
  auto source = OpenTable(root, t);
  ASSERT_EQ(source->num_rows(), 60u);
  EXPECT_EQ(source->columns()[1].type, ElementType::kInt64);
  EXPECT_TRUE(source->columns()[1].nullable);
  EXPECT_EQ(source->columns()[2].type, ElementType::kBinary);
  LoaderOptions o;
  o.batch_size = 60;
  o.raw_bytes = {"split"};
  o.nulls["label"] = NullPolicy{/*fill_value=*/-1, /*emit_mask=*/false};
  Loader loader(source, o);
  auto b = loader.Next();
  ASSERT_TRUE(b.has_value());
  std::set<int64_t> ids;
  for (int64_t i = 0; i < b->size(); ++i) {
    const int64_t id = b->at("id")[i].item<int64_t>();
    ids.insert(id);
    const size_t file = static_cast<size_t>(id / 10);
    EXPECT_EQ(b->at("label")[i].item<int64_t>(), label_of_file[file].value_or(-1)) << "id " << id;
    EXPECT_EQ(b->bytes("split", i), split_of_file[file]) << "id " << id;
  }
  EXPECT_EQ(ids.size(), 60u);

  // Filters on folder keys prune files before any of their bytes is read.
  t.filter = Filter::Parse("label >= 7 and split = 'train'");
  EXPECT_EQ(OpenTable(root, t)->num_rows(), 20u);  // label=7/split=train and label=12/split=train
  t.filter = Filter::Parse("split < 3");
  EXPECT_THROW_WITH(OpenTable(root, t), InvalidArgument, "filter on column 'split'", "compares 3 with values like");

  // Files under different keys are refused, naming both.
  fs.CreateDirs(root + "/day=1");
  WriteFile(fs, root + "/day=1/part-9.parquet", 100, 2, 2);
  t.filter = Filter();
  EXPECT_THROW_WITH(OpenTable(root, t), InvalidArgument, "day=1/part-9.parquet", "do not name the same keys");
}

TEST(TableSourceTest, ADecimalPartitionColumnIsItsNumericValue) {
  testing::TempDir dir;
  const std::string root = dir.Join("table");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false},
                                   delta::StructField{"price", delta::PrimitiveType("decimal(10,2)"), true}});
  delta::CreateTableOptions create;
  create.partition_columns = {"price"};
  delta::DeltaTable table = delta::CreateTable(root, schema, create);
  delta::AppendRows(table, {pq::Value::Struct({{"id", pq::Value::Int(1)}, {"price", pq::Value::Int(1250)}}),
                            pq::Value::Struct({{"id", pq::Value::Int(2)}, {"price", pq::Value::Int(-5)}}),
                            pq::Value::Struct({{"id", pq::Value::Int(3)}, {"price", pq::Value::Null()}})});
  TableOptions t;
  auto source = OpenTable(root, t);
  ASSERT_EQ(source->columns().size(), 2u);  // the table's schema defines the columns, partition columns included
  EXPECT_EQ(source->columns()[1].type, ElementType::kFloat64);
  LoaderOptions o;
  o.batch_size = 3;
  o.nulls["price"].fill_value = -1;
  Loader loader(source, o);
  auto b = loader.Next();
  ASSERT_TRUE(b.has_value());
  std::map<int64_t, double> price;
  for (int64_t i = 0; i < 3; ++i) price[b->at("id")[i].item<int64_t>()] = b->at("price")[i].item<double>();
  EXPECT_EQ(price, (std::map<int64_t, double>{{1, 12.5}, {2, -0.05}, {3, -1}}));
  t.filter = Filter::Parse("price > 0.1");
  EXPECT_EQ(OpenTable(root, t)->num_rows(), 1u);
  t.filter = Filter::Parse("price = 12.50 or price is null");
  EXPECT_EQ(OpenTable(root, t)->num_rows(), 2u);
}

}  // namespace
}  // namespace lakerun::data
