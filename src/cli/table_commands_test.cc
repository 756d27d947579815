// `lakerun table head` and `table inspect`: value text (unit tests of cli/value_text.h), and the built binary on
// Parquet files, folders and Delta tables written here.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/value_text.h"
#include "lakerun/format/delta/checkpoint.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/parquet.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using parquet::Value;

// Big-endian two's complement bytes of a 128-bit integer.
std::string Int128Bytes(__int128 v) {
  std::string out(16, '\0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(static_cast<unsigned __int128>(v) & 0xff);
    v >>= 8;
  }
  return out;
}

// 10^38 - 1: the largest 38-digit decimal.
__int128 Max38Digits() {
  __int128 v = 1;
  for (int i = 0; i < 38; ++i) v *= 10;
  return v - 1;
}

// An INT96 timestamp of `nanos` (may lie outside one day) on Julian day `julian`.
std::string Int96(int64_t nanos, int32_t julian) {
  std::string out(12, '\0');
  std::memcpy(out.data(), &nanos, 8);
  std::memcpy(out.data() + 8, &julian, 4);
  return out;
}

TEST(ValueTextTest, DecimalsOfAnyWidth) {
  EXPECT_EQ(DecimalText(12345, 2), "123.45");
  EXPECT_EQ(DecimalText(-1, 3), "-0.001");
  EXPECT_EQ(DecimalText(INT64_MIN, 0), "-9223372036854775808");
  EXPECT_EQ(DecimalText(std::string("\x30\x39", 2), 2), "123.45");
  EXPECT_EQ(DecimalText(std::string("\xff", 1), 3), "-0.001");
  EXPECT_EQ(DecimalText(std::string("\x00\x00\x00", 3), 2), "0.00");
  EXPECT_EQ(DecimalText(Int128Bytes(Max38Digits()), 2), "999999999999999999999999999999999999.99");
  EXPECT_EQ(DecimalText(Int128Bytes(-Max38Digits()), 10), "-9999999999999999999999999999.9999999999");
  EXPECT_EQ(DecimalText(std::string(1, '\x80') + std::string(15, '\0'), 0),  // -2^127
            "-170141183460469231731687303715884105728");
  // Wider than 16 bytes: 2^160 - 1 as 21 bytes (a leading zero byte keeps it positive).
  EXPECT_EQ(DecimalText(std::string(1, '\0') + std::string(20, '\xff'), 0),
            "1461501637330902918203684832716283019655932542975");
}

TEST(ValueTextTest, DatesAndTimestampsInIso8601WithExpandedYears) {
  EXPECT_EQ(DateText(0), "1970-01-01");
  EXPECT_EQ(DateText(19000), "2022-01-08");
  EXPECT_EQ(DateText(-719528), "0000-01-01");
  EXPECT_EQ(DateText(-719529), "-0001-12-31");
  EXPECT_EQ(DateText(2932897), "+10000-01-01");
  EXPECT_EQ(TimestampText(1700000000123456LL, 1000000, true), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(TimestampText(1700000000123LL, 1000, false), "2023-11-14T22:13:20.123");
  EXPECT_EQ(TimestampText(-1, 1000000000, true), "1969-12-31T23:59:59.999999999Z");
  EXPECT_EQ(TimeText(3723004, 1000), "01:02:03.004");
  // INT96: the epoch, a time of day beyond one day, before midnight, and years far outside 0000-9999.
  EXPECT_EQ(Int96Text(Int96(0, 2440588)), "1970-01-01T00:00:00.000000000");
  EXPECT_EQ(Int96Text(Int96(86400LL * 1000000000 + 1, 2440588)), "1970-01-02T00:00:00.000000001");
  EXPECT_EQ(Int96Text(Int96(-1, 2440588)), "1969-12-31T23:59:59.999999999");
  EXPECT_EQ(Int96Text(Int96(3600LL * 1000000000, 0)), "-4713-11-24T01:00:00.000000000");
  EXPECT_EQ(Int96Text(Int96(-3600LL * 1000000000, INT32_MAX)), "+5874898-06-02T23:00:00.000000000");
  EXPECT_EQ(Int96Text(Int96(0, INT32_MIN)), "-5884323-05-15T00:00:00.000000000");
}

TEST(ValueTextTest, JsonAndCsvCarryFullValues) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
  DisplayType list;
  list.kind = DisplayType::Kind::kList;
  DisplayType decimal;
  decimal.kind = DisplayType::Kind::kDecimal;
  decimal.scale = 2;
  list.children.push_back(decimal);
  const Value v = Value::List({Value::Int(150), Value::Null(), Value::Bytes(Int128Bytes(-5))});
  EXPECT_EQ(CellText(v, list), "[1.50, null, -0.05]");
  EXPECT_EQ(JsonOf(v, list).dump(), R"(["1.50",null,"-0.05"])");
  EXPECT_EQ(CsvText(v, list), R"(["1.50",null,"-0.05"])");
  EXPECT_EQ(JsonOf(Value::Float(0.1f), DisplayType{}).dump(), "0.1");
  EXPECT_EQ(JsonOf(Value::Double(NAN), DisplayType{}).dump(), "\"NaN\"");
  EXPECT_EQ(JsonOf(Value::Bytes(std::string("\x00\xff", 2)), DisplayType{}).dump(), "\"AP8=\"");
}

