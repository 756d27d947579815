#include "lakerun/data/converter.h"

#include <cstring>
#include <map>

#include "lakerun/base/error.h"
#include "lakerun/data/image_encode.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/idx_file.h"
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

TEST(ConverterTest, CsvFilesAreConvertedOnceAndAgainWhenTheyChange) {
  testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  const std::string csv = dir.Join("iris.csv");
  std::string text = "sepal,petal,species\n";
  for (int i = 0; i < 40; ++i) text += std::to_string(i) + "," + std::to_string(i * 0.5) + ",s" + std::to_string(i % 3) + "\n";
  fs.WriteAtomically(csv, text);
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  c.world_size = 4;
  c.row_group_rows = 6;
  c.rows_per_file = 10;

  const ConvertedDataset first = ConvertFiles({FileSourceKind::kCsv, csv}, c);
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.rows, 40u);
  EXPECT_EQ(first.files, 4);
  EXPECT_TRUE(fs.Exists(JoinPath(first.path, "_SUCCESS")));
  const auto converted = OpenTable(first.path);
  ASSERT_EQ(converted->num_rows(), 40u);
  ASSERT_EQ(converted->columns().size(), 3u);
  EXPECT_EQ(converted->columns()[0].name, "sepal");
  EXPECT_EQ(converted->columns()[0].type, ElementType::kInt64);
  EXPECT_EQ(converted->columns()[1].type, ElementType::kFloat64);
  for (size_t u = 0; u < converted->num_units(); ++u) {
    EXPECT_LE(converted->unit_start(u + 1) - converted->unit_start(u), 6u);
  }
  int64_t sum = 0;
  for (size_t u = 0; u < converted->num_units(); ++u) {
    const auto unit = converted->ReadUnit(u);
    for (uint64_t r = 0; r < unit->rows; ++r) {
      int64_t v;
      std::memcpy(&v, unit->columns[0].data + r * sizeof(v), sizeof(v));
      sum += v;
    }
  }
  EXPECT_EQ(sum, 40 * 39 / 2);

  const ConvertedDataset again = ConvertFiles({FileSourceKind::kCsv, csv}, c);
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.key, first.key);
  EXPECT_EQ(again.rows, 40u);
  EXPECT_EQ(again.files, 4);

  fs.WriteAtomically(csv, text + "40,20.0,s1\n");  // new content: a new entry
  const ConvertedDataset grown = ConvertFiles({FileSourceKind::kCsv, csv}, c);
  EXPECT_FALSE(grown.reused);
  EXPECT_NE(grown.key, first.key);
  EXPECT_EQ(grown.rows, 41u);

  // Bad input names the file and line, and leaves no entry behind.
  const std::string bad = dir.Join("bad.csv");
  fs.WriteAtomically(bad, "a,b\n1,2\n3\n");
  EXPECT_THROW_WITH(ConvertFiles({FileSourceKind::kCsv, bad}, c), CorruptDataError, "bad.csv", "line 3");
  EXPECT_THROW_WITH(ConvertFiles({FileSourceKind::kCsv, dir.Join("missing.csv")}, c), IoError, "missing.csv");
  size_t entries = 0;
  for (const FileInfo& e : fs.List(c.cache_dir)) entries += e.is_directory ? 1 : 0;
  EXPECT_EQ(entries, 2u);  // first and grown; nothing from the failures
}

