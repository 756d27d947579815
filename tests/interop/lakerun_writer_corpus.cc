#include "lakerun_writer_corpus.h"

#include <cmath>
#include <limits>

#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/writer.h"

namespace lakerun::interop {
namespace {

using namespace lakerun::parquet;  // NOLINT: test corpus builder
using R = Repetition;

std::string BigEndian(__int128 v, int width) {
  std::string out(static_cast<size_t>(width), '\0');
  for (int i = width - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(static_cast<uint8_t>(v & 0xff));
    v >>= 8;
  }
  return out;
}

uint64_t Mix(uint64_t x) {  // splitmix64: deterministic pseudo-random bits from the row number
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

Schema CorpusSchema() {
  return Schema::FromFields({
      Leaf("b", PhysicalType::kBoolean, R::kOptional),
      Leaf("i8", PhysicalType::kInt32, R::kOptional, LogicalType::Int(8, true)),
      Leaf("u16", PhysicalType::kInt32, R::kOptional, LogicalType::Int(16, false)),
      Leaf("i32", PhysicalType::kInt32, R::kOptional),
      Leaf("u32", PhysicalType::kInt32, R::kOptional, LogicalType::Int(32, false)),
      Leaf("i64", PhysicalType::kInt64, R::kRequired),
      Leaf("u64", PhysicalType::kInt64, R::kOptional, LogicalType::Int(64, false)),
      Leaf("f32", PhysicalType::kFloat, R::kOptional),
      Leaf("f64", PhysicalType::kDouble, R::kOptional),
      Leaf("dec9", PhysicalType::kInt32, R::kOptional, LogicalType::Decimal(9, 2)),
      Leaf("dec18", PhysicalType::kInt64, R::kOptional, LogicalType::Decimal(18, 4)),
      Leaf("dec38", PhysicalType::kFixedLenByteArray, R::kOptional, LogicalType::Decimal(38, 6), 16),
      Leaf("dt", PhysicalType::kInt32, R::kOptional, LogicalType::Date()),
      Leaf("tm", PhysicalType::kInt64, R::kOptional, LogicalType::Time(TimeUnit::kMicros, false)),
      Leaf("ts_ms", PhysicalType::kInt64, R::kOptional, LogicalType::Timestamp(TimeUnit::kMillis, false)),
      Leaf("ts_us_tz", PhysicalType::kInt64, R::kOptional, LogicalType::Timestamp(TimeUnit::kMicros, true)),
      Leaf("ts_ns", PhysicalType::kInt64, R::kOptional, LogicalType::Timestamp(TimeUnit::kNanos, false)),
      Leaf("uid", PhysicalType::kFixedLenByteArray, R::kOptional, LogicalType::Uuid(), 16),
      Leaf("s", PhysicalType::kByteArray, R::kOptional, LogicalType::String()),
      Leaf("sdict", PhysicalType::kByteArray, R::kOptional, LogicalType::String()),
      Leaf("bl", PhysicalType::kByteArray, R::kOptional),
      Leaf("fixed", PhysicalType::kFixedLenByteArray, R::kRequired, {}, 4),
      ListOf("lf", Leaf("element", PhysicalType::kFloat, R::kOptional)),
      ListOf("ll", ListOf("element", Leaf("element", PhysicalType::kInt32, R::kOptional))),
      Group("st",
            {Leaf("x", PhysicalType::kInt64, R::kOptional),
             Leaf("y", PhysicalType::kByteArray, R::kOptional, LogicalType::String()),
             ListOf("z", Leaf("element", PhysicalType::kDouble, R::kRequired))},
            R::kOptional),
      MapOf("mp", Leaf("key", PhysicalType::kByteArray, R::kRequired, LogicalType::String()),
            Leaf("value", PhysicalType::kInt32, R::kOptional)),
      ListOf("ls", Group("element",
                         {Leaf("a", PhysicalType::kInt32, R::kOptional),
                          Leaf("b", PhysicalType::kByteArray, R::kOptional, LogicalType::String())},
                         R::kOptional)),
  });
}

std::vector<Value> CorpusRows(int n) {
  std::vector<Value> rows;
  rows.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const uint64_t h = Mix(static_cast<uint64_t>(i));
    const bool null_row = i % 7 == 3;  // every nullable leaf column is null on these rows
    auto opt = [&](Value v) { return null_row ? Value::Null() : std::move(v); };
    float f32 = static_cast<float>(i) * 0.37f - 100.0f;
    double f64 = i / 7.0 - 1e6;
    switch (i % 50) {
      case 1: f32 = std::numeric_limits<float>::quiet_NaN(); f64 = std::nan(""); break;
      case 2: f32 = INFINITY; f64 = INFINITY; break;
      case 4: f32 = -INFINITY; f64 = -INFINITY; break;
      case 5: f32 = -0.0f; f64 = -0.0; break;
      default: break;
    }
    const __int128 dec38 = (static_cast<__int128>(static_cast<int64_t>(h)) * 1000000007) * (i % 2 ? -1 : 1);
    std::string bytes;
    for (int k = 0; k < i % 9; ++k) bytes.push_back(static_cast<char>((i * 31 + k) & 0xff));
    std::string uid = BigEndian((static_cast<__int128>(h) << 64) | Mix(h), 16);

    std::vector<Value> lf;
    for (int k = 0; k < i % 6; ++k) lf.push_back(k == 2 && i % 4 == 0 ? Value::Null() : Value::Float(i + k / 4.0f));
    std::vector<Value> ll;
    for (int k = 0; k < i % 4; ++k) {
      if (k == 2) {
        ll.push_back(Value::Null());
        continue;
      }
      std::vector<Value> inner;
      for (int m = 0; m < k; ++m) inner.push_back(m == 1 ? Value::Null() : Value::Int(i * 10 + m));
      ll.push_back(Value::List(std::move(inner)));
    }
    std::vector<Value> z;
    for (int k = 0; k < i % 3; ++k) z.push_back(Value::Double(i / 3.0 + k));
    std::vector<std::pair<Value, Value>> mp;
    if (i % 4 >= 2) {
      mp.emplace_back(Value::String("k" + std::to_string(i % 3)), Value::Int(i));
      mp.emplace_back(Value::String("z"), i % 8 == 2 ? Value::Null() : Value::Int(-i));
    }
    std::vector<Value> ls;
    for (int k = 0; k <= i % 3; ++k) {
      if (k == 2) ls.push_back(Value::Null());
      else if (k == 1) ls.push_back(Value::Struct({{"a", Value::Null()}, {"b", Value::Null()}}));
      else ls.push_back(Value::Struct({{"a", Value::Int(i)}, {"b", Value::String("w" + std::to_string(i))}}));
    }

    rows.push_back(Value::Struct({
        {"b", opt(Value::Bool(i % 3 == 0))},
        {"i8", opt(Value::Int(i % 256 - 128))},
        {"u16", opt(Value::Int(static_cast<int32_t>((i * 37) % 65536)))},
        {"i32", opt(Value::Int(static_cast<int32_t>(static_cast<uint32_t>(h))))},
        {"u32", opt(Value::Int(static_cast<int64_t>(static_cast<uint32_t>(h >> 32))))},  // unsigned range
        {"i64", Value::Int(static_cast<int64_t>(h))},
        {"u64", opt(Value::Int(static_cast<int64_t>(Mix(h))))},
        {"f32", opt(Value::Float(f32))},
        {"f64", opt(Value::Double(f64))},
        {"dec9", opt(Value::Int(static_cast<int32_t>(h % 1999999999) - 999999999))},
        {"dec18", opt(Value::Int(static_cast<int64_t>(h % 1999999999999999999ull) - 999999999999999999ll))},
        {"dec38", opt(Value::Bytes(BigEndian(dec38, 16)))},
        {"dt", opt(Value::Int((i * 13) % 40000 - 20000))},
        {"tm", opt(Value::Int(static_cast<int64_t>(i) * 7919123 % 86400000000ll))},
        {"ts_ms", opt(Value::Int(static_cast<int64_t>(i) * 1000003 - 500000000))},
        {"ts_us_tz", opt(Value::Int(static_cast<int64_t>(i) * 3600000001ll))},
        {"ts_ns", opt(Value::Int(static_cast<int64_t>(i) * 1000003123457ll - 1000000000000000ll))},
        {"uid", opt(Value::Bytes(uid))},
        {"s", opt(Value::String("str_" + std::to_string(i) + std::string(static_cast<size_t>(i % 5), 'x') +
                                (i % 10 == 0 ? " \xC3\xA9\xF0\x9F\x98\x80" : "")))},
        {"sdict", opt(Value::String("cat_" + std::to_string(i % 17)))},
        {"bl", opt(Value::Bytes(bytes))},
        {"fixed", Value::Bytes(BigEndian(i, 4))},
        {"lf", i % 11 == 0 ? Value::Null() : Value::List(std::move(lf))},
        {"ll", i % 6 == 0 ? Value::Null() : Value::List(std::move(ll))},
        {"st", i % 9 == 0 ? Value::Null()
                          : Value::Struct({{"x", i % 4 == 1 ? Value::Null() : Value::Int(i)},
                                           {"y", Value::String("v" + std::to_string(i))},
                                           {"z", Value::List(std::move(z))}})},
        {"mp", i % 4 == 0 ? Value::Null() : Value::Map(std::move(mp))},
        {"ls", i % 10 == 0 ? Value::Null() : Value::List(std::move(ls))},
    }));
  }
  return rows;
}

std::vector<WrittenFile> WriteLakerunCorpus(const std::string& dir) {
  const Schema schema = CorpusSchema();
  const std::vector<Value> rows = CorpusRows(2000);
  const Json expected = RenderRows(schema, rows);

  struct Variant {
    std::string name;
    std::string description;
    WriterOptions options;
  };
  std::vector<Variant> variants;
  for (int version : {1, 2}) {
    const std::string v = "v" + std::to_string(version);
    for (Codec codec : {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kZstd, Codec::kLz4Raw,
                        Codec::kBrotli, Codec::kLz4}) {
      WriterOptions o;
      o.page_version = version;
      o.codec = codec;
      o.page_bytes = 4096;  // many pages per chunk
      o.row_group_rows = 700;
      variants.push_back({"lakerun_" + v + "_" + ToString(codec), "page " + v + ", " + ToString(codec), o});
    }
    WriterOptions enc;
    enc.page_version = version;
    enc.codec = Codec::kZstd;
    enc.page_bytes = 8192;
    enc.column_encoding = {
        {"b", Encoding::kRle},
        {"i32", Encoding::kDeltaBinaryPacked},
        {"u32", Encoding::kDeltaBinaryPacked},
        {"i64", Encoding::kDeltaBinaryPacked},
        {"u64", Encoding::kDeltaBinaryPacked},
        {"ts_ns", Encoding::kDeltaBinaryPacked},
        {"dec18", Encoding::kDeltaBinaryPacked},
        {"f32", Encoding::kByteStreamSplit},
        {"f64", Encoding::kByteStreamSplit},
        {"lf.list.element", Encoding::kByteStreamSplit},
        {"s", Encoding::kDeltaByteArray},
        {"bl", Encoding::kDeltaLengthByteArray},
        {"st.y", Encoding::kDeltaLengthByteArray},
        {"mp.key_value.key", Encoding::kDeltaByteArray},
        {"dt", Encoding::kDeltaBinaryPacked},
        {"ls.list.element.b", Encoding::kDeltaLengthByteArray},
    };
    variants.push_back({"lakerun_" + v + "_encodings", "page " + v + ", ZSTD, DELTA_*/BYTE_STREAM_SPLIT/RLE", enc});
    WriterOptions flba = enc;
    flba.column_encoding["fixed"] = Encoding::kByteStreamSplit;  // FIXED_LEN_BYTE_ARRAY (format 2.11)
    flba.column_encoding["uid"] = Encoding::kByteStreamSplit;
    flba.column_encoding["dec38"] = Encoding::kDeltaByteArray;
    variants.push_back({"lakerun_" + v + "_flba_encodings", "page " + v + ", FLBA BYTE_STREAM_SPLIT/DELTA_BYTE_ARRAY",
                        flba});
    WriterOptions fallback;
    fallback.page_version = version;
    fallback.dictionary_page_bytes = 256;  // the dictionary overflows part-way: fallback to PLAIN mid-chunk
    fallback.page_bytes = 2048;
    variants.push_back({"lakerun_" + v + "_dict_fallback", "page " + v + ", SNAPPY, dictionary fallback", fallback});
    WriterOptions plain;
    plain.page_version = version;
    plain.dictionary = false;
    plain.codec = Codec::kUncompressed;
    plain.statistics = false;
    variants.push_back({"lakerun_" + v + "_plain", "page " + v + ", UNCOMPRESSED, PLAIN only, one page", plain});
    // Every other variant carries a page index (many pages a chunk); this one shows files without one read alike.
    WriterOptions no_index;
    no_index.page_version = version;
    no_index.page_bytes = 4096;
    no_index.page_index = false;
    variants.push_back({"lakerun_" + v + "_no_page_index", "page " + v + ", SNAPPY, no page index", no_index});
  }

  std::vector<WrittenFile> out;
  for (const Variant& v : variants) {
    WrittenFile f;
    f.path = JoinPath(dir, v.name + ".parquet");
    f.description = v.description;
    f.expected = expected;
    if (v.options.codec == Codec::kLz4) f.unreadable_by = {"duckdb"};  // DuckDB 1.5: "Unsupported codec LZ4"
    // DuckDB 1.5: "BYTE_STREAM_SPLIT encoding is only supported for FLOAT or DOUBLE data".
    if (v.name.find("flba_encodings") != std::string::npos) f.unreadable_by = {"duckdb"};
    ParquetWriter writer(LocalFileSystem(), f.path, schema, v.options);
    writer.WriteRows(rows);
    writer.Close();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace lakerun::interop
