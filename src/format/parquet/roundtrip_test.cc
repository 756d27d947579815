// Files written by ParquetWriter and read back by ParquetFile: every physical type, encoding, codec, page version,
// nulls, nested shapes, multiple row groups and pages.
#include <cmath>
#include <random>
#include <tuple>

#include "format/parquet/parquet_test_util.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;
using testing::SameColumn;

// A column of `n` values of `type` with some repetition (so dictionaries and RLE have work) and ~1/7 nulls when
// `nullable`.
ColumnData MakeColumn(PhysicalType type, int32_t width, int64_t n, bool nullable, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int16_t> def;
  int64_t values = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool present = !nullable || rng() % 7 != 0;
    def.push_back(present ? 1 : 0);
    values += present;
  }
  ColumnData d(type, type == PhysicalType::kFixedLenByteArray ? width : 0);
  std::vector<std::string> bytes;
  for (int64_t i = 0; i < values; ++i) {
    const uint32_t r = rng();
    const uint32_t small = r % 50;  // repeated values
    switch (type) {
      case PhysicalType::kBoolean: {
        uint8_t b = r & 1;
        d.mutable_value_buffer().Append(&b, 1);
        break;
      }
      case PhysicalType::kInt32: {
        int32_t v = (i % 3 == 0) ? static_cast<int32_t>(r) : static_cast<int32_t>(small) - 25;
        d.mutable_value_buffer().Append(&v, 4);
        break;
      }
      case PhysicalType::kInt64: {
        int64_t v = (i % 3 == 0) ? static_cast<int64_t>((uint64_t{r} << 32) | rng()) : int64_t{small} * 1000003;
        d.mutable_value_buffer().Append(&v, 8);
        break;
      }
      case PhysicalType::kFloat: {
        float v = (i % 2) ? static_cast<float>(r) / 7.0f : static_cast<float>(small);
        d.mutable_value_buffer().Append(&v, 4);
        break;
      }
      case PhysicalType::kDouble: {
        double v = (i % 2) ? static_cast<double>(r) / 3.0 : -static_cast<double>(small);
        d.mutable_value_buffer().Append(&v, 8);
        break;
      }
      case PhysicalType::kInt96:
      case PhysicalType::kFixedLenByteArray: {
        const int w = type == PhysicalType::kInt96 ? 12 : width;
        std::string s(static_cast<size_t>(w), '\0');
        for (int k = 0; k < w; ++k) s[k] = static_cast<char>((i % 4 == 0 ? r : small) >> (k % 4 * 8));
        d.mutable_value_buffer().Append(s.data(), s.size());
        break;
      }
      case PhysicalType::kByteArray: {
        std::string s = (i % 4 == 0) ? "unique-" + std::to_string(r) + std::string(r % 40, 'x')
                                     : "cat_" + std::to_string(small);
        if (r % 97 == 0) s.clear();
        bytes.push_back(s);
        break;
      }
    }
  }
  if (type == PhysicalType::kByteArray) d = ColumnData::ByteArrays(bytes);
  else d.set_num_values(values);
  if (nullable) d.set_def_levels(def, 1);
  return d;
}

struct Case {
  PhysicalType type;
  Encoding encoding;  // kPlainDictionary: use the dictionary
};

std::vector<Case> AllCases() {
  using P = PhysicalType;
  using E = Encoding;
  std::vector<Case> cases;
  for (P t : {P::kBoolean, P::kInt32, P::kInt64, P::kInt96, P::kFloat, P::kDouble, P::kByteArray,
              P::kFixedLenByteArray}) {
    cases.push_back({t, E::kPlain});
    if (t != P::kBoolean) cases.push_back({t, E::kPlainDictionary});
    if (t != P::kBoolean && t != P::kByteArray) cases.push_back({t, E::kByteStreamSplit});
  }
  cases.push_back({P::kBoolean, E::kRle});
  cases.push_back({P::kInt32, E::kDeltaBinaryPacked});
  cases.push_back({P::kInt64, E::kDeltaBinaryPacked});
  cases.push_back({P::kByteArray, E::kDeltaLengthByteArray});
  cases.push_back({P::kByteArray, E::kDeltaByteArray});
  cases.push_back({P::kFixedLenByteArray, E::kDeltaByteArray});
  return cases;
}

