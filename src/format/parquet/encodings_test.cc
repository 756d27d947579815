// Unit tests of the building blocks: Thrift compact protocol, RLE/bit-packed hybrid, DELTA_BINARY_PACKED, codecs.
#include <lz4frame.h>

#include <limits>
#include <random>

#include "format/parquet/delta_binary_packed.h"
#include "format/parquet/codec.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/rle_decoder.h"
#include "format/parquet/rle_encoder.h"
#include "format/parquet/thrift_compact.h"
#include "format/parquet/value_decoders.h"
#include "format/parquet/value_encoders.h"
#include "format/parquet/parquet_test_util.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

std::string Footer(const std::string& file, size_t* at) {
  uint32_t len;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  *at = file.size() - 8 - len;
  return file.substr(*at, len);
}

std::string WithFooter(const std::string& file, size_t at, const std::string& footer) {
  std::string out = file.substr(0, at) + footer;
  const uint32_t len = static_cast<uint32_t>(footer.size());
  out.append(reinterpret_cast<const char*>(&len), 4);
  return out + "PAR1";
}

TEST(ThriftTest, UnknownFieldsOfEveryWireTypeAreSkipped) {
  MemFile f;
  std::vector<Value> rows = {Value::Struct({{"s", Value::String("x")}})};
  f.WriteRows(Schema::FromFields({Leaf("s", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String())}),
              rows);
  const std::string file = f.Bytes();
  size_t at;
  std::string footer = Footer(file, &at);
  ASSERT_EQ(footer.back(), '\0');
  footer.pop_back();  // reopen the top-level struct and append fields a newer writer might add
  std::string extra;
  thrift::CompactWriter w(&extra);
  w.FieldBegin(100, thrift::Type::kStruct);
  w.StructBegin();
  w.WriteI64Field(1, -5);
  w.WriteBinaryField(2, "geo");
  w.FieldBegin(3, thrift::Type::kList);
  w.ListBegin(thrift::Type::kStruct, 2);
  for (int i = 0; i < 2; ++i) {
    w.StructBegin();
    w.WriteBoolField(1, true);
    w.StructEnd();
  }
  w.FieldBegin(4, thrift::Type::kDouble);
  extra.append(8, '\x01');
  w.FieldBegin(5, thrift::Type::kMap);
  w.WriteVarint(1);
  extra.push_back(static_cast<char>(0x85));  // binary -> i32
  w.WriteBinary("k");
  w.WriteI32(3);
  w.StructEnd();
  w.WriteBoolField(101, false);
  footer += extra;
  footer.push_back('\0');
  f.SetBytes(WithFooter(file, at, footer));
  EXPECT_EQ(f.ReadAll(), rows);
}

TEST(ThriftTest, UnknownLogicalTypeUnionMemberReadsByPhysicalType) {
  MemFile f;
  std::vector<Value> rows = {Value::Struct({{"s", Value::String("x")}})};
  SchemaNode s = Leaf("s", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String());
  s.converted_type = ConvertedType::kNone;
  f.WriteRows(Schema::FromFields({s}), rows);
  const std::string file = f.Bytes();
  size_t at;
  std::string footer = Footer(file, &at);
  // The STRING member: field 1 (struct) holding an empty struct, then the union's stop byte.
  const size_t pos = footer.find(std::string("\x1c\x00\x00", 3));
  ASSERT_NE(pos, std::string::npos);
  footer.replace(pos, 3, std::string("\x0c\x50\x00\x00", 4));  // member 40, unknown to this reader
  f.SetBytes(WithFooter(file, at, footer));
  auto back = f.Open();
  EXPECT_EQ(back->schema().column(0).logical_type.kind, LogicalType::Kind::kOther);
  auto got = f.ReadAll();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].Field("s")->as_string(), "x");
  EXPECT_EQ(got[0].Field("s")->kind(), Value::Kind::kBytes);
}

TEST(ThriftTest, TruncatedStructsFailWithOffsets) {
  std::string bytes;
  thrift::CompactWriter w(&bytes);
  w.StructBegin();
  w.WriteBinaryField(4, "abcdef");
  w.StructEnd();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    thrift::CompactReader r(std::string_view(bytes).substr(0, cut), "ctx", 1000);
    EXPECT_THROW_WITH(r.ReadStruct([&](int16_t, thrift::Type t) { r.Skip(t); }), CorruptDataError, "ctx",
                      "offset 100");
  }
}

