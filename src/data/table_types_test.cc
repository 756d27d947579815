// Every Parquet leaf type reaches the loader in its documented tensor form, under every null policy (error,
// fill, mask, drop_row) and every form a column offers (decimals as float64 or unscaled int64, timestamps in
// microseconds or nanoseconds); values a form cannot hold exactly are refused naming the column and the row.
#include <ATen/ATen.h>
#include <gmock/gmock.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/column_policy.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;
using pq::LogicalType;
using pq::PhysicalType;
using pq::Value;

constexpr int64_t kNanosPerDay = 86400LL * 1000000000;

// An INT96 timestamp's 12 bytes: nanoseconds of the day, then the Julian day, little-endian.
std::string Int96(int64_t nanos) {
  int64_t day = nanos / kNanosPerDay, of_day = nanos % kNanosPerDay;
  if (of_day < 0) {
    of_day += kNanosPerDay;
    --day;
  }
  const auto julian = static_cast<int32_t>(day + 2440588);
  std::string out(12, '\0');
  std::memcpy(out.data(), &of_day, 8);
  std::memcpy(out.data() + 8, &julian, 4);
  return out;
}

// `v` as an n-byte big-endian two's-complement integer (a DECIMAL's FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY bytes).
std::string BigEndian(__int128 v, size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[n - 1 - i] = static_cast<char>(static_cast<uint8_t>(v >> (8 * i)));
  return out;
}

// One column of the test file: its node, the values of rows 0, 1 and 3 (row 2 is null), and what the loader
// gives: the dtype and the values (integers exactly, floating-point values as doubles).
struct TypeCase {
  pq::SchemaNode node;
  std::vector<Value> stored;
  at::ScalarType dtype;
  std::vector<int64_t> ints{};
  std::vector<double> reals{};
};

pq::SchemaNode Optional(const std::string& name, PhysicalType type, LogicalType logical = {}, int32_t width = 0) {
  return pq::Leaf(name, type, pq::Repetition::kOptional, logical, width);
}