// --- The built binary ---

using Result = lakerun::testing::ProgramRun;

// Runs lakerun with the arguments `args`, at most 60 s; stderr is captured too unless `stdout_only`.
Result RunLakerunArgs(const std::vector<std::string>& args, bool stdout_only = false) {
  if (std::getenv("LAKERUN_BINARY_DIR") == nullptr) setenv("LAKERUN_BINARY_DIR", LAKERUN_CLI_TEST_BINARY_DIR, 0);
  std::vector<std::string> argv = {lakerun::testing::BuiltProgram("lakerun")};
  argv.insert(argv.end(), args.begin(), args.end());
  lakerun::testing::TempDir dir;
  lakerun::testing::ChildOptions options;
  options.discard_stderr = stdout_only;
  return lakerun::testing::RunProgram(argv, dir.Join("lakerun.log"), std::chrono::seconds(60), options);
}

// Runs lakerun with `args` split at spaces.
Result RunLakerun(const std::string& args, bool stdout_only = false) {
  std::vector<std::string> argv;
  for (size_t begin = 0; begin < args.size();) {
    const size_t end = std::min(args.find(' ', begin), args.size());
    if (end > begin) argv.push_back(args.substr(begin, end - begin));
    begin = end + 1;
  }
  return RunLakerunArgs(argv, stdout_only);
}

// One JSON object per line, keys kept in their order.
std::vector<nlohmann::ordered_json> JsonLines(const std::string& text) {
  std::vector<nlohmann::ordered_json> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out.push_back(nlohmann::ordered_json::parse(text.substr(start, end - start)));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

void SetMtime(const std::string& path, int64_t ms) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ms / 1000;
  times[0].tv_nsec = times[1].tv_nsec = (ms % 1000) * 1000000;
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

class TableHeadTest : public ::testing::Test {
 protected:
  // A Delta table: version 0 creates it, versions 1 and 2 append rows 0-2 and 3-4.
  std::string DeltaTableWithTwoAppends() {
    const std::string path = dir_.Join("events");
    auto schema = delta::ParseSchema(
        R"j({"type":"struct","fields":[
          {"name":"id","type":"long","nullable":true,"metadata":{}},
          {"name":"price","type":"decimal(10,2)","nullable":true,"metadata":{}},
          {"name":"at","type":"timestamp","nullable":true,"metadata":{}},
          {"name":"day","type":"date","nullable":true,"metadata":{}},
          {"name":"a.b","type":"string","nullable":true,"metadata":{}}]})j",
        "test");
    delta::DeltaTable table = delta::CreateTable(path, schema);
    auto rows = [](int from, int to) {
      std::vector<Value> out;
      for (int i = from; i < to; ++i) {
        out.push_back(Value::Struct({{"id", Value::Int(i)},
                                     {"price", Value::Int(-12345 + i)},
                                     {"at", Value::Int(1700000000123456LL + i)},
                                     {"day", Value::Int(19000 + i)},
                                     {"a.b", Value::String("dot" + std::to_string(i))}}));
      }
      return out;
    };
    delta::AppendRows(table, rows(0, 3));
    delta::AppendRows(table, rows(3, 5));
    for (int v = 0; v <= 2; ++v) {
      SetMtime(JoinPath(table.log_path(), delta::CommitFileName(v)), 1764151200000 + v * 3600000);  // 10:00Z + v h
    }
    return path;
  }

  lakerun::testing::TempDir dir_;
};

TEST_F(TableHeadTest, ReadsADeltaTableWithItsTypes) {
  const std::string path = DeltaTableWithTwoAppends();
  Result r = RunLakerun("table head " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("id | price   | at                          | day        | a.b"));
  EXPECT_THAT(r.output, HasSubstr("0  | -123.45 | 2023-11-14T22:13:20.123456Z | 2022-01-08 | dot0"));
  EXPECT_THAT(r.output, HasSubstr("4  | -123.41 | 2023-11-14T22:13:20.123460Z | 2022-01-12 | dot4"));
  EXPECT_THAT(r.output, HasSubstr("(5 of 5 rows)"));
  // Columns in the order asked, a name with a dot included.
  Result projected = RunLakerun("table head -n 2 --columns price,a.b --format jsonl " + path, true);
  ASSERT_EQ(projected.exit_code, 0) << projected.output;
  auto lines = JsonLines(projected.output);
  ASSERT_EQ(lines.size(), 2u);
  // Files are read in the snapshot's order (by path), so which rows come first is not fixed.
  for (const auto& line : lines) {
    ASSERT_EQ(line.size(), 2u);
    EXPECT_EQ(line.begin().key(), "price");
    const int i = line["a.b"].get<std::string>().back() - '0';
    EXPECT_EQ(line["price"], "-123.4" + std::to_string(5 - i));
  }
  Result unknown = RunLakerun("table head --columns nope " + path);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.output, HasSubstr("nope"));
}