template <typename T>
std::vector<T> RleRoundTrip(const std::vector<T>& values, int bw) {
  std::string enc;
  EncodeRleHybrid(values.data(), static_cast<int64_t>(values.size()), bw, &enc);
  DecodeContext ctx;
  RleDecoder dec(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), bw, &ctx);
  std::vector<T> out(values.size());
  // Decode in uneven batches to cross run and group boundaries.
  size_t done = 0, step = 1;
  while (done < out.size()) {
    size_t k = std::min(step, out.size() - done);
    dec.Decode<T>(out.data() + done, static_cast<int64_t>(k));
    done += k;
    step = step * 3 % 37 + 1;
  }
  return out;
}

TEST(RleTest, RoundTripsEveryBitWidth) {
  std::mt19937 rng(3);
  for (int bw = 0; bw <= 32; ++bw) {
    std::vector<uint32_t> v(1000);
    const uint64_t mask = bw == 32 ? 0xffffffffu : (uint64_t{1} << bw) - 1;
    for (size_t i = 0; i < v.size(); ++i) {
      // Alternate runs and noise.
      v[i] = static_cast<uint32_t>(((i / 50) % 2 ? rng() : (i / 100)) & mask);
    }
    EXPECT_EQ(RleRoundTrip(v, bw), v) << "bit width " << bw;
  }
  std::vector<int16_t> levels = {0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0};
  EXPECT_EQ(RleRoundTrip(levels, 2), levels);
}

TEST(RleTest, DataEndingEarlyIsCorrupt) {
  std::vector<uint32_t> v(20, 5);
  std::string enc;
  EncodeRleHybrid(v.data(), 20, 3, &enc);
  DecodeContext ctx;
  RleDecoder dec(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), 3, &ctx);
  std::vector<uint32_t> out(30);
  EXPECT_THROW_WITH(dec.Decode<uint32_t>(out.data(), 30), CorruptDataError, "ends 10 values early");
  EXPECT_THROW_WITH(RleDecoder(nullptr, 0, 33, &ctx), CorruptDataError, "bit width 33");
}

// DuckDB's V2 writer computes INT32 deltas in 64 bits, so a miniblock can be 33 bits wide; read modulo 2^32.
TEST(DeltaTest, Int32MiniblocksWiderThan32BitsWrap) {
  auto varint = [](uint64_t v, std::string* out) {
    while (v >= 0x80) {
      out->push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out->push_back(static_cast<char>(v));
  };
  auto zigzag = [](int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); };
  const std::vector<int32_t> values = {INT32_MAX, INT32_MIN, 0};
  // 64-bit deltas: -4294967295 and 2147483648; min delta -4294967295; adjusted: 0 and 6442450943 (33 bits).
  std::string enc;
  varint(128, &enc);
  varint(4, &enc);
  varint(values.size(), &enc);
  varint(zigzag(INT32_MAX), &enc);
  varint(zigzag(-4294967295LL), &enc);
  enc += std::string("\x21\x00\x00\x00", 4);  // widths 33, 0, 0, 0
  std::string packed(32 * 33 / 8, '\0');        // 32 values of 33 bits, LSB first
  const uint64_t adjusted[2] = {0, 6442450943ULL};
  for (int v = 0; v < 2; ++v) {
    for (int b = 0; b < 33; ++b) {
      if ((adjusted[v] >> b) & 1) {
        const int bit = v * 33 + b;
        packed[bit / 8] = static_cast<char>(packed[bit / 8] | (1 << (bit % 8)));
      }
    }
  }
  enc += packed;
  DecodeContext ctx;
  DeltaBinaryPackedDecoder dec(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), &ctx);
  std::vector<int32_t> out(values.size());
  dec.Decode<int32_t>(out.data(), static_cast<int64_t>(out.size()));
  EXPECT_EQ(out, values);
}

