// Importers: Fashion-MNIST (t10k) read back bit-identical, IDX validation, CSV inference and errors, image folders.
#include <gtest/gtest.h>
#include <zlib.h>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/import/import.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun_testing/idx_file.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::importer {
namespace {

using parquet::Value;

const char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";

using lakerun::testing::IdxFile;

std::string Gzip(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(ImportMnistTest, FashionMnistTestSplitReadsBackBitIdentical) {
  if (!LocalFileSystem().Exists(std::string(kFashionMnist) + "/t10k-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  lakerun::testing::TempDir dir;
  ImportOptions options;
  options.files_multiple_of = 4;
  options.row_group_rows = 1000;
  auto results = ImportMnist(kFashionMnist, dir.path(), options, {"test"});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].rows, 10000);
  EXPECT_EQ(results[0].files, 4);
  const IdxArray images = ReadIdx(std::string(kFashionMnist) + "/t10k-images-idx3-ubyte.gz");
  const IdxArray labels = ReadIdx(std::string(kFashionMnist) + "/t10k-labels-idx1-ubyte.gz");
  ASSERT_EQ(images.dims, (std::vector<int64_t>{10000, 28, 28}));

  delta::DeltaTable table(dir.Join("test"));
  delta::Snapshot s = table.Latest();
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.files.size(), 4u);
  EXPECT_EQ(s.NumRecords(), 10000);
  EXPECT_EQ(s.metadata.configuration.at("delta.parquet.compression.codec"), "zstd");
  std::vector<Value> rows = delta::TableScan(table, s).ReadAll();  // files sort by part index: IDX order
  ASSERT_EQ(rows.size(), 10000u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].Field("image")->as_string(), images.data.substr(i * 784, 784)) << "row " << i;
    ASSERT_EQ(rows[i].Field("label")->as_int(), static_cast<unsigned char>(labels.data[i])) << "row " << i;
  }
  // Label statistics prune: every file holds labels 0..9.
  EXPECT_EQ(delta::PruneFiles(s, delta::Filter::Parse("label > 9")).size(), 0u);
}

TEST(ImportMnistTest, FixedListLayoutInParquetCarriesTheShape) {
  lakerun::testing::TempDir src, out;
  std::string pixels, label_bytes;
  for (int i = 0; i < 6 * 4; ++i) pixels.push_back(static_cast<char>(200 + i));
  for (int i = 0; i < 6; ++i) label_bytes.push_back(static_cast<char>(i));
  LocalFileSystem().WriteAtomically(src.Join("t10k-images-idx3-ubyte.gz"), Gzip(IdxFile(0x803, {6, 2, 2}, pixels)));
  LocalFileSystem().WriteAtomically(src.Join("t10k-labels-idx1-ubyte"), IdxFile(0x801, {6}, label_bytes));
  ImportOptions options;
  options.format = OutputFormat::kParquet;
  options.image_layout = ImageLayout::kFixedList;
  options.files_multiple_of = 2;
  auto results = ImportMnist(src.path(), out.path(), options, {"test"});
  ASSERT_EQ(results[0].files, 2);
  EXPECT_FALSE(LocalFileSystem().Exists(out.Join("test/_delta_log")));
  auto entries = LocalFileSystem().List(out.Join("test"));
  ASSERT_EQ(entries.size(), 2u);
  auto file = parquet::ParquetFile::Open(LocalFileSystem(), out.Join("test/" + entries[1].name));
  EXPECT_EQ(parquet::TensorShape(file->metadata(), "image"), (std::vector<int64_t>{2, 2}));
  parquet::ColumnData image = file->ReadColumnChunk(0, 0);
  ASSERT_EQ(image.FixedListLength(), 4);
  ASSERT_EQ(image.num_values(), 12);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(image.values<int32_t>()[i], 200 + 12 + i);  // rows 3..5
}

TEST(ImportMnistTest, BadIdxFilesAreNamed) {
  lakerun::testing::TempDir src, out;
  auto& fs = LocalFileSystem();
  const std::string images = src.Join("t10k-images-idx3-ubyte");
  const std::string labels = src.Join("t10k-labels-idx1-ubyte");
  fs.WriteAtomically(images, IdxFile(0x0d03, {2, 2, 2}, std::string(8, 'x')));
  EXPECT_THROW_WITH(ReadIdx(images), CorruptDataError, images, "bad IDX magic");
  fs.WriteAtomically(images, IdxFile(0x803, {2, 2, 2}, std::string(7, 'x')));
  EXPECT_THROW_WITH(ReadIdx(images), CorruptDataError, images, "payload is 7 bytes", "need 8");
  fs.WriteAtomically(images, Gzip(IdxFile(0x803, {2, 2, 2}, std::string(8, 'x'))).substr(0, 20));
  EXPECT_THROW_WITH(ReadIdx(images), CorruptDataError, images, "gzip");
  fs.WriteAtomically(images, IdxFile(0x803, {2, 2, 2}, std::string(8, 'x')));
  fs.WriteAtomically(labels, IdxFile(0x801, {3}, std::string(3, '\1')));
  EXPECT_THROW_WITH(ImportMnist(src.path(), out.path(), {}, {"test"}), CorruptDataError, "holds 2 images",
                    "holds 3 labels");
  fs.WriteAtomically(labels, IdxFile(0x801, {2}, std::string("\1\x0c", 2)));
  EXPECT_THROW_WITH(ImportMnist(src.path(), out.path(), {}, {"test"}), CorruptDataError, labels, "label 1 is 12");
  fs.WriteAtomically(labels, IdxFile(0x801, {2}, std::string("\1\2", 2)));
  ImportOptions too_many;
  too_many.files_multiple_of = 3;
  EXPECT_THROW_WITH(ImportMnist(src.path(), out.path(), too_many, {"test"}), InvalidArgument,
                    "--files-multiple-of 3");
  EXPECT_THROW_WITH(ImportMnist(out.path(), out.Join("x"), {}, {"test"}), InvalidArgument, "cannot find");
}

