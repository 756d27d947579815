// Parquet's type vocabulary: physical types, repetition, encodings, codecs, converted and logical types.
//
// Enumerator values equal the numbers in parquet.thrift, so they round-trip through the file format unchanged.
// Values a file may carry that this enum does not name (a newer writer's encoding or codec) are kept as their
// number; readers reject them only when they have to decode such data (NotImplemented).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace lakerun::parquet {

enum class PhysicalType : int8_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,  ///< 12 bytes: 8-byte little-endian nanoseconds of the day, then a 4-byte Julian day (Spark, Impala)
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Repetition : int8_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class Encoding : int8_t {
  kPlain = 0,
  kPlainDictionary = 2,  ///< v1 name of dictionary encoding (pages and dictionary page)
  kRle = 3,              ///< RLE/bit-packed hybrid (levels, BOOLEAN values in v2 pages)
  kBitPacked = 4,        ///< deprecated levels encoding
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class Codec : int8_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,     ///< not supported (NotImplemented)
  kBrotli = 4,
  kLz4 = 5,     ///< deprecated: Hadoop-framed LZ4 blocks (falls back to an LZ4 frame, then a raw block, on read)
  kZstd = 6,
  kLz4Raw = 7,
};

/// The kind of a page, as its header's `type` says (a reader skips the kinds it does not know).
enum class PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

/// The deprecated ConvertedType annotation. Still the only annotation in files some writers produce (DuckDB writes
/// ConvertedType only for ints, strings, DATE, LIST and MAP); readers derive a LogicalType from it.
enum class ConvertedType : int8_t {
  kNone = -1,
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class TimeUnit : int8_t { kMillis = 0, kMicros = 1, kNanos = 2 };

/// The LogicalType annotation of a schema node (with its parameters). kNone: no annotation.
struct LogicalType {
  enum class Kind : int8_t {
    kNone,
    kString,
    kMap,
    kList,
    kEnum,
    kDecimal,
    kDate,
    kTime,
    kTimestamp,
    kInteger,
    kUnknown,  ///< always-null column
    kJson,
    kBson,
    kUuid,
    kFloat16,
    kInterval,   ///< only as ConvertedType INTERVAL (FLBA 12)
    kVariant,    ///< recognised, not interpreted
    kGeometry,   ///< recognised, not interpreted
    kGeography,  ///< recognised, not interpreted
    kOther,      ///< a union member newer than this reader; the node is read by its physical type
  };
  Kind kind = Kind::kNone;
  int32_t precision = 0;         ///< kDecimal
  int32_t scale = 0;             ///< kDecimal
  TimeUnit unit = TimeUnit::kMicros;  ///< kTime, kTimestamp
  bool adjusted_to_utc = false;  ///< kTime, kTimestamp
  int8_t bit_width = 0;          ///< kInteger: 8, 16, 32 or 64
  bool is_signed = true;         ///< kInteger

  static LogicalType None() { return {}; }
  static LogicalType String() { return Of(Kind::kString); }
  static LogicalType Enum() { return Of(Kind::kEnum); }
  static LogicalType Json() { return Of(Kind::kJson); }
  static LogicalType Bson() { return Of(Kind::kBson); }
  static LogicalType Uuid() { return Of(Kind::kUuid); }
  static LogicalType Float16() { return Of(Kind::kFloat16); }
  static LogicalType Date() { return Of(Kind::kDate); }
  static LogicalType List() { return Of(Kind::kList); }
  static LogicalType Map() { return Of(Kind::kMap); }
  static LogicalType Unknown() { return Of(Kind::kUnknown); }
  static LogicalType Decimal(int32_t precision, int32_t scale) {
    LogicalType t = Of(Kind::kDecimal);
    t.precision = precision;
    t.scale = scale;
    return t;
  }
  static LogicalType Time(TimeUnit unit, bool adjusted_to_utc) {
    LogicalType t = Of(Kind::kTime);
    t.unit = unit;
    t.adjusted_to_utc = adjusted_to_utc;
    return t;
  }
  static LogicalType Timestamp(TimeUnit unit, bool adjusted_to_utc) {
    LogicalType t = Of(Kind::kTimestamp);
    t.unit = unit;
    t.adjusted_to_utc = adjusted_to_utc;
    return t;
  }
  static LogicalType Int(int bit_width, bool is_signed) {
    LogicalType t = Of(Kind::kInteger);
    t.bit_width = static_cast<int8_t>(bit_width);
    t.is_signed = is_signed;
    return t;
  }

  /// "STRING", "DECIMAL(10,2)", "TIMESTAMP(MICROS,UTC)", "INT(16,unsigned)", ... ("" for kNone).
  std::string ToString() const;
  bool operator==(const LogicalType& o) const {
    return kind == o.kind && precision == o.precision && scale == o.scale && unit == o.unit &&
           adjusted_to_utc == o.adjusted_to_utc && bit_width == o.bit_width && is_signed == o.is_signed;
  }
  bool operator!=(const LogicalType& o) const { return !(*this == o); }

 private:
  static LogicalType Of(Kind kind) {
    LogicalType t;
    t.kind = kind;
    return t;
  }
};

/// Names as parquet.thrift spells them ("INT32", "RLE_DICTIONARY", "SNAPPY", "OPTIONAL", "UTF8"); unknown numbers
/// print as "UNKNOWN(<n>)".
std::string ToString(PhysicalType type);
std::string ToString(Repetition repetition);
std::string ToString(Encoding encoding);
std::string ToString(Codec codec);
std::string ToString(PageType type);
std::string ToString(ConvertedType type);
std::string ToString(TimeUnit unit);

/// Parses a codec name, case-insensitively: "uncompressed"/"none", "snappy", "gzip", "brotli", "lz4" (Hadoop),
/// "zstd", "lz4_raw". Throws InvalidArgument for anything else.
Codec ParseCodec(const std::string& name);
/// Parses an encoding name as ToString(Encoding) prints it, case-insensitively. Throws InvalidArgument.
Encoding ParseEncoding(const std::string& name);

/// An INT96 timestamp (12 bytes as stored: little-endian nanoseconds of the day, then a little-endian Julian day, as
/// Spark and Impala write them) as nanoseconds since 1970-01-01 00:00:00 UTC.
inline int64_t Int96ToUnixNanos(const uint8_t* value) {
  int64_t nanos_of_day;
  int32_t julian_day;
  std::memcpy(&nanos_of_day, value, 8);
  std::memcpy(&julian_day, value + 8, 4);
  constexpr int64_t kUnixEpochJulianDay = 2440588;
  constexpr int64_t kNanosPerDay = 86400ll * 1000000000ll;
  return (static_cast<int64_t>(julian_day) - kUnixEpochJulianDay) * kNanosPerDay + nanos_of_day;
}

/// Bytes per value of a fixed-width physical type (BOOLEAN: 1, as decoded); 0 for BYTE_ARRAY; `type_length` for FLBA.
int FixedWidth(PhysicalType type, int32_t type_length);

}  // namespace lakerun::parquet