TEST(DeltaTest, ExtremeValuesWrapAround) {
  std::vector<int64_t> v = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 0, -1,
                            std::numeric_limits<int64_t>::min(), 42};
  for (int i = 0; i < 300; ++i) v.push_back(i * i * (i % 2 ? -1 : 1));
  ColumnData in = ColumnData::Int64s(v);
  std::string enc;
  EncodeDeltaBinaryPacked(in, 0, in.num_values(), &enc);
  ColumnData out(PhysicalType::kInt64, 0);
  DecodeContext ctx;
  EXPECT_EQ(DecodeDeltaBinaryPacked(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), in.num_values(), &out,
                                    ctx),
            enc.size());
  EXPECT_TRUE(testing::SameColumn(in, out));
  std::vector<int32_t> v32 = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 7};
  ColumnData in32 = ColumnData::Int32s(v32);
  enc.clear();
  EncodeDeltaBinaryPacked(in32, 0, 3, &enc);
  ColumnData out32(PhysicalType::kInt32, 0);
  DecodeDeltaBinaryPacked(reinterpret_cast<const uint8_t*>(enc.data()), enc.size(), 3, &out32, ctx);
  EXPECT_TRUE(testing::SameColumn(in32, out32));
}

TEST(CodecUnitTest, GzipMultiMemberStreams) {
  std::string a(1000, 'a'), b = "second member";
  std::string both;
  Compress(Codec::kGzip, 0, a, &both);
  Compress(Codec::kGzip, 9, b, &both);
  std::vector<uint8_t> out(a.size() + b.size());
  Decompress(Codec::kGzip, both, out.data(), out.size(), "ctx");
  EXPECT_EQ(std::string(out.begin(), out.end()), a + b);
  std::vector<uint8_t> small(a.size());
  EXPECT_THROW_WITH(Decompress(Codec::kGzip, both, small.data(), small.size(), "ctx"), CorruptDataError,
                    "GZIP decompression failed");
}

TEST(CodecUnitTest, Lz4AcceptsFramesAndRawBlocksAsFallbacks) {
  std::string input;
  for (int i = 0; i < 1000; ++i) input += "row " + std::to_string(i % 17) + ";";
  std::string frame(LZ4F_compressFrameBound(input.size(), nullptr), '\0');
  frame.resize(LZ4F_compressFrame(frame.data(), frame.size(), input.data(), input.size(), nullptr));
  std::vector<uint8_t> out(input.size());
  Decompress(Codec::kLz4, frame, out.data(), out.size(), "ctx");
  EXPECT_EQ(std::string(out.begin(), out.end()), input);
  std::string raw;
  Compress(Codec::kLz4Raw, 0, input, &raw);
  std::fill(out.begin(), out.end(), 0);
  Decompress(Codec::kLz4, raw, out.data(), out.size(), "ctx");
  EXPECT_EQ(std::string(out.begin(), out.end()), input);
}

TEST(ValueTest, RendersJsonLike) {
  Value v = Value::Struct({{"a", Value::List({Value::Int(1), Value::Null(), Value::Float(0.1f)})},
                           {"b", Value::Bytes(std::string("\x00\xff", 2))},
                           {"m", Value::Map({{Value::String("k\""), Value::Double(2.5)}})}});
  EXPECT_EQ(v.ToString(), "{\"a\": [1, null, 0.1], \"b\": b\"\\x00\\xff\", \"m\": {\"k\\\"\" => 2.5}}");
}

TEST(SchemaTest, TensorShapeParsing) {
  FileMetaData md;
  md.key_value_metadata = {{"lakerun.shape.x", "[28, 28]"}, {"lakerun.shape.bad", "[0]"},
                           {"lakerun.shape.junk", "28x28"}};
  EXPECT_EQ(TensorShape(md, "x"), (std::vector<int64_t>{28, 28}));
  EXPECT_EQ(TensorShape(md, "missing"), std::nullopt);
  EXPECT_THROW_WITH(TensorShape(md, "bad"), CorruptDataError, "lakerun.shape.bad");
  EXPECT_THROW_WITH(TensorShape(md, "junk"), CorruptDataError, "not a JSON array");
}

TEST(TypesTest, Int96ToUnixNanos) {
  uint8_t v[12];
  const int64_t nanos = 3600ll * 1000000000ll + 5;
  const int32_t julian = 2440588 + 2;  // 1970-01-03
  std::memcpy(v, &nanos, 8);
  std::memcpy(v + 8, &julian, 4);
  EXPECT_EQ(Int96ToUnixNanos(v), 2 * 86400ll * 1000000000ll + nanos);
}

}  // namespace
}  // namespace lakerun::parquet