TEST(ImportCsvTest, InfersTypesAndHandlesQuotingAndNulls) {
  lakerun::testing::TempDir dir;
  const std::string csv = dir.Join("data.csv");
  LocalFileSystem().WriteAtomically(csv,
                                    "id,ratio,name,mixed\r\n"
                                    "1,0.5,\"Smith, J\",7\r\n"
                                    "2,,\"say \"\"hi\"\"\",x\n"
                                    "3,2,\"two\nlines\",\n");
  ImportOptions options;
  ImportResult r = ImportCsv(csv, dir.Join("table"), options);
  EXPECT_EQ(r.rows, 3);
  delta::DeltaTable table(dir.Join("table"));
  delta::Snapshot s = table.Latest();
  const auto& fields = s.metadata.schema->fields;
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(delta::TypeName(*fields[0].type), "long");
  EXPECT_EQ(delta::TypeName(*fields[1].type), "double");
  EXPECT_EQ(delta::TypeName(*fields[2].type), "string");
  EXPECT_EQ(delta::TypeName(*fields[3].type), "string");
  std::vector<Value> rows = delta::TableScan(table, s).ReadAll();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], Value::Struct({{"id", Value::Int(1)}, {"ratio", Value::Double(0.5)},
                                    {"name", Value::String("Smith, J")}, {"mixed", Value::String("7")}}));
  EXPECT_TRUE(rows[1].Field("ratio")->is_null());
  EXPECT_EQ(rows[1].Field("name")->as_string(), "say \"hi\"");
  EXPECT_EQ(rows[2].Field("name")->as_string(), "two\nlines");
  EXPECT_TRUE(rows[2].Field("mixed")->is_null());
}

TEST(ImportCsvTest, ErrorsNameTheLine) {
  lakerun::testing::TempDir dir;
  const std::string csv = dir.Join("bad.csv");
  LocalFileSystem().WriteAtomically(csv, "a,b\n1,2\n3\n");
  EXPECT_THROW_WITH(ImportCsv(csv, dir.Join("t1"), {}), CorruptDataError, csv, "line 3 has 1 fields",
                    "header has 2");
  LocalFileSystem().WriteAtomically(csv, "a,b\n1,\"open\n2,3\n");
  EXPECT_THROW_WITH(ImportCsv(csv, dir.Join("t2"), {}), CorruptDataError, csv, "line 2", "unterminated");
  LocalFileSystem().WriteAtomically(csv, "a,a\n1,2\n");
  EXPECT_THROW_WITH(ImportCsv(csv, dir.Join("t3"), {}), CorruptDataError, "duplicate column name 'a'");
  LocalFileSystem().WriteAtomically(csv, "");
  EXPECT_THROW_WITH(ImportCsv(csv, dir.Join("t4"), {}), CorruptDataError, "header line is required");
}

TEST(ImportImageFolderTest, ClassesInSortedOrderWithBytesIntact) {
  lakerun::testing::TempDir dir, out;
  auto& fs = LocalFileSystem();
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + "payload-png";
  const std::string jpg = std::string("\xff\xd8\xff\xe0", 4) + "payload-jpg";
  fs.CreateDirs(dir.Join("tulips"));
  fs.CreateDirs(dir.Join("daisy"));
  fs.WriteAtomically(dir.Join("tulips/b.png"), png);
  fs.WriteAtomically(dir.Join("tulips/a.JPG"), jpg);
  fs.WriteAtomically(dir.Join("daisy/z.jpeg"), jpg + "2");
  fs.WriteAtomically(dir.Join("daisy/notes.txt"), "ignored");
  fs.WriteAtomically(dir.Join("LICENSE.txt"), "ignored");
  ImportOptions options;
  options.format = OutputFormat::kDelta;
  ImportResult r = ImportImageFolder(dir.path(), out.Join("flowers"), options);
  EXPECT_EQ(r.rows, 3);
  delta::DeltaTable table(out.Join("flowers"));
  std::vector<Value> rows = delta::TableScan(table, table.Latest()).ReadAll();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], Value::Struct({{"image", Value::Bytes(jpg + "2")}, {"label", Value::Int(0)},
                                    {"class", Value::String("daisy")}, {"file", Value::String("daisy/z.jpeg")}}));
  EXPECT_EQ(rows[1].Field("file")->as_string(), "tulips/a.JPG");
  EXPECT_EQ(rows[1].Field("label")->as_int(), 1);
  EXPECT_EQ(rows[2].Field("image")->as_string(), png);
  fs.WriteAtomically(dir.Join("tulips/c.png"), "not a png");
  EXPECT_THROW_WITH(ImportImageFolder(dir.path(), out.Join("again"), options), CorruptDataError,
                    dir.Join("tulips/c.png"), "not a PNG");
  EXPECT_THROW_WITH(ImportImageFolder(dir.path(), out.Join("flowers"), options), InvalidArgument, "already exists");
}

}  // namespace
}  // namespace lakerun::importer