TEST(ConverterTest, MnistIdxFilesAreConvertedPerSplit) {
  testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  const std::string src = dir.Join("mnist");
  fs.CreateDirs(src);
  std::string pixels(5 * 2 * 3, '\0'), labels;
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<char>(i);
  for (int i = 0; i < 5; ++i) labels.push_back(static_cast<char>(i % 10));
  fs.WriteAtomically(JoinPath(src, "t10k-images-idx3-ubyte"), lakerun::testing::IdxFile(0x803, {5, 2, 3}, pixels));
  fs.WriteAtomically(JoinPath(src, "t10k-labels-idx1-ubyte"), lakerun::testing::IdxFile(0x801, {5}, labels));
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  c.world_size = 2;

  const ConvertedDataset test = ConvertFiles({FileSourceKind::kMnist, src, "test"}, c);
  EXPECT_EQ(test.rows, 5u);
  EXPECT_EQ(test.files, 2);
  const auto converted = OpenTable(test.path);
  ASSERT_EQ(converted->columns().size(), 2u);
  EXPECT_EQ(converted->columns()[0].name, "image");
  std::string seen;
  for (size_t u = 0; u < converted->num_units(); ++u) {
    const auto unit = converted->ReadUnit(u);
    for (uint64_t r = 0; r < unit->rows; ++r) seen += std::string(unit->columns[0].RowView(r, 0));
  }
  EXPECT_EQ(seen, pixels);
  EXPECT_TRUE(ConvertFiles({FileSourceKind::kMnist, src, "test"}, c).reused);
  // The train split's files are missing: the importer's error names them.
  EXPECT_THROW(ConvertFiles({FileSourceKind::kMnist, src, "train"}, c), Error);
  EXPECT_THROW_WITH(ConvertFiles({FileSourceKind::kMnist, src, "validation"}, c), InvalidArgument, "validation");
}

TEST(ConverterTest, ImageFoldersAreConvertedWithTheirClassLabels) {
  testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  const std::string src = dir.Join("flowers");
  std::vector<uint8_t> pixels(8 * 8 * 3, 128);
  const std::string jpeg = EncodeJpeg(pixels.data(), 8, 8, 3, 90);
  for (const char* cls : {"daisy", "tulip"}) {
    fs.CreateDirs(JoinPath(src, cls));
    for (int i = 0; i < 3; ++i) fs.WriteAtomically(JoinPath(src, std::string(cls) + "/" + std::to_string(i) + ".jpg"), jpeg);
  }
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  c.world_size = 2;
  const ConvertedDataset first = ConvertFiles({FileSourceKind::kImageFolder, src}, c);
  EXPECT_EQ(first.rows, 6u);
  EXPECT_EQ(first.files % 2, 0);
  TableOptions t;
  t.columns = {"label", "image"};
  const auto converted = OpenTable(first.path, t);
  int64_t label_sum = 0;
  for (size_t u = 0; u < converted->num_units(); ++u) {
    const auto unit = converted->ReadUnit(u);
    for (uint64_t r = 0; r < unit->rows; ++r) {
      int64_t label;
      std::memcpy(&label, unit->columns[0].data + r * sizeof(label), sizeof(label));
      label_sum += label;
      EXPECT_EQ(unit->columns[1].RowView(r, 0), jpeg);
    }
  }
  EXPECT_EQ(label_sum, 3);  // daisy 0, tulip 1
  c.cache_dir = JoinPath(src, "cache");  // inside the folder it converts: refused
  EXPECT_THROW_WITH(ConvertFiles({FileSourceKind::kImageFolder, src}, c), InvalidArgument, "lies inside");
  EXPECT_FALSE(fs.Exists(c.cache_dir));
  c.cache_dir = dir.Join("cache");
  // A new image: a new entry.
  fs.WriteAtomically(JoinPath(src, "tulip/3.jpg"), jpeg);
  const ConvertedDataset grown = ConvertFiles({FileSourceKind::kImageFolder, src}, c);
  EXPECT_FALSE(grown.reused);
  EXPECT_EQ(grown.rows, 7u);
}

TEST(ConverterTest, ByteAndShortColumnsAreWrittenAsAnnotatedInt32AndReadBackAsInt8AndInt16) {
  testing::TempDir dir;
  MemoryRowSource::Column bytes{{"b", ElementType::kInt8, {}}, {0x80, 0x07, 0x7f}, {}};
  std::vector<uint8_t> shorts(6);
  const int16_t values[] = {-32768, 300, 32767};
  std::memcpy(shorts.data(), values, sizeof values);
  MemoryRowSource::Column halves{{"h", ElementType::kInt16, {}}, shorts, {}};
  MemoryRowSource source({bytes, halves}, 2);
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  const ConvertedDataset converted = Convert(source, "bytes and shorts", c);
  const auto back = OpenTable(converted.path);
  ASSERT_EQ(back->columns().size(), 2u);
  EXPECT_EQ(back->columns()[0].type, ElementType::kInt8);
  EXPECT_EQ(back->columns()[1].type, ElementType::kInt16);
  std::vector<int8_t> b;
  std::vector<int16_t> h;
  for (size_t u = 0; u < back->num_units(); ++u) {
    const auto unit = back->ReadUnit(u);
    for (uint64_t r = 0; r < unit->rows; ++r) {
      b.push_back(static_cast<int8_t>(unit->columns[0].data[r]));
      int16_t v;
      std::memcpy(&v, unit->columns[1].data + 2 * r, 2);
      h.push_back(v);
    }
  }
  EXPECT_EQ(b, (std::vector<int8_t>{-128, 7, 127}));
  EXPECT_EQ(h, (std::vector<int16_t>{-32768, 300, 32767}));
}