TEST_F(TableHeadTest, TimeTravelsByVersionAndTimestamp) {
  const std::string path = DeltaTableWithTwoAppends();
  Result v1 = RunLakerun("table head --version 1 " + path);
  ASSERT_EQ(v1.exit_code, 0) << v1.output;
  EXPECT_THAT(v1.output, HasSubstr("(3 of 3 rows)"));
  Result t1 = RunLakerun("table head --format csv --timestamp 2025-11-26T11:30:00Z " + path, true);
  ASSERT_EQ(t1.exit_code, 0) << t1.output;
  EXPECT_EQ(t1.output,
            "id,price,at,day,a.b\n"
            "0,-123.45,2023-11-14T22:13:20.123456Z,2022-01-08,dot0\n"
            "1,-123.44,2023-11-14T22:13:20.123457Z,2022-01-09,dot1\n"
            "2,-123.43,2023-11-14T22:13:20.123458Z,2022-01-10,dot2\n");
  Result t0 = RunLakerun("table head --timestamp 1764151200000 " + path);  // version 0: the table without rows
  ASSERT_EQ(t0.exit_code, 0) << t0.output;
  EXPECT_THAT(t0.output, HasSubstr("(0 of 0 rows)"));
  Result inspect = RunLakerun("table inspect --json --timestamp 2025-11-26T12:30:00+01:00 " + path, true);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_EQ(nlohmann::json::parse(inspect.output)["version"], 1);
  Result inspect2 = RunLakerun("table inspect --version 2 " + path);
  EXPECT_THAT(inspect2.output, HasSubstr("version        2"));
  Result early = RunLakerun("table head --timestamp 2000-01-01 " + path);
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_THAT(early.output, HasSubstr("before the earliest retained commit"));
  Result bad = RunLakerun("table head --timestamp yesterday " + path);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, HasSubstr("--timestamp 'yesterday'"));
  Result both = RunLakerun("table head --version 1 --timestamp 0 " + path);
  EXPECT_NE(both.exit_code, 0);
}

TEST_F(TableHeadTest, TimeTravelIsRefusedOnParquet) {
  const std::string file = dir_.Join("plain.parquet");
  parquet::ParquetWriter w(LocalFileSystem(), file, parquet::Schema::FromFields({parquet::Leaf(
                                                         "id", parquet::PhysicalType::kInt64)}));
  w.WriteRows({Value::Struct({{"id", Value::Int(1)}})});
  w.Close();
  for (const std::string command : {"head", "inspect"}) {
    Result r = RunLakerun("table " + command + " --version 0 " + file);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_THAT(r.output, HasSubstr(file + ": --version needs a Delta table"));
  }
  Result t = RunLakerun("table head --timestamp 0 " + file);
  EXPECT_THAT(t.output, HasSubstr("--timestamp needs a Delta table"));
}

TEST_F(TableHeadTest, EmptyDeltaTableHasItsSchemaAndNoRows) {
  const std::string path = dir_.Join("empty");
  delta::CreateTable(path, delta::ParseSchema(R"({"type":"struct","fields":[
      {"name":"id","type":"long","nullable":true,"metadata":{}},
      {"name":"name","type":"string","nullable":true,"metadata":{}}]})",
                                              "test"));
  Result head = RunLakerun("table head " + path);
  ASSERT_EQ(head.exit_code, 0) << head.output;
  EXPECT_THAT(head.output, HasSubstr("id | name\n---+-----\n(0 of 0 rows)"));
  Result csv = RunLakerun("table head --format csv " + path);
  EXPECT_EQ(csv.output, "id,name\n");
  Result inspect = RunLakerun("table inspect " + path);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_THAT(inspect.output, HasSubstr("files          0 (0 bytes)"));
  EXPECT_THAT(inspect.output, HasSubstr("  name: string"));
}

TEST_F(TableHeadTest, InspectNamesDataFilesThatAreMissingOrResizedAndExitsNonZero) {
  const std::string path = DeltaTableWithTwoAppends();
  Result clean = RunLakerun("table inspect " + path);
  ASSERT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_THAT(clean.output, Not(HasSubstr("error:")));
  delta::DeltaTable table(path);
  const delta::Snapshot s = table.Latest();
  ASSERT_GE(s.files.size(), 2u);
  const std::string gone = s.DataFilePath(s.files[0]), cut = s.DataFilePath(s.files[1]);
  LocalFileSystem().Remove(gone);
  LocalFileSystem().WriteAtomically(cut, "PAR1");
  Result text = RunLakerun("table inspect " + path);
  EXPECT_EQ(text.exit_code, 1) << text.output;
  EXPECT_THAT(text.output, HasSubstr("error: 1 data file the log references are missing:\n  " + gone));
  EXPECT_THAT(text.output, HasSubstr(cut + " (4 bytes, the log says " + std::to_string(s.files[1].size) + ")"));
  Result report = RunLakerun("table inspect " + path, true);  // the errors went to stderr, the report to stdout
  EXPECT_EQ(report.exit_code, 1);
  EXPECT_THAT(report.output, HasSubstr("history ("));
  EXPECT_THAT(report.output, Not(HasSubstr("error:")));
  Result json = RunLakerun("table inspect --json " + path, true);
  EXPECT_EQ(json.exit_code, 1);
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["missingFiles"], nlohmann::json::array({gone}));
  EXPECT_EQ(j["filesOfWrongSize"].size(), 1u);
}