std::vector<TypeCase> Cases() {
  const int64_t t = 1580544550123456;  // 2020-02-01T08:09:10.123456Z in microseconds
  const __int128 wide = static_cast<__int128>(123456789012345678LL) * 1000000000000LL;  // 30 digits
  return {
      {Optional("i8", PhysicalType::kInt32, LogicalType::Int(8, true)),
       {Value::Int(-128), Value::Int(7), Value::Int(127)}, at::kChar, {-128, 7, 127}},
      {Optional("i16", PhysicalType::kInt32, LogicalType::Int(16, true)),
       {Value::Int(-32768), Value::Int(300), Value::Int(32767)}, at::kShort, {-32768, 300, 32767}},
      {Optional("u8", PhysicalType::kInt32, LogicalType::Int(8, false)),
       {Value::Int(0), Value::Int(200), Value::Int(255)}, at::kByte, {0, 200, 255}},
      {Optional("u16", PhysicalType::kInt32, LogicalType::Int(16, false)),
       {Value::Int(0), Value::Int(40000), Value::Int(65535)}, at::kInt, {0, 40000, 65535}},
      {Optional("u32", PhysicalType::kInt32, LogicalType::Int(32, false)),
       {Value::Int(4294967295LL), Value::Int(0), Value::Int(3000000000LL)}, at::kLong,
       {4294967295LL, 0, 3000000000LL}},
      {Optional("u64", PhysicalType::kInt64, LogicalType::Int(64, false)),
       {Value::Int(0), Value::Int(5), Value::Int(INT64_MAX)}, at::kLong, {0, 5, INT64_MAX}},
      {Optional("f16", PhysicalType::kFixedLenByteArray, LogicalType::Float16(), 2),
       {Value::Bytes(std::string("\x00\x3c", 2)), Value::Bytes(std::string("\x00\xc0", 2)),
        Value::Bytes(std::string("\x01\x00", 2))}, at::kFloat, {}, {1.0, -2.0, 5.9604644775390625e-8}},
      {Optional("day", PhysicalType::kInt32, LogicalType::Date()),
       {Value::Int(0), Value::Int(18293), Value::Int(-1)}, at::kInt, {0, 18293, -1}},
      {Optional("ts_ms", PhysicalType::kInt64, LogicalType::Timestamp(pq::TimeUnit::kMillis, true)),
       {Value::Int(1580544550123), Value::Int(-1), Value::Int(0)}, at::kLong, {1580544550123000, -1000, 0}},
      {Optional("ts_us", PhysicalType::kInt64, LogicalType::Timestamp(pq::TimeUnit::kMicros, false)),
       {Value::Int(t), Value::Int(-1), Value::Int(0)}, at::kLong, {t, -1, 0}},
      {Optional("ts_ns", PhysicalType::kInt64, LogicalType::Timestamp(pq::TimeUnit::kNanos, true)),
       {Value::Int(t * 1000), Value::Int(-1000), Value::Int(0)}, at::kLong, {t, -1, 0}},
      {Optional("ts96", PhysicalType::kInt96),
       {Value::Bytes(Int96(t * 1000)), Value::Bytes(Int96(-kNanosPerDay + 1000)), Value::Bytes(Int96(0))}, at::kLong,
       {t, -86400000000LL + 1, 0}},
      {Optional("t_ms", PhysicalType::kInt32, LogicalType::Time(pq::TimeUnit::kMillis, true)),
       {Value::Int(1000), Value::Int(86399999), Value::Int(0)}, at::kLong, {1000000, 86399999000LL, 0}},
      {Optional("dec32", PhysicalType::kInt32, LogicalType::Decimal(9, 2)),
       {Value::Int(12345), Value::Int(-1), Value::Int(0)}, at::kDouble, {}, {123.45, -0.01, 0}},
      {Optional("dec64", PhysicalType::kInt64, LogicalType::Decimal(18, 4)),
       {Value::Int(123456789012345678LL), Value::Int(-5), Value::Int(1)}, at::kDouble, {},
       {12345678901234.5678, -0.0005, 0.0001}},
      {Optional("dec128", PhysicalType::kFixedLenByteArray, LogicalType::Decimal(38, 6), 16),
       {Value::Bytes(BigEndian(wide, 16)), Value::Bytes(BigEndian(-5, 16)), Value::Bytes(BigEndian(0, 16))},
       at::kDouble, {}, {123456789012345678000000.0, -0.000005, 0}},
      {Optional("decbin", PhysicalType::kByteArray, LogicalType::Decimal(10, 3)),
       {Value::Bytes(BigEndian(1234, 2)), Value::Bytes(BigEndian(-129, 2)), Value::Bytes(BigEndian(0, 1))},
       at::kDouble, {}, {1.234, -0.129, 0}},
      {Optional("flag", PhysicalType::kBoolean), {Value::Bool(true), Value::Bool(false), Value::Bool(true)},
       at::kBool, {1, 0, 1}},
      {Optional("f32", PhysicalType::kFloat), {Value::Float(1.5f), Value::Float(-0.25f), Value::Float(3e38f)},
       at::kFloat, {}, {1.5, -0.25, static_cast<double>(3e38f)}},
      {Optional("f64", PhysicalType::kDouble), {Value::Double(1e300), Value::Double(-2), Value::Double(0.1)},
       at::kDouble, {}, {1e300, -2, 0.1}},
  };
}

// Writes the cases' columns to one file: rows 0, 1, 3 hold the values, row 2 is null in every column.
std::string WriteCases(const testing::TempDir& dir, const std::vector<TypeCase>& cases) {
  std::vector<pq::SchemaNode> fields;
  for (const TypeCase& c : cases) fields.push_back(c.node);
  std::vector<Value> rows;
  for (int r = 0; r < 4; ++r) {
    std::vector<std::pair<std::string, Value>> row;
    for (const TypeCase& c : cases) {
      row.emplace_back(c.node.name, r == 2 ? Value::Null() : c.stored[static_cast<size_t>(r < 2 ? r : 2)]);
    }
    rows.push_back(Value::Struct(std::move(row)));
  }
  const std::string path = dir.Join("types.parquet");
  pq::ParquetWriter writer(LocalFileSystem(), path, pq::Schema::FromFields(fields));
  writer.WriteRows(rows);
  writer.Close();
  return path;
}

