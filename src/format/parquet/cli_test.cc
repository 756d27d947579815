// Runs the built `lakerun` binary's `table inspect` and `table head` on a file written here.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "lakerun/format/parquet/parquet.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::parquet {
namespace {

struct Result {
  int exit_code;
  std::string output;
};

// lakerun_cc_test is meant to set LAKERUN_BINARY_DIR for every test; fall back to the build tree this test was
// compiled for when it is missing.
std::string LakerunBinary() {
  if (std::getenv("LAKERUN_BINARY_DIR") == nullptr) setenv("LAKERUN_BINARY_DIR", LAKERUN_CLI_TEST_BINARY_DIR, 0);
  return lakerun::testing::BuiltProgram("lakerun");
}

Result RunLakerun(const std::string& args) {
  const std::string cmd = LakerunBinary() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class TableCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("people.parquet");
    Schema schema = Schema::FromFields({
        Leaf("id", PhysicalType::kInt64),
        Leaf("name", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()),
        ListOf("scores", Leaf("element", PhysicalType::kFloat)),
        MapOf("tags", Leaf("key", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String()),
              Leaf("value", PhysicalType::kInt32, Repetition::kOptional)),
    });
    std::vector<Value> rows;
    for (int i = 0; i < 30; ++i) {
      rows.push_back(Value::Struct({{"id", Value::Int(100 + i)},
                                    {"name", i == 1 ? Value::Null() : Value::String("person" + std::to_string(i))},
                                    {"scores", Value::List({Value::Float(i * 0.5f), Value::Float(2)})},
                                    {"tags", Value::Map({{Value::String("k"), Value::Int(i)}})}}));
    }
    WriterOptions o;
    o.codec = Codec::kZstd;
    o.row_group_rows = 20;
    o.tensor_shapes["scores"] = {2};
    ParquetWriter w(LocalFileSystem(), path_, schema, o);
    w.WriteRows(rows);
    w.Close();
  }
  lakerun::testing::TempDir dir_;
  std::string path_;
};

TEST_F(TableCommandsTest, InspectPrintsSchemaRowGroupsAndMetadata) {
  Result r = RunLakerun("table inspect " + path_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("30 in 2 row group(s), 5 column(s)"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("OPTIONAL group tags (MAP)"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("scores.list.element"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("row group 1: 10 rows"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("ZSTD"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("lakerun.shape.scores = [2]"));
}

TEST_F(TableCommandsTest, InspectJsonIsParseable) {
  Result r = RunLakerun("table inspect --json " + path_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["num_rows"], 30);
  EXPECT_EQ(j["row_groups"].size(), 2u);
  EXPECT_EQ(j["row_groups"][0]["columns"][0]["path"], "id");
  EXPECT_EQ(j["row_groups"][0]["columns"][0]["statistics"]["min"], "100");
  EXPECT_EQ(j["row_groups"][1]["columns"][0]["statistics"]["max"], "129");
  EXPECT_EQ(j["key_value_metadata"]["lakerun.shape.scores"], "[2]");
}

TEST_F(TableCommandsTest, InspectSaysWhetherPagesCarryChecksums) {
  Result r = RunLakerun("table inspect " + path_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(RunLakerun("table inspect --json " + path_).output);
  const int64_t pages = json["page_checksums"]["pages"];
  EXPECT_GE(pages, 10);  // 5 columns x 2 row groups, a dictionary page in some
  EXPECT_EQ(json["page_checksums"]["with_crc"], pages);
  EXPECT_EQ(json["row_groups"][0]["columns"][0]["pages_with_crc"], json["row_groups"][0]["columns"][0]["pages"]);
  EXPECT_THAT(r.output, ::testing::HasSubstr("page checksums: present on " + std::to_string(pages) + " of " +
                                                 std::to_string(pages) + " pages"));

  const std::string bare = dir_.Join("bare.parquet");
  WriterOptions o;
  o.page_checksums = false;
  o.dictionary = false;
  ParquetWriter w(LocalFileSystem(), bare, Schema::FromFields({Leaf("x", PhysicalType::kInt64)}), o);
  w.WriteRowGroup({ColumnData::Int64s({1, 2, 3})});
  w.Close();
  Result none = RunLakerun("table inspect " + bare);
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_THAT(none.output, ::testing::HasSubstr("page checksums: none (0 of 1 pages"));
}

// A flipped byte in a page: `table head` fails naming the page, where it would otherwise print the altered value.
TEST_F(TableCommandsTest, HeadOfADamagedPageFailsNamingThePage) {
  const PageSummary page = ParquetFile::Open(LocalFileSystem(), path_)->ReadPageHeaders(0, 0).back();
  std::string bytes = LocalFileSystem().ReadFile(path_);
  bytes[page.offset + page.header_size + static_cast<size_t>(page.compressed_size) / 2] ^= 0x08;
  LocalFileSystem().WriteAtomically(path_, bytes);
  Result r = RunLakerun("table head -n 3 " + path_);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr(path_ + ": row group 0, column 'id'"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("at offset " + std::to_string(page.offset) + ": page CRC mismatch"));
}

TEST_F(TableCommandsTest, HeadPrintsRowsWithNestedValues) {
  Result r = RunLakerun("table head -n 3 " + path_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("id  | name    | scores   | tags"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("101 | null    | [0.5, 2] | {\"k\" => 1}"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("(3 of 30 rows)"));
  Result projected = RunLakerun("table head -n 2 --columns name " + path_);
  ASSERT_EQ(projected.exit_code, 0) << projected.output;
  EXPECT_THAT(projected.output, ::testing::Not(::testing::HasSubstr("scores")));
  EXPECT_THAT(projected.output, ::testing::HasSubstr("person0"));
}

TEST_F(TableCommandsTest, BadFilesFailWithTheFileNamed) {
  const std::string bad = dir_.Join("bad.parquet");
  LocalFileSystem().WriteAtomically(bad, "not a parquet file at all");
  Result r = RunLakerun("table inspect " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, ::testing::HasSubstr("lakerun: error: " + bad));
  Result missing = RunLakerun("table head " + dir_.Join("missing.parquet"));
  EXPECT_EQ(missing.exit_code, 1);
  Result unknown = RunLakerun("table head --columns nope " + path_);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.output, ::testing::HasSubstr("no column 'nope'"));
}

TEST_F(TableCommandsTest, HeadRendersLogicalTypes) {
  const std::string path = dir_.Join("types.parquet");
  Schema schema = Schema::FromFields({
      Leaf("day", PhysicalType::kInt32, Repetition::kRequired, LogicalType::Date()),
      Leaf("ts", PhysicalType::kInt64, Repetition::kRequired, LogicalType::Timestamp(TimeUnit::kMicros, true)),
      Leaf("price", PhysicalType::kInt64, Repetition::kRequired, LogicalType::Decimal(10, 2)),
      Leaf("id", PhysicalType::kFixedLenByteArray, Repetition::kRequired, LogicalType::Uuid())});
  ParquetWriter w(LocalFileSystem(), path, schema);
  w.WriteRows({Value::Struct({{"day", Value::Int(19000)},
                              {"ts", Value::Int(1700000000123456LL)},
                              {"price", Value::Int(-12345)},
                              {"id", Value::Bytes(std::string(16, '\xab'))}})});
  w.Close();
  Result r = RunLakerun("table head " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("2022-01-08 | 2023-11-14T22:13:20.123456Z | -123.45 | "
                                             "abababab-abab-abab-abab-abababababab"));
}

}  // namespace
}  // namespace lakerun::parquet