TEST_F(TableHeadTest, DamagedLastCheckpointFallsBackToListingTheLog) {
  const std::string path = DeltaTableWithTwoAppends();
  delta::DeltaTable table(path);
  delta::WriteCheckpoint(table, table.Latest());
  for (const std::string damage : {"", "{\"version\":", "not json"}) {
    LocalFileSystem().WriteAtomically(JoinPath(table.log_path(), "_last_checkpoint"), damage);
    Result inspect = RunLakerun("table inspect " + path);
    ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
    EXPECT_THAT(inspect.output, HasSubstr("replayed from version 2, _last_checkpoint ignored"));
    Result json = RunLakerun("table inspect --json " + path, true);
    ASSERT_EQ(json.exit_code, 0) << json.output;
    auto j = nlohmann::json::parse(json.output);
    EXPECT_EQ(j["checkpointVersion"], 2);
    EXPECT_TRUE(j["lastCheckpoint"].contains("ignored"));
    Result head = RunLakerun("table head " + path);
    ASSERT_EQ(head.exit_code, 0) << head.output;
    EXPECT_THAT(head.output, HasSubstr("(5 of 5 rows)"));
  }
}

// Writes a commit file of `lines` (one action each) into `table`'s log.
void WriteCommitFile(const std::string& table, int64_t version, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  LocalFileSystem().CreateDirs(JoinPath(table, "_delta_log"));
  LocalFileSystem().WriteAtomically(JoinPath(JoinPath(table, "_delta_log"), delta::CommitFileName(version)), text);
}

std::string MetadataAction(const std::string& fields_json) {
  nlohmann::json schema = {{"type", "struct"}, {"fields", nlohmann::json::parse(fields_json)}};
  nlohmann::json m = {{"metaData",
                       {{"id", "test-table"},
                        {"format", {{"provider", "parquet"}, {"options", nlohmann::json::object()}}},
                        {"schemaString", schema.dump()},
                        {"partitionColumns", nlohmann::json::array()},
                        {"configuration", nlohmann::json::object()},
                        {"createdTime", 0}}}};
  return m.dump();
}

TEST_F(TableHeadTest, UnsupportedReaderFeatureIsRefusedWithTheFeatureAndTableNamed) {
  const std::string path = dir_.Join("future");
  WriteCommitFile(path, 0,
                  {R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType"],)"
                   R"("writerFeatures":["variantType"]}})",
                   MetadataAction(R"([{"name":"id","type":"long","nullable":true,"metadata":{}}])")});
  for (const std::string command : {"head", "inspect"}) {
    Result r = RunLakerun("table " + command + " " + path);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_THAT(r.output, HasSubstr("'variantType'"));
    EXPECT_THAT(r.output, HasSubstr("table " + path));
  }
}

TEST_F(TableHeadTest, DeltaDecimalsWiderThanEightBytes) {
  // lakerun's Delta writer stops at precision 18: the log is written by hand, the data file by the Parquet writer.
  const std::string path = dir_.Join("wide");
  LocalFileSystem().CreateDirs(path);
  const std::string data = JoinPath(path, "part-0.parquet");
  parquet::ParquetWriter w(
      LocalFileSystem(), data,
      parquet::Schema::FromFields({parquet::Leaf("amount", parquet::PhysicalType::kFixedLenByteArray,
                                                 parquet::Repetition::kOptional, parquet::LogicalType::Decimal(38, 2),
                                                 16)}));
  w.WriteRows({Value::Struct({{"amount", Value::Bytes(Int128Bytes(Max38Digits()))}}),
               Value::Struct({{"amount", Value::Bytes(Int128Bytes(-12345))}}),
               Value::Struct({{"amount", Value::Null()}})});
  w.Close();
  const auto size = LocalFileSystem().Stat(data)->size;
  WriteCommitFile(path, 0,
                  {R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})",
                   MetadataAction(R"j([{"name":"amount","type":"decimal(38,2)","nullable":true,"metadata":{}}])j"),
                   R"({"add":{"path":"part-0.parquet","partitionValues":{},"size":)" + std::to_string(size) +
                       R"(,"modificationTime":0,"dataChange":true,"stats":"{\"numRecords\":3}"}})"});
  Result r = RunLakerun("table head --format jsonl " + path, true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            "{\"amount\":\"999999999999999999999999999999999999.99\"}\n{\"amount\":\"-123.45\"}\n"
            "{\"amount\":null}\n");
}