at::Tensor Longs(std::vector<int64_t> values) { return at::tensor(values, at::kLong); }

// The table's rows in file order, in one batch.
Batch ReadAll(const std::shared_ptr<RowSource>& source, LoaderOptions o) {
  o.batch_size = static_cast<int64_t>(source->num_rows());
  o.shuffle.enabled = false;
  Loader loader(source, o);
  std::optional<Batch> b = loader.Next();
  LAKERUN_CHECK(b.has_value(), "no batch");
  return *b;
}

void ExpectValues(const TypeCase& c, const at::Tensor& tensor, const std::vector<int64_t>& rows) {
  SCOPED_TRACE(c.node.name);
  ASSERT_EQ(tensor.scalar_type(), c.dtype);
  ASSERT_EQ(tensor.size(0), static_cast<int64_t>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t k = static_cast<size_t>(rows[i] < 2 ? rows[i] : 2);  // row 3 holds the third value
    if (!c.ints.empty()) {
      EXPECT_EQ(tensor[static_cast<int64_t>(i)].item<int64_t>(), c.ints[k]) << "row " << rows[i];
    } else {
      EXPECT_EQ(tensor[static_cast<int64_t>(i)].item<double>(), c.reals[k]) << "row " << rows[i];
    }
  }
}

TEST(TableTypesTest, EveryLeafTypeBecomesItsDocumentedTensorUnderEveryNullPolicy) {
  testing::TempDir dir;
  const std::vector<TypeCase> cases = Cases();
  const std::string path = WriteCases(dir, cases);
  auto source = OpenTable(path, {});
  ASSERT_EQ(source->columns().size(), cases.size());
  for (const TypeCase& c : cases) {
    // error: the default, naming the column and the row.
    TableOptions one;
    one.columns = {c.node.name};
    EXPECT_THROW_WITH(ReadAll(OpenTable(path, one), {}), InvalidArgument, "'" + c.node.name + "'", "null",
                      "types.parquet");
    // fill and mask.
    LoaderOptions o;
    o.nulls[c.node.name].fill_value = 1;
    const Batch filled = ReadAll(OpenTable(path, one), o);
    const at::Tensor values = filled.at(c.node.name);
    ExpectValues(c, values.index({Longs({0, 1, 3})}), {0, 1, 3});
    EXPECT_EQ(values[2].item<double>(), 1) << c.node.name;
    EXPECT_TRUE(at::equal(filled.at(c.node.name + kValidSuffix), at::tensor({1, 1, 0, 1}).to(at::kBool)));
    // drop_row.
    one.drop_null_rows = {c.node.name};
    const Batch dropped = ReadAll(OpenTable(path, one), {});
    ExpectValues(c, dropped.at(c.node.name), {0, 1, 3});
    EXPECT_TRUE(at::equal(dropped.sample_ids, Longs({0, 1, 2})));
  }
}