class TypeEncodingTest : public ::testing::TestWithParam<std::tuple<Case, int, bool>> {};

TEST_P(TypeEncodingTest, RoundTripsExactly) {
  const auto [c, page_version, nullable] = GetParam();
  const int64_t n = 3000;
  ColumnData data = MakeColumn(c.type, 5, n, nullable, 42);
  Schema schema = Schema::FromFields({Leaf("v", c.type, nullable ? Repetition::kOptional : Repetition::kRequired,
                                           {}, c.type == PhysicalType::kFixedLenByteArray ? 5 : 0)});
  WriterOptions opts;
  opts.page_version = page_version;
  opts.page_bytes = 2000;  // many pages
  opts.dictionary = c.encoding == Encoding::kPlainDictionary;
  if (c.encoding != Encoding::kPlainDictionary && c.encoding != Encoding::kPlain) opts.column_encoding["v"] = c.encoding;
  MemFile f;
  f.Write(schema, {data}, opts);
  auto file = f.Open();
  ASSERT_EQ(file->num_rows(), n);
  const ColumnChunkMeta& meta = file->metadata().row_groups[0].columns[0];
  const Encoding expected = c.encoding == Encoding::kPlainDictionary
                                ? (page_version == 1 ? Encoding::kPlainDictionary : Encoding::kRleDictionary)
                                : c.encoding;
  EXPECT_THAT(meta.encodings, ::testing::Contains(expected));
  ColumnData back = file->ReadColumnChunk(0, 0);
  EXPECT_TRUE(SameColumn(data, back)) << ToString(c.type) << " " << ToString(c.encoding);
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<Case, int, bool>>& info) {
  const auto& [c, v, nullable] = info.param;
  return ToString(c.type) + "_" + ToString(c.encoding) + "_v" + std::to_string(v) + (nullable ? "_nullable" : "");
}

INSTANTIATE_TEST_SUITE_P(All, TypeEncodingTest,
                         ::testing::Combine(::testing::ValuesIn(AllCases()), ::testing::Values(1, 2),
                                            ::testing::Bool()),
                         CaseName);

class CodecTest : public ::testing::TestWithParam<std::tuple<Codec, int>> {};

TEST_P(CodecTest, RoundTripsEveryCodec) {
  const auto [codec, page_version] = GetParam();
  ColumnData ints = MakeColumn(PhysicalType::kInt64, 0, 5000, true, 7);
  ColumnData strs = MakeColumn(PhysicalType::kByteArray, 0, 5000, false, 8);
  Schema schema = Schema::FromFields({Leaf("i", PhysicalType::kInt64, Repetition::kOptional),
                                      Leaf("s", PhysicalType::kByteArray, Repetition::kRequired,
                                           LogicalType::String())});
  WriterOptions opts;
  opts.codec = codec;
  opts.page_version = page_version;
  opts.page_bytes = 8000;
  MemFile f;
  f.Write(schema, {ints, strs}, opts);
  auto file = f.Open();
  EXPECT_EQ(file->metadata().row_groups[0].columns[0].codec, codec);
  EXPECT_TRUE(SameColumn(ints, file->ReadColumnChunk(0, 0)));
  EXPECT_TRUE(SameColumn(strs, file->ReadColumnChunk(0, 1)));
}