TEST_F(TableHeadTest, ParquetFolderIsReadInPathOrder) {
  const std::string folder = dir_.Join("folder");
  const auto schema = parquet::Schema::FromFields({parquet::Leaf("id", parquet::PhysicalType::kInt64)});
  for (int part = 0; part < 2; ++part) {
    LocalFileSystem().CreateDirs(JoinPath(folder, "k=" + std::to_string(part)));
    parquet::ParquetWriter w(LocalFileSystem(), JoinPath(folder, "k=" + std::to_string(part) + "/data.parquet"),
                             schema);
    w.WriteRows({Value::Struct({{"id", Value::Int(part * 10)}}), Value::Struct({{"id", Value::Int(part * 10 + 1)}}),
                 Value::Struct({{"id", Value::Int(part * 10 + 2)}})});
    w.Close();
  }
  LocalFileSystem().WriteAtomically(JoinPath(folder, "_SUCCESS"), "");
  Result r = RunLakerun("table head -n 4 --format csv " + folder);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "id\n0\n1\n2\n10\n");
  Result text = RunLakerun("table head " + folder);
  EXPECT_THAT(text.output, HasSubstr("(6 of 6 rows)"));
  LocalFileSystem().CreateDirs(dir_.Join("nothing"));
  Result empty = RunLakerun("table head " + dir_.Join("nothing"));
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.output, HasSubstr("without Parquet files"));
}

TEST_F(TableHeadTest, ParquetFormatsDottedNamesAndFarValues) {
  const std::string file = dir_.Join("values.parquet");
  using parquet::Leaf;
  using parquet::LogicalType;
  using parquet::PhysicalType;
  using parquet::Repetition;
  const auto schema = parquet::Schema::FromFields({
      Leaf("id", PhysicalType::kInt64),
      Leaf("a.b", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()),
      Leaf("with space", PhysicalType::kByteArray, Repetition::kOptional),
      Leaf("old", PhysicalType::kInt96, Repetition::kOptional),
      Leaf("big", PhysicalType::kFixedLenByteArray, Repetition::kOptional, LogicalType::Decimal(38, 4), 16),
      Leaf("var", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::Decimal(40, 0)),
      Leaf("ns", PhysicalType::kInt64, Repetition::kOptional,
           LogicalType::Timestamp(parquet::TimeUnit::kNanos, false)),
  });
  const std::string long_text = "x,\"y\"\n" + std::string(60, 'z');
  parquet::ParquetWriter w(LocalFileSystem(), file, schema);
  w.WriteRows({Value::Struct({{"id", Value::Int(1)},
                              {"a.b", Value::String(long_text)},
                              {"with space", Value::Bytes(std::string("\x00\x01\xfe", 3))},
                              {"old", Value::Bytes(Int96(-1, 2440588))},
                              {"big", Value::Bytes(Int128Bytes(-Max38Digits()))},
                              {"var", Value::Bytes(std::string(1, '\x01') + std::string(17, '\0'))},
                              {"ns", Value::Int(-1)}}),
               Value::Struct({{"id", Value::Int(2)},
                              {"a.b", Value::Null()},
                              {"with space", Value::Null()},
                              {"old", Value::Bytes(Int96(0, 2440588 + 2932897))},
                              {"big", Value::Null()},
                              {"var", Value::Null()},
                              {"ns", Value::Null()}})});
  w.Close();
  Result text = RunLakerun("table head --columns old,a.b,id " + file);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  // Columns in the order asked; the INT96 column is as wide as its widest value (31 bytes).
  EXPECT_THAT(text.output, HasSubstr("old" + std::string(28, ' ') + " | a.b"));
  EXPECT_THAT(text.output, HasSubstr("1969-12-31T23:59:59.999999999   | x,\"y\" zzzz"));
  EXPECT_THAT(text.output, HasSubstr("+10000-01-01T00:00:00.000000000 | null"));
  EXPECT_THAT(text.output, HasSubstr(std::string(39, 'z') + "... | 1\n"));  // cut at 48 bytes
  Result csv = RunLakerun("table head --format csv " + file, true);
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output,
            "id,a.b,with space,old,big,var,ns\n"
            "1,\"x,\"\"y\"\"\n" + std::string(60, 'z') +
                "\",AAH+,1969-12-31T23:59:59.999999999,-9999999999999999999999999999999999.9999,"
                "87112285931760246646623899502532662132736,1969-12-31T23:59:59.999999999\n"
                "2,,,+10000-01-01T00:00:00.000000000,,,\n");
  Result jsonl = RunLakerun("table head -n 1 --format jsonl " + file, true);
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.output;
  auto lines = JsonLines(jsonl.output);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["a.b"], long_text);
  EXPECT_EQ(lines[0]["with space"], "AAH+");
  EXPECT_EQ(lines[0]["big"], "-9999999999999999999999999999999999.9999");
  Result bad = RunLakerun("table head --format xml " + file);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, HasSubstr("--format 'xml'"));
}