TEST(TableTypesTest, DecimalsReadUnscaledAndTimestampsInNanosecondsWhenAsked) {
  testing::TempDir dir;
  const std::string path = WriteCases(dir, Cases());
  TableOptions t;
  t.columns = {"dec32", "decbin", "ts_ms", "ts96", "t_ms"};
  t.forms["dec32"].decimal = DecimalForm::kUnscaledInt64;
  t.forms["decbin"].decimal = DecimalForm::kUnscaledInt64;
  for (const char* c : {"ts_ms", "ts96", "t_ms"}) t.forms[c].timestamp = TimestampUnit::kNanos;
  t.drop_null_rows = {"dec32"};
  auto source = OpenTable(path, t);
  EXPECT_EQ(source->columns()[0].type, ElementType::kInt64);
  EXPECT_EQ(source->columns()[0].scale, 2);
  EXPECT_EQ(source->columns()[1].scale, 3);
  const Batch b = ReadAll(source, {});
  EXPECT_TRUE(at::equal(b.at("dec32"), Longs({12345, -1, 0})));
  EXPECT_TRUE(at::equal(b.at("decbin"), Longs({1234, -129, 0})));
  EXPECT_TRUE(at::equal(b.at("ts_ms"), Longs({1580544550123000000, -1000000, 0})));
  EXPECT_TRUE(at::equal(b.at("ts96"), Longs({1580544550123456000, -kNanosPerDay + 1000, 0})));
  EXPECT_TRUE(at::equal(b.at("t_ms"), Longs({1000000000, 86399999000000, 0})));
  // A form for a column not read is a mistake worth naming.
  t.forms["f64"] = {};
  EXPECT_THROW_WITH(OpenTable(path, t), InvalidArgument, "forms", "'f64'");
}

TEST(TableTypesTest, ValuesAFormCannotHoldExactlyAreRefusedNamingColumnAndRow) {
  testing::TempDir dir;
  const __int128 beyond = static_cast<__int128>(INT64_MAX) * 10;
  const std::vector<TypeCase> cases = {
      {Optional("ns", PhysicalType::kInt64, LogicalType::Timestamp(pq::TimeUnit::kNanos, true)),
       {Value::Int(1000), Value::Int(1580544550123456789LL), Value::Int(0)}, at::kLong},
      {Optional("u64", PhysicalType::kInt64, LogicalType::Int(64, false)),
       {Value::Int(1), Value::Int(-1), Value::Int(0)}, at::kLong},
      {Optional("wide", PhysicalType::kFixedLenByteArray, LogicalType::Decimal(38, 0), 16),
       {Value::Bytes(BigEndian(1, 16)), Value::Bytes(BigEndian(beyond, 16)), Value::Bytes(BigEndian(0, 16))},
       at::kLong},
      {Optional("ms", PhysicalType::kInt64, LogicalType::Timestamp(pq::TimeUnit::kMillis, true)),
       {Value::Int(0), Value::Int(INT64_MAX / 10), Value::Int(0)}, at::kLong},
      // Julian day 2816788 (year 3000) at 00:00:01: beyond int64 nanoseconds, exact in microseconds.
      {Optional("far96", PhysicalType::kInt96),
       {Value::Bytes(Int96(0)), Value::Bytes(std::string("\x00\xca\x9a\x3b\x00\x00\x00\x00\x14\xfb\x2a\x00", 12)),
        Value::Bytes(Int96(0))}, at::kLong},
  };
  const std::string path = WriteCases(dir, cases);
  auto read = [&](const std::string& column, ColumnForm form) {
    LoaderOptions o;
    o.nulls[column] = {};
    TableOptions t;
    t.columns = {column};
    t.forms[column] = form;
    return ReadAll(OpenTable(path, t), o);
  };
  // A sub-microsecond part: refused in microseconds, exact in nanoseconds.
  EXPECT_THROW_WITH(read("ns", {}), InvalidArgument, "column 'ns'", "row 1", "TimestampUnit::kNanos");
  EXPECT_EQ(read("ns", {DecimalForm::kFloat64, TimestampUnit::kNanos}).at("ns")[1].item<int64_t>(),
            1580544550123456789LL);
  EXPECT_THROW_WITH(read("u64", {}), InvalidArgument, "column 'u64'", "row 1", "18446744073709551615");
  EXPECT_THROW_WITH(read("wide", {DecimalForm::kUnscaledInt64, TimestampUnit::kMicros}), InvalidArgument,
                    "column 'wide'", "row 1", "beyond int64");
  EXPECT_EQ(read("wide", {}).at("wide")[1].item<double>(), static_cast<double>(beyond));
  EXPECT_THROW_WITH(read("ms", {DecimalForm::kFloat64, TimestampUnit::kNanos}), InvalidArgument, "column 'ms'",
                    "row 1");
  EXPECT_EQ(read("far96", {}).at("far96")[1].item<int64_t>(), (2816788LL - 2440588) * 86400000000LL + 1000000);
  EXPECT_THROW_WITH(read("far96", {DecimalForm::kFloat64, TimestampUnit::kNanos}), InvalidArgument,
                    "column 'far96'", "row 1", "beyond int64");
}