TEST(ConverterTest, StructLeavesAndMapValuesBecomeTopLevelColumnsNamedByTheirPath) {
  testing::TempDir dir;
  const pq::Schema schema = pq::Schema::FromFields(
      {pq::Group("s", {pq::Leaf("a", pq::PhysicalType::kInt64)}),
       pq::MapOf("m", pq::Leaf("key", pq::PhysicalType::kInt32), pq::Leaf("value", pq::PhysicalType::kDouble),
                 pq::Repetition::kRequired)});
  {
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("t.parquet"), schema);
    std::vector<pq::Value> rows;
    for (int i = 0; i < 4; ++i) {
      rows.push_back(pq::Value::Struct(
          {{"s", pq::Value::Struct({{"a", pq::Value::Int(i)}})},
           {"m", pq::Value::Map({{pq::Value::Int(i), pq::Value::Double(i * 0.5)}})}}));
    }
    writer.WriteRows(rows);
    writer.Close();
  }
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  TableOptions t;
  t.columns = {"s.a", "m.value"};
  const ConvertedDataset converted = ConvertTable(dir.Join("t.parquet"), t, c);
  const auto back = OpenTable(converted.path);
  ASSERT_EQ(back->columns().size(), 2u);
  EXPECT_EQ(back->columns()[0].name, "s.a");
  EXPECT_EQ(back->columns()[1].name, "m.value");
  EXPECT_EQ(back->columns()[1].shape, (std::vector<int64_t>{1}));
  double sum = 0;
  for (size_t u = 0; u < back->num_units(); ++u) {
    const auto unit = back->ReadUnit(u);
    for (uint64_t r = 0; r < unit->rows; ++r) {
      double v;
      std::memcpy(&v, unit->columns[1].data + 8 * r, 8);
      sum += v;
    }
  }
  EXPECT_EQ(sum, 3.0);  // 0 + 0.5 + 1 + 1.5
}

TEST(ConverterTest, NestedListsOfAFixedShapeKeepItAndAllNullOnesAreRefused) {
  testing::TempDir dir;
  const auto nested = [](const std::string& name) {
    return pq::ListOf(name, pq::ListOf("element", pq::Leaf("element", pq::PhysicalType::kInt32)));
  };
  {
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("t.parquet"), pq::Schema::FromFields({nested("m"), nested("n")}));
    std::vector<pq::Value> rows;
    for (int i = 0; i < 3; ++i) {
      std::vector<pq::Value> outer;
      for (int a = 0; a < 2; ++a) {
        outer.push_back(pq::Value::List({pq::Value::Int(i * 100 + a * 10), pq::Value::Int(i * 100 + a * 10 + 1),
                                         pq::Value::Int(i * 100 + a * 10 + 2)}));
      }
      rows.push_back(pq::Value::Struct({{"m", pq::Value::List(std::move(outer))}, {"n", pq::Value::Null()}}));
    }
    writer.WriteRows(rows);
    writer.Close();
  }
  ConverterOptions c;
  c.cache_dir = dir.Join("cache");
  TableOptions t;
  t.columns = {"m"};
  const auto back = OpenTable(ConvertTable(dir.Join("t.parquet"), t, c).path);
  EXPECT_EQ(back->columns()[0].shape, (std::vector<int64_t>{2, 3}));
  const auto unit = back->ReadUnit(0);
  int32_t last;
  std::memcpy(&last, unit->columns[0].data + 4 * 17, 4);
  EXPECT_EQ(last, 212);
  t.columns = {"n"};
  EXPECT_THROW_WITH(ConvertTable(dir.Join("t.parquet"), t, c), NotImplemented, "column 'n'",
                    "no row holds a complete list");
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