// --- table inspect --filter: what a filter skips, in files whose layout fixes the answer ---

// Rows {"x": i, "y": i / 2} for i in [from, to).
std::vector<Value> XyRows(int64_t from, int64_t to) {
  std::vector<Value> rows;
  for (int64_t i = from; i < to; ++i) rows.push_back(Value::Struct({{"x", Value::Int(i)}, {"y", Value::Int(i / 2)}}));
  return rows;
}

// Uncompressed, no dictionary, 800-byte pages: 100 rows a page for INT64, 200 for INT32.
parquet::WriterOptions SmallPages(int64_t row_group_rows) {
  parquet::WriterOptions o;
  o.row_group_rows = row_group_rows;
  o.page_bytes = 800;
  o.dictionary = false;
  o.codec = parquet::Codec::kUncompressed;
  return o;
}

int64_t RowGroupBytes(const parquet::RowGroupMeta& g) {
  int64_t n = 0;
  for (const auto& c : g.columns) n += c.total_compressed_size;
  return n;
}

nlohmann::json InspectJson(const std::string& path, const std::string& filter) {
  Result r = RunLakerunArgs({"table", "inspect", "--json", "--filter", filter, path}, true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output)["filter_skips"];
}

TEST_F(TableHeadTest, InspectFilterOnASortedParquetFile) {
  // x = 0..9999 sorted, 10 row groups of 1000 rows; x: 10 pages a row group, y (INT32): 5.
  const std::string file = dir_.Join("sorted.parquet");
  {
    parquet::ParquetWriter w(LocalFileSystem(), file,
                             parquet::Schema::FromFields({parquet::Leaf("x", parquet::PhysicalType::kInt64),
                                                          parquet::Leaf("y", parquet::PhysicalType::kInt32)}),
                             SmallPages(1000));
    w.WriteRows(XyRows(0, 10000));
    w.Close();
  }
  auto pq = parquet::ParquetFile::Open(LocalFileSystem(), file);
  int64_t all = 0;
  for (const auto& g : pq->metadata().row_groups) all += RowGroupBytes(g);
  const int64_t first = RowGroupBytes(pq->metadata().row_groups[0]);

  const nlohmann::json j = InspectJson(file, "x < 100");
  EXPECT_EQ(j["filter"], "x < 100");
  EXPECT_EQ(j["files"]["total"], 1);
  EXPECT_EQ(j["files"]["skipped"], 0);
  EXPECT_EQ(j["row_groups"]["total"], 10);
  EXPECT_EQ(j["row_groups"]["skipped"], 9);
  EXPECT_EQ(j["row_groups"]["total_bytes"], all);
  EXPECT_EQ(j["row_groups"]["skipped_bytes"], all - first);
  EXPECT_EQ(j["pages"]["total"], 15);    // of the kept row group: 10 of x, 5 of y
  EXPECT_EQ(j["pages"]["skipped"], 13);  // x's rows 100..999 and y's rows 200..999
  EXPECT_EQ(j["pages"]["chunks_without_page_index"], 0);
  EXPECT_EQ(j["rows"]["in_kept_row_groups"], 1000);
  EXPECT_EQ(j["rows"]["in_kept_pages"], 100);

  // OR across row groups, AND across columns with other page boundaries.
  const nlohmann::json k = InspectJson(file, "(x < 100 or x >= 9950) and y >= 40");
  EXPECT_EQ(k["row_groups"]["skipped"], 8);
  EXPECT_EQ(k["rows"]["in_kept_pages"], 200);  // x's pages [0,100) (y up to 49) and [9900,10000)
  // y's first page (rows 0..199) holds y <= 99: only x's third page [200,300) meets y's second page.
  const nlohmann::json both = InspectJson(file, "x < 300 and y >= 100");
  EXPECT_EQ(both["row_groups"]["skipped"], 9);
  EXPECT_EQ(both["rows"]["in_kept_pages"], 100);
  EXPECT_EQ(both["pages"]["skipped"], 13);

  Result text = RunLakerunArgs({"table", "inspect", "--filter", "x < 100", file});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("filter: x < 100"));
  EXPECT_THAT(text.output, HasSubstr("rows: 10000 in kept files, 1000 in kept row groups, 100 in kept pages"));

  Result unknown = RunLakerunArgs({"table", "inspect", "--filter", "nope < 1", file});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.output, HasSubstr("'nope'"));
  Result bad = RunLakerunArgs({"table", "inspect", "--filter", "x <", file});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, HasSubstr("--filter 'x <'"));
}