// A data file of `fields` holding `rows`, added to the Delta table at `dir` as `name`.
void AddDataFile(const testing::TempDir& dir, const std::string& name, std::vector<pq::SchemaNode> fields,
                 const std::vector<Value>& rows) {
  pq::ParquetWriter writer(LocalFileSystem(), dir.Join(name), pq::Schema::FromFields(std::move(fields)));
  writer.WriteRows(rows);
  writer.Close();
  delta::AddFile add;
  add.path = name;
  add.size = static_cast<int64_t>(LocalFileSystem().Stat(dir.Join(name))->size);
  delta::ActionSet actions;
  actions.adds.push_back(add);
  delta::DeltaTable table(dir.path());
  delta::Commit(table, actions, {});
}

TEST(TableTypesTest, DeltaTypeWideningAndStoredUnitsFollowTheTableSchema) {
  testing::TempDir dir;
  const auto schema = delta::ParseSchema(R"j({"type":"struct","fields":[
    {"name":"id","type":"long","nullable":false,"metadata":{}},
    {"name":"x","type":"double","nullable":true,"metadata":{}},
    {"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}},
    {"name":"amount","type":"decimal(10,4)","nullable":true,"metadata":{}}]})j", "test");
  delta::CreateTableOptions create;
  create.protocol.min_reader_version = 3;
  create.protocol.min_writer_version = 7;
  create.protocol.reader_features = std::vector<std::string>{"timestampNtz"};
  create.protocol.writer_features = std::vector<std::string>{"timestampNtz"};
  delta::CreateTable(dir.path(), schema, create);
  // Written before the columns were widened: int, float, date, decimal(5,2).
  AddDataFile(dir, "old.parquet",
              {pq::Leaf("id", PhysicalType::kInt32), Optional("x", PhysicalType::kFloat),
               Optional("ts", PhysicalType::kInt32, LogicalType::Date()),
               Optional("amount", PhysicalType::kInt32, LogicalType::Decimal(5, 2))},
              {Value::Struct({{"id", Value::Int(1)}, {"x", Value::Float(1.5f)}, {"ts", Value::Int(1)},
                              {"amount", Value::Int(12345)}}),
               Value::Struct({{"id", Value::Int(2)}, {"x", Value::Float(2.25f)}, {"ts", Value::Int(2)},
                              {"amount", Value::Int(-1)}})});
  // Written after, with timestamps in milliseconds (as some writers store them).
  AddDataFile(dir, "new.parquet",
              {pq::Leaf("id", PhysicalType::kInt64), Optional("x", PhysicalType::kDouble),
               Optional("ts", PhysicalType::kInt64, LogicalType::Timestamp(pq::TimeUnit::kMillis, false)),
               Optional("amount", PhysicalType::kInt64, LogicalType::Decimal(10, 4))},
              {Value::Struct({{"id", Value::Int(3)}, {"x", Value::Double(0.1)}, {"ts", Value::Int(86400005)},
                              {"amount", Value::Int(1234567)}})});
  const std::vector<int64_t> micros = {86400000000, 172800000000, 86400005000};

  // The loader: one type per column, the table's.
  TableOptions t;
  t.forms["amount"].decimal = DecimalForm::kUnscaledInt64;
  auto source = OpenTable(dir.path(), t);
  const Batch b = ReadAll(source, {});
  const at::Tensor by_id = b.at("id").argsort();  // the snapshot lists files in its own order
  EXPECT_TRUE(at::equal(b.at("id").index({by_id}), Longs({1, 2, 3})));
  EXPECT_TRUE(at::equal(b.at("x").index({by_id}), at::tensor({1.5, 2.25, 0.1}, at::kDouble)));
  EXPECT_TRUE(at::equal(b.at("ts").index({by_id}), Longs(micros)));
  EXPECT_TRUE(at::equal(b.at("amount").index({by_id}), Longs({1234500, -100, 1234567})));
  EXPECT_EQ(source->columns()[3].scale, 4);
  t.forms.clear();
  t.columns = {"id", "amount"};
  const Batch scaled = ReadAll(OpenTable(dir.path(), t), {});
  EXPECT_TRUE(at::equal(scaled.at("amount").index({scaled.at("id").argsort()}),
                        at::tensor({123.45, -0.01, 123.4567}, at::kDouble)));
  // Rows are filtered on the values as read (1970-01-02T00:00:00 itself fails '>').
  t.columns = {"id"};
  t.filter = Filter::Parse("ts > '1970-01-02T00:00:00' and x < 2");
  EXPECT_TRUE(at::equal(ReadAll(OpenTable(dir.path(), t), {}).at("id"), Longs({3})));

  // The Delta scan (`table head`): the same values, timestamps in microseconds, decimals at the table's scale.
  delta::DeltaTable table(dir.path());
  const delta::Snapshot snapshot = table.Latest();
  delta::TableScan scan(table, snapshot);
  std::map<int64_t, std::vector<Value>> rows;
  for (const Value& row : scan.ReadAll()) {
    rows[row.Field("id")->as_int()] = {*row.Field("x"), *row.Field("ts"), *row.Field("amount")};
  }
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1].as_int(), micros[0]);
  EXPECT_EQ(rows[3][1].as_int(), micros[2]);
  EXPECT_EQ(rows[1][2].as_int(), 1234500);
  EXPECT_EQ(rows[2][2].as_int(), -100);
  EXPECT_EQ(rows[3][2].as_int(), 1234567);
  EXPECT_EQ(rows[2][0].kind(), Value::Kind::kDouble);
  EXPECT_EQ(rows[2][0].as_double(), 2.25);
}