INSTANTIATE_TEST_SUITE_P(All, CodecTest,
                         ::testing::Combine(::testing::Values(Codec::kUncompressed, Codec::kSnappy, Codec::kGzip,
                                                              Codec::kZstd, Codec::kLz4Raw, Codec::kLz4,
                                                              Codec::kBrotli),
                                            ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return ToString(std::get<0>(info.param)) + "_v" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(RoundTripTest, DictionaryFallsBackToPlainMidChunk) {
  std::vector<std::string> values;
  // 50 distinct values for 10000 rows (the dictionary pays for their pages), then distinct ones that outgrow it.
  for (int i = 0; i < 20000; ++i) values.push_back("value-" + std::to_string(i < 10000 ? i % 50 : i));
  ColumnData data = ColumnData::ByteArrays(values);
  WriterOptions opts;
  opts.page_bytes = 4096;
  opts.dictionary_page_bytes = 16 * 1024;
  MemFile f;
  f.Write(Schema::FromFields({Leaf("s", PhysicalType::kByteArray)}), {data}, opts);
  auto file = f.Open();
  const auto& enc = file->metadata().row_groups[0].columns[0].encodings;
  EXPECT_THAT(enc, ::testing::Contains(Encoding::kPlainDictionary));
  EXPECT_THAT(enc, ::testing::Contains(Encoding::kPlain));
  EXPECT_TRUE(file->metadata().row_groups[0].columns[0].dictionary_page_offset.has_value());
  EXPECT_TRUE(SameColumn(data, file->ReadColumnChunk(0, 0)));
}

// Distinct 784-byte values (images) in pages smaller than the dictionary limit: the first three pages fit in the
// dictionary, which would only double them. It is dropped, and every page is PLAIN.
TEST(RoundTripTest, DictionaryThatDoesNotPayIsDropped) {
  constexpr int kRows = 3000, kWidth = 784;
  std::vector<uint8_t> bytes(static_cast<size_t>(kRows) * kWidth);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  ColumnData data = ColumnData::FromRaw(PhysicalType::kFixedLenByteArray, kWidth, bytes.data(), kRows);
  WriterOptions options;
  options.page_bytes = 256 << 10;
  MemFile f;
  f.Write(Schema::FromFields({Leaf("image", PhysicalType::kFixedLenByteArray, Repetition::kRequired, {}, kWidth)}),
          {data}, options);
  auto file = f.Open();
  const ColumnChunkMeta& chunk = file->metadata().row_groups[0].columns[0];
  EXPECT_THAT(chunk.encodings, ::testing::ElementsAre(Encoding::kPlain));
  EXPECT_FALSE(chunk.dictionary_page_offset.has_value());
  EXPECT_TRUE(SameColumn(data, file->ReadColumnChunk(0, 0)));
}

TEST(RoundTripTest, BigPageOfSixtyFourMegabytes) {
  std::vector<double> v(8 << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.5;
  ColumnData data = ColumnData::Doubles(v);
  WriterOptions opts;
  opts.page_bytes = 256 << 20;
  opts.dictionary = false;
  MemFile f;
  f.Write(Schema::FromFields({Leaf("d", PhysicalType::kDouble)}), {data}, opts);
  auto file = f.Open();
  ColumnData back = file->ReadColumnChunk(0, 0);
  ASSERT_EQ(back.num_values(), static_cast<int64_t>(v.size()));
  EXPECT_EQ(back.values<double>()[v.size() - 1], v.back());
  EXPECT_TRUE(SameColumn(data, back));
}

TEST(RoundTripTest, ManyRowGroupsThroughWriteRows) {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      Leaf("name", PhysicalType::kByteArray, Repetition::kOptional,
                                           LogicalType::String())});
  std::vector<Value> rows;
  for (int i = 0; i < 1000; ++i) {
    rows.push_back(Value::Struct({{"id", Value::Int(i)},
                                  {"name", i % 5 == 0 ? Value::Null() : Value::String("n" + std::to_string(i))}}));
  }
  WriterOptions opts;
  opts.row_group_rows = 300;
  MemFile f;
  f.WriteRows(schema, rows, opts);
  auto file = f.Open();
  EXPECT_EQ(file->num_row_groups(), 4);
  EXPECT_EQ(file->num_rows(), 1000);
  EXPECT_EQ(file->metadata().row_groups[3].num_rows, 100);
  EXPECT_EQ(f.ReadAll(), rows);
}

TEST(RoundTripTest, LogicalTypesSurviveTheFooter) {
  Schema schema = Schema::FromFields({
      Leaf("s", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String()),
      Leaf("dec32", PhysicalType::kInt32, Repetition::kRequired, LogicalType::Decimal(9, 2)),
      Leaf("dec_flba", PhysicalType::kFixedLenByteArray, Repetition::kRequired, LogicalType::Decimal(20, 4), 9),
      Leaf("date", PhysicalType::kInt32, Repetition::kRequired, LogicalType::Date()),
      Leaf("time_ns", PhysicalType::kInt64, Repetition::kRequired, LogicalType::Time(TimeUnit::kNanos, false)),
      Leaf("ts_ms", PhysicalType::kInt64, Repetition::kRequired, LogicalType::Timestamp(TimeUnit::kMillis, true)),
      Leaf("ts_us_local", PhysicalType::kInt64, Repetition::kRequired,
           LogicalType::Timestamp(TimeUnit::kMicros, false)),
      Leaf("ts_ns", PhysicalType::kInt64, Repetition::kRequired, LogicalType::Timestamp(TimeUnit::kNanos, true)),
      Leaf("u8", PhysicalType::kInt32, Repetition::kRequired, LogicalType::Int(8, false)),
      Leaf("i16", PhysicalType::kInt32, Repetition::kRequired, LogicalType::Int(16, true)),
      Leaf("u64", PhysicalType::kInt64, Repetition::kRequired, LogicalType::Int(64, false)),
      Leaf("uuid", PhysicalType::kFixedLenByteArray, Repetition::kRequired, LogicalType::Uuid()),
      Leaf("half", PhysicalType::kFixedLenByteArray, Repetition::kRequired, LogicalType::Float16()),
      Leaf("json", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::Json()),
      Leaf("enum", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::Enum()),
  });
  std::vector<Value> rows;
  for (int i = 0; i < 3; ++i) {
    rows.push_back(Value::Struct({
        {"s", Value::String("x")},
        {"dec32", Value::Int(12345)},
        {"dec_flba", Value::Bytes(std::string(9, static_cast<char>(i)))},
        {"date", Value::Int(19000 + i)},
        {"time_ns", Value::Int(1000000000LL * i)},
        {"ts_ms", Value::Int(1700000000000LL + i)},
        {"ts_us_local", Value::Int(-5)},
        {"ts_ns", Value::Int(1700000000000000000LL)},
        {"u8", Value::Int(255)},
        {"i16", Value::Int(-32768)},
        {"u64", Value::Int(-1)},
        {"uuid", Value::Bytes(std::string(16, 'u'))},
        {"half", Value::Bytes(std::string("\x00\x3c", 2))},
        {"json", Value::String("{\"a\":1}")},
        {"enum", Value::String("RED")},
    }));
  }
  MemFile f;
  f.WriteRows(schema, rows);
  auto file = f.Open();
  const Schema& s = file->schema();
  for (int i = 0; i < schema.num_columns(); ++i) {
    EXPECT_EQ(s.column(i).logical_type, schema.column(i).logical_type) << schema.column(i).dotted_path;
    EXPECT_EQ(s.column(i).converted_type, schema.column(i).converted_type) << schema.column(i).dotted_path;
    EXPECT_EQ(s.column(i).type_length, schema.column(i).type_length);
  }
  EXPECT_EQ(s.column(5).converted_type, ConvertedType::kTimestampMillis);
  EXPECT_EQ(s.column(6).converted_type, ConvertedType::kNone);  // local timestamps have no converted type
  EXPECT_EQ(s.column(8).converted_type, ConvertedType::kUint8);
  EXPECT_EQ(s.column(12).type_length, 2);
  EXPECT_EQ(f.ReadAll(), rows);
}

TEST(RoundTripTest, StatisticsMinMaxNullCount) {
  Schema schema = Schema::FromFields({Leaf("i", PhysicalType::kInt32, Repetition::kOptional),
                                      Leaf("u", PhysicalType::kInt32, Repetition::kRequired, LogicalType::Int(32, false)),
                                      Leaf("f", PhysicalType::kFloat),
                                      Leaf("s", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String())});
  ColumnData i = ColumnData::Int32s({5, -3, 9});
  i.set_def_levels({1, 0, 1, 1}, 1);
  ColumnData u = ColumnData::Int32s({1, -1, 7, 0});  // -1 is 4294967295 unsigned
  ColumnData fl = ColumnData::Floats({0.0f, NAN, 2.5f, -1.0f});
  ColumnData s = ColumnData::ByteArrays({"b", "\xff", "a", "ab"});
  MemFile f;
  f.Write(schema, {i, u, fl, s});
  auto file = f.Open();
  const auto& cols = file->metadata().row_groups[0].columns;
  const auto& sch = file->schema();
  EXPECT_EQ(*cols[0].statistics->null_count, 1);
  EXPECT_EQ(cols[0].statistics->MinValue(sch.column(0))->as_int(), -3);
  EXPECT_EQ(cols[0].statistics->MaxValue(sch.column(0))->as_int(), 9);
  EXPECT_EQ(cols[1].statistics->MinValue(sch.column(1))->as_int(), 0);
  EXPECT_EQ(cols[1].statistics->MaxValue(sch.column(1))->as_int(), 4294967295LL);
  EXPECT_EQ(cols[2].statistics->MinValue(sch.column(2))->as_double(), -1.0);
  EXPECT_EQ(cols[2].statistics->MaxValue(sch.column(2))->as_double(), 2.5);
  EXPECT_EQ(cols[3].statistics->MinValue(sch.column(3))->as_string(), "a");
  EXPECT_EQ(cols[3].statistics->MaxValue(sch.column(3))->as_string(), "\xff");
  EXPECT_FALSE(cols[0].statistics->from_legacy_fields);
}

TEST(RoundTripTest, KeyValueMetadataAndTensorShape) {
  Schema schema = Schema::FromFields({ListOf("image", Leaf("element", PhysicalType::kFloat))});
  std::vector<Value> rows;
  for (int r = 0; r < 4; ++r) {
    std::vector<Value> pixels;
    for (int k = 0; k < 6; ++k) pixels.push_back(Value::Float(static_cast<float>(r * 6 + k)));
    rows.push_back(Value::Struct({{"image", Value::List(pixels)}}));
  }
  WriterOptions opts;
  opts.key_value_metadata.push_back({"owner", "lakerun"});
  opts.tensor_shapes["image"] = {2, 3};
  MemFile f;
  f.WriteRows(schema, rows, opts);
  auto file = f.Open();
  EXPECT_EQ(file->metadata().FindKeyValue("owner"), "lakerun");
  EXPECT_EQ(file->metadata().FindKeyValue("lakerun.shape.image"), "[2,3]");
  EXPECT_EQ(TensorShape(file->metadata(), "image"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file->metadata().created_by, "lakerun version 0.1.0");
  ColumnData col = file->ReadColumnChunk(0, 0);
  ASSERT_EQ(col.FixedListLength(), 6);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(col.values<float>()[i], static_cast<float>(i));
}

}  // namespace
}  // namespace lakerun::parquet