TEST_F(TableHeadTest, InspectFilterOnAHivePartitionedFolder) {
  const std::string folder = dir_.Join("hive");
  const auto schema = parquet::Schema::FromFields({parquet::Leaf("x", parquet::PhysicalType::kInt64),
                                                   parquet::Leaf("y", parquet::PhysicalType::kInt32)});
  for (int k = 0; k < 4; ++k) {
    LocalFileSystem().CreateDirs(JoinPath(folder, "k=" + std::to_string(k)));
    parquet::ParquetWriter w(LocalFileSystem(), JoinPath(folder, "k=" + std::to_string(k) + "/part.parquet"), schema,
                             SmallPages(500));
    w.WriteRows(XyRows(k * 1000, k * 1000 + 1000));
    w.Close();
  }
  const nlohmann::json j = InspectJson(folder, "k >= 2 and x < 2600");
  EXPECT_EQ(j["files"]["total"], 4);
  EXPECT_EQ(j["files"]["skipped"], 2);                 // k = 0, 1
  EXPECT_EQ(j["row_groups"]["total"], 4);              // two a kept file
  EXPECT_EQ(j["row_groups"]["skipped"], 2);            // both of k = 3 (x 3000..3999)
  EXPECT_EQ(j["rows"]["in_kept_pages"], 600);          // x 2000..2599
  Result unknown = RunLakerunArgs({"table", "inspect", "--filter", "nope = 1", folder});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.output, HasSubstr("'nope'"));
}

TEST_F(TableHeadTest, InspectFilterOnADeltaTable) {
  // Partitioned by split (x < 5000: 'a', else 'b'), 4 files of 2500 rows, row groups of 500 rows, pages of 100.
  const std::string path = dir_.Join("delta");
  auto schema = delta::ParseSchema(
      R"j({"type":"struct","fields":[
        {"name":"x","type":"long","nullable":true,"metadata":{}},
        {"name":"split","type":"string","nullable":true,"metadata":{}}]})j",
      "test");
  delta::CreateTableOptions create;
  create.partition_columns = {"split"};
  delta::DeltaTable table = delta::CreateTable(path, schema, create);
  std::vector<Value> rows;
  for (int64_t i = 0; i < 10000; ++i) {
    rows.push_back(Value::Struct({{"x", Value::Int(i)}, {"split", Value::String(i < 5000 ? "a" : "b")}}));
  }
  delta::WriteOptions options;
  options.parquet = SmallPages(500);
  options.codec = parquet::Codec::kUncompressed;
  options.max_rows_per_file = 2500;
  delta::AppendRows(table, rows, options);
  // x is nullable in the data files: its pages hold fewer rows than 100; the kept file's index says how many.
  const delta::Snapshot snapshot = table.Latest();
  std::optional<parquet::OffsetIndex> pages;
  for (const auto& f : snapshot.files) {
    auto file = parquet::ParquetFile::Open(LocalFileSystem(), snapshot.DataFilePath(f));
    const auto& stats = file->metadata().row_groups[0].columns[0].statistics;
    if (stats->MinValue(file->schema().column(0))->as_int() == 5000) pages = file->ReadOffsetIndex(0, 0);
  }
  ASSERT_TRUE(pages.has_value());
  const int64_t page_rows = pages->page_locations.at(1).first_row_index;
  const nlohmann::json j = InspectJson(path, "split = 'b' and x < 5100");
  EXPECT_EQ(j["files"]["total"], 4);
  EXPECT_EQ(j["files"]["skipped"], 3);      // both 'a' files by partition, x 7500..9999 by its stats
  EXPECT_EQ(j["row_groups"]["total"], 5);
  EXPECT_EQ(j["row_groups"]["skipped"], 4);
  EXPECT_EQ(j["pages"]["total"], pages->page_locations.size());
  EXPECT_EQ(j["pages"]["skipped"], pages->page_locations.size() - (100 + page_rows - 1) / page_rows);
  EXPECT_EQ(j["rows"]["in_kept_pages"], (100 + page_rows - 1) / page_rows * page_rows);
  int64_t sizes = 0;
  for (const auto& f : table.Latest().files) sizes += f.size;
  EXPECT_EQ(j["files"]["total_bytes"], sizes);
  // Version 0 has no files: time travel is taken as inspect takes it.
  Result v0 = RunLakerunArgs({"table", "inspect", "--json", "--version", "0", "--filter", "x < 1", path}, true);
  ASSERT_EQ(v0.exit_code, 0) << v0.output;
  EXPECT_EQ(nlohmann::json::parse(v0.output)["filter_skips"]["files"]["total"], 0);
  Result unknown = RunLakerunArgs({"table", "inspect", "--filter", "nope = 1", path});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.output, HasSubstr("unknown column 'nope'"));
}

// --- Memory limits ---

// Runs `lakerun args...` with its address space limited to `limit_kib` KiB (RLIMIT_AS, set by `ulimit -v` in a shell
// that then execs lakerun). exit_code 125: the shell could not set the limit.
Result RunLakerunLimited(uint64_t limit_kib, const std::vector<std::string>& args) {
  if (std::getenv("LAKERUN_BINARY_DIR") == nullptr) setenv("LAKERUN_BINARY_DIR", LAKERUN_CLI_TEST_BINARY_DIR, 0);
  const std::string script = "ulimit -v " + std::to_string(limit_kib) + " || exit 125; exec \"$@\"";
  std::vector<std::string> argv = {"/bin/sh", "-c", script, "sh", lakerun::testing::BuiltProgram("lakerun")};
  argv.insert(argv.end(), args.begin(), args.end());
  lakerun::testing::TempDir dir;
  return lakerun::testing::RunProgram(argv, dir.Join("lakerun.log"), std::chrono::seconds(60));
}