TEST(TableTypesTest, StructLeavesListsOfStructsAndMapsAreColumnsNamedByTheirPath) {
  testing::TempDir dir;
  const pq::SchemaNode s = pq::Group("s", {Optional("a", PhysicalType::kInt64),
                                           pq::Group("b", {Optional("c", PhysicalType::kDouble)},
                                                     pq::Repetition::kOptional)},
                                     pq::Repetition::kOptional);
  const pq::SchemaNode pts = pq::ListOf("pts", pq::Group("element", {pq::Leaf("x", PhysicalType::kFloat),
                                                                     pq::Leaf("y", PhysicalType::kFloat)},
                                                         pq::Repetition::kOptional));
  const pq::SchemaNode m = pq::MapOf("m", pq::Leaf("key", PhysicalType::kInt32), Optional("value", PhysicalType::kDouble));
  auto point = [](double x, double y) { return Value::Struct({{"x", Value::Float(x)}, {"y", Value::Float(y)}}); };
  auto row = [](Value s, Value pts, Value m) { return Value::Struct({{"s", s}, {"pts", pts}, {"m", m}}); };
  const std::vector<Value> rows = {
      row(Value::Struct({{"a", Value::Int(1)}, {"b", Value::Struct({{"c", Value::Double(0.5)}})}}),
          Value::List({point(1, 2), point(3, 4)}), Value::Map({{Value::Int(10), Value::Double(1)}})),
      row(Value::Null(), Value::List({}), Value::Map({})),
      row(Value::Struct({{"a", Value::Null()}, {"b", Value::Null()}}), Value::Null(), Value::Null()),
      row(Value::Struct({{"a", Value::Int(3)}, {"b", Value::Struct({{"c", Value::Double(1.5)}})}}),
          Value::List({point(5, 6)}),
          Value::Map({{Value::Int(20), Value::Double(2)}, {Value::Int(30), Value::Double(3)}})),
  };
  const std::string path = dir.Join("nested.parquet");
  {
    pq::ParquetWriter writer(LocalFileSystem(), path, pq::Schema::FromFields({s, pts, m}));
    writer.WriteRows(rows);
    writer.Close();
  }
  auto source = OpenTable(path, {});  // every leaf
  std::vector<std::string> names;
  for (const ColumnInfo& info : source->columns()) names.push_back(info.name + (info.is_list ? "[]" : ""));
  EXPECT_EQ(names, (std::vector<std::string>{"s.a", "s.b.c", "pts.x[]", "pts.y[]", "m.key[]", "m.value[]"}));

  TableOptions t;
  t.columns = {"pts.y", "s", "m.value"};  // "s" stands for its leaves, in order
  LoaderOptions o;
  o.nulls["s.a"].fill_value = -1;
  o.nulls["s.b.c"].fill_value = -1;
  for (const char* list : {"pts.y", "m.value"}) {
    o.lists[list] = {};
    o.nulls[list] = {};
  }
  const Batch b = ReadAll(OpenTable(path, t), o);
  EXPECT_TRUE(at::equal(b.at("s.a"), Longs({1, -1, -1, 3})));
  EXPECT_TRUE(at::equal(b.at("s.a.valid"), at::tensor({1, 0, 0, 1}).to(at::kBool)));
  EXPECT_TRUE(at::equal(b.at("s.b.c"), at::tensor({0.5, -1.0, -1.0, 1.5}, at::kDouble)));
  EXPECT_TRUE(at::equal(b.at("pts.y"), at::tensor({2.f, 4.f, 0.f, 0.f, 0.f, 0.f, 6.f, 0.f}).reshape({4, 2})));
  EXPECT_TRUE(at::equal(b.at("pts.y.lengths"), Longs({2, 0, 0, 1})));
  EXPECT_TRUE(at::equal(b.at("pts.y.valid"), at::tensor({1, 1, 0, 1}).to(at::kBool)));
  EXPECT_TRUE(at::equal(b.at("m.value"), at::tensor({1., 0., 0., 0., 0., 0., 2., 3.}).reshape({4, 2})));
  EXPECT_TRUE(at::equal(b.at("m.value.lengths"), Longs({1, 0, 0, 2})));

  // Filters on struct leaves, at every level.
  t.columns = {"s.a"};
  t.filter = Filter::Parse("s.a >= 2");
  EXPECT_EQ(OpenTable(path, t)->num_rows(), 1u);
  t.filter = Filter::Parse("s.b.c is null");
  EXPECT_EQ(OpenTable(path, t)->num_rows(), 2u);
  t.filter = Filter();
  t.columns = {"pts.z"};
  EXPECT_THROW_WITH(OpenTable(path, t), InvalidArgument, "no column 'pts.z'", "pts.x");
}