namespace lakerun::parquet {
namespace {

TEST(RoundTripTest, ReusedColumnDataAndScratchGiveTheSameResults) {
  Schema schema = Schema::FromFields({Leaf("d", PhysicalType::kDouble, Repetition::kOptional),
                                      Leaf("s", PhysicalType::kByteArray),
                                      ListOf("l", Leaf("element", PhysicalType::kInt32)), Leaf("i", PhysicalType::kInt64)});
  std::vector<Value> rows;
  for (int i = 0; i < 300; ++i) {
    rows.push_back(Value::Struct({{"d", i % 3 ? Value::Double(i) : Value::Null()},
                                  {"s", Value::Bytes(std::string(static_cast<size_t>(i % 11), 'x'))},
                                  {"l", Value::List(std::vector<Value>(static_cast<size_t>(i % 4), Value::Int(i)))},
                                  {"i", Value::Int(-i)}}));
  }
  WriterOptions o;
  o.row_group_rows = 100;
  testing::MemFile f;
  f.WriteRows(schema, rows, o);
  auto file = f.Open();
  ColumnData reused;
  ReadScratch scratch;
  // Cycle one ColumnData through every column type so stale levels, offsets or values would show.
  for (int g = 0; g < file->num_row_groups(); ++g) {
    for (int c : {0, 1, 2, 3, 2, 1, 0}) {
      file->ReadColumnChunk(g, c, &reused, &scratch);
      EXPECT_TRUE(testing::SameColumn(reused, file->ReadColumnChunk(g, c))) << g << " " << c;
      EXPECT_EQ(reused.max_def_level(), file->schema().column(c).max_def_level);
      EXPECT_EQ(reused.max_rep_level(), file->schema().column(c).max_rep_level);
    }
  }
}

}  // namespace
}  // namespace lakerun::parquet