// The smallest address-space limit (to 32 MiB) under which `lakerun args...` succeeds: lakerun's own baseline
// (program, libraries, thread stacks and arenas). 0: none up to 32 GiB (a sanitizer build reserves far more), or the
// limit cannot be set.
uint64_t BaselineKib(const std::vector<std::string>& args) {
  uint64_t lo = 0, hi = 256 << 10;  // KiB: lo fails, hi is being tried
  while (true) {
    const Result r = RunLakerunLimited(hi, args);
    if (r.exit_code == 125) return 0;
    if (r.exit_code == 0) break;
    lo = hi;
    hi *= 2;
    if (hi > (uint64_t{32} << 20)) return 0;
  }
  while (hi - lo > (32 << 10)) {
    const uint64_t mid = (lo + hi) / 2;
    (RunLakerunLimited(mid, args).exit_code == 0 ? hi : lo) = mid;
  }
  return hi;
}

// A column chunk larger than the memory left to the process: `table head` fails with a ResourceError naming the
// file, row group, column and the bytes asked for, not a bare std::bad_alloc. The chunk is one 600 MiB page (so
// even the first rows need all of it) of 4 KiB values; lakerun runs with 400-432 MiB of address space beyond what
// it needs for a small file of the same schema.
TEST_F(TableHeadTest, AColumnChunkLargerThanTheMemoryLimitIsAResourceErrorNamingIt) {
  const parquet::Schema schema =
      parquet::Schema::FromFields({parquet::Leaf("id", parquet::PhysicalType::kInt64),
                                   parquet::Leaf("blob", parquet::PhysicalType::kFixedLenByteArray,
                                                 parquet::Repetition::kRequired, {}, 4096)});
  parquet::WriterOptions o;
  o.codec = parquet::Codec::kUncompressed;
  o.dictionary = o.statistics = o.page_index = false;
  o.page_bytes = int64_t{1} << 30;  // one page per chunk
  auto write = [&](const std::string& path, size_t rows) {
    std::vector<int64_t> ids(rows);
    for (size_t i = 0; i < rows; ++i) ids[i] = static_cast<int64_t>(i);
    std::vector<parquet::ColumnData> columns;
    columns.push_back(parquet::ColumnData::Int64s(ids));
    {
      std::string blobs(rows * 4096, 'b');
      columns.push_back(parquet::ColumnData::FromRaw(parquet::PhysicalType::kFixedLenByteArray, 4096, blobs.data(),
                                                     rows));
    }
    parquet::ParquetWriter writer(LocalFileSystem(), path, schema, o);
    writer.WriteRowGroup(columns);
    writer.Close();
  };
  const std::string small = dir_.Join("small.parquet"), big = dir_.Join("big.parquet");
  write(small, 16);
  const uint64_t baseline = BaselineKib({"table", "head", "-n", "5", small});
  if (baseline == 0) GTEST_SKIP() << "no address-space limit (RLIMIT_AS) up to 32 GiB lets lakerun run here";
  const size_t rows = 153600;  // 600 MiB of blobs
  write(big, rows);
  const uint64_t limit = baseline + (400 << 10);
  RecordProperty("baseline_kib", std::to_string(baseline));
  const Result fails = RunLakerunLimited(limit, {"table", "head", "-n", "5", big});
  EXPECT_EQ(fails.exit_code, 1) << fails.output;
  const int64_t chunk = parquet::ParquetFile::Open(LocalFileSystem(), big)->metadata().row_groups[0].columns[1]
                            .total_compressed_size;  // the page's values and its header
  ASSERT_GT(chunk, static_cast<int64_t>(rows * 4096));
  EXPECT_THAT(fails.output, HasSubstr(big + ": row group 0, column 'blob': cannot allocate " + std::to_string(chunk) +
                                      " bytes for the column chunk"));
  EXPECT_THAT(fails.output, HasSubstr("memory limit"));
  EXPECT_THAT(fails.output, Not(HasSubstr("std::bad_alloc")));
  // Under the same limit, the small column alone is read: only its page of the first rows.
  const Result ids = RunLakerunLimited(limit, {"table", "head", "-n", "2", "--columns", "id", "--format", "csv", big});
  EXPECT_EQ(ids.exit_code, 0) << ids.output;
  EXPECT_THAT(ids.output, HasSubstr("id\n0\n1\n"));
  // inspect reads metadata and page headers only.
  const Result inspect = RunLakerunLimited(limit, {"table", "inspect", big});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  ::unlink(big.c_str());
}

}  // namespace
}  // namespace lakerun::cli