TEST(TableTypesTest, DeltaColumnMappingResolvesNestedPhysicalNames) {
  testing::TempDir dir;
  const auto schema = delta::ParseSchema(R"j({"type":"struct","fields":[
    {"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1"}},
    {"name":"s","type":{"type":"struct","fields":[
      {"name":"a","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-3"}}]},
     "nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}}]})j", "test");
  delta::CreateTableOptions create;
  create.protocol.min_reader_version = 2;
  create.protocol.min_writer_version = 5;
  create.configuration = {{"delta.columnMapping.mode", "name"}, {"delta.columnMapping.maxColumnId", "3"}};
  delta::CreateTable(dir.path(), schema, create);
  AddDataFile(dir, "part-0.parquet",
              {pq::Leaf("col-1", PhysicalType::kInt64),
               pq::Group("col-2", {Optional("col-3", PhysicalType::kInt64)}, pq::Repetition::kOptional)},
              {Value::Struct({{"col-1", Value::Int(1)}, {"col-2", Value::Struct({{"col-3", Value::Int(10)}})}}),
               Value::Struct({{"col-1", Value::Int(2)}, {"col-2", Value::Struct({{"col-3", Value::Int(20)}})}})});
  TableOptions t;
  t.filter = Filter::Parse("s.a > 10");
  auto source = OpenTable(dir.path(), t);
  ASSERT_EQ(source->columns().size(), 2u);
  EXPECT_EQ(source->columns()[1].name, "s.a");
  const Batch b = ReadAll(source, {});
  EXPECT_TRUE(at::equal(b.at("id"), Longs({2})));
  EXPECT_TRUE(at::equal(b.at("s.a"), Longs({20})));
}

TEST(TableTypesTest, ListsWhoseFilesHaveOtherFirstLengthsAndListColumnsAFileLacksLoadWithAPolicy) {
  testing::TempDir dir;
  auto list_rows = [](std::vector<std::vector<int>> lists) {
    std::vector<Value> rows;
    for (const auto& list : lists) {
      std::vector<Value> items;
      for (int v : list) items.push_back(Value::Int(v));
      rows.push_back(Value::Struct({{"v", Value::List(std::move(items))}}));
    }
    return rows;
  };
  const pq::SchemaNode v = pq::ListOf("v", pq::Leaf("element", PhysicalType::kInt32));
  LocalFileSystem().CreateDirs(dir.Join("folder"));
  for (const auto& [name, lists] : std::vector<std::pair<std::string, std::vector<std::vector<int>>>>{
           {"a.parquet", {{1, 2}, {3, 4}}}, {"b.parquet", {{5, 6, 7}}}}) {
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("folder/" + name), pq::Schema::FromFields({v}));
    writer.WriteRows(list_rows(lists));
    writer.Close();
  }
  LoaderOptions o;
  o.lists["v"] = {};
  const Batch b = ReadAll(OpenTable(dir.Join("folder"), {}), o);
  EXPECT_TRUE(at::equal(b.at("v.lengths"), Longs({2, 2, 3})));
  EXPECT_EQ(b.at("v").sum().item<int64_t>(), 28);

  // A Delta table whose list column was added after its first file: null lists there.
  const std::string table = dir.Join("delta");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false}});
  delta::DeltaTable t = delta::CreateTable(table, schema, {});
  delta::AppendRows(t, {Value::Struct({{"id", Value::Int(0)}})}, {});
  delta::Metadata m = t.Latest().metadata;
  auto evolved = std::make_shared<delta::DataType>(*m.schema);
  evolved->fields.push_back(delta::StructField{"v", delta::MakeArray(delta::PrimitiveType("integer")), true});
  m.schema = evolved;
  m.schema_string = delta::SchemaToJson(*evolved);
  delta::ActionSet change;
  change.metadata = m;
  delta::Commit(t, change, {});
  std::vector<Value> rows;
  for (int id = 1; id < 3; ++id) {
    rows.push_back(Value::Struct({{"id", Value::Int(id)}, {"v", Value::List({Value::Int(id), Value::Int(id * 10),
                                                                             Value::Int(id * 100)})}}));
  }
  delta::AppendRows(t, rows, {});
  o.nulls["v"] = {};
  o.lists["v"].pad_value = -1;  // a null list is empty (length 0) and masked
  const Batch d = ReadAll(OpenTable(table, {}), o);
  const at::Tensor by_id = d.at("id").argsort();
  EXPECT_TRUE(at::equal(d.at("v.valid").index({by_id}), at::tensor({0, 1, 1}).to(at::kBool)));
  EXPECT_TRUE(at::equal(d.at("v.lengths").index({by_id}), Longs({0, 3, 3})));
  EXPECT_TRUE(at::equal(d.at("v").index({by_id}),
                        at::tensor({-1, -1, -1, 1, 10, 100, 2, 20, 200}, at::kInt).reshape({3, 3})));
}

}  // namespace
}  // namespace lakerun::data
