#include "lakerun/format/parquet/types.h"

#include <algorithm>
#include <cctype>

#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

template <size_t N>
std::string Name(const char* const (&names)[N], int value) {
  if (value >= 0 && static_cast<size_t>(value) < N && names[value][0] != '\0') return names[value];
  return StrCat("UNKNOWN(", value, ")");
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string ToString(PhysicalType type) {
  static const char* const kNames[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                       "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return Name(kNames, static_cast<int>(type));
}

std::string ToString(Repetition repetition) {
  static const char* const kNames[] = {"REQUIRED", "OPTIONAL", "REPEATED"};
  return Name(kNames, static_cast<int>(repetition));
}

std::string ToString(Encoding encoding) {
  static const char* const kNames[] = {"PLAIN",
                                       "",
                                       "PLAIN_DICTIONARY",
                                       "RLE",
                                       "BIT_PACKED",
                                       "DELTA_BINARY_PACKED",
                                       "DELTA_LENGTH_BYTE_ARRAY",
                                       "DELTA_BYTE_ARRAY",
                                       "RLE_DICTIONARY",
                                       "BYTE_STREAM_SPLIT"};
  return Name(kNames, static_cast<int>(encoding));
}

std::string ToString(Codec codec) {
  static const char* const kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return Name(kNames, static_cast<int>(codec));
}

std::string ToString(PageType type) {
  static const char* const kNames[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
  return Name(kNames, static_cast<int>(type));
}

std::string ToString(ConvertedType type) {
  static const char* const kNames[] = {
      "UTF8",   "MAP",    "MAP_KEY_VALUE", "LIST",    "ENUM",     "DECIMAL", "DATE",  "TIME_MILLIS",
      "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8",
      "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"};
  if (type == ConvertedType::kNone) return "NONE";
  return Name(kNames, static_cast<int>(type));
}

std::string ToString(TimeUnit unit) {
  static const char* const kNames[] = {"MILLIS", "MICROS", "NANOS"};
  return Name(kNames, static_cast<int>(unit));
}

std::string LogicalType::ToString() const {
  switch (kind) {
    case Kind::kNone: return "";
    case Kind::kString: return "STRING";
    case Kind::kMap: return "MAP";
    case Kind::kList: return "LIST";
    case Kind::kEnum: return "ENUM";
    case Kind::kDecimal: return StrCat("DECIMAL(", precision, ",", scale, ")");
    case Kind::kDate: return "DATE";
    case Kind::kTime:
      return StrCat("TIME(", parquet::ToString(unit), ",", adjusted_to_utc ? "UTC" : "local", ")");
    case Kind::kTimestamp:
      return StrCat("TIMESTAMP(", parquet::ToString(unit), ",", adjusted_to_utc ? "UTC" : "local", ")");
    case Kind::kInteger: return StrCat("INT(", static_cast<int>(bit_width), ",", is_signed ? "signed" : "unsigned", ")");
    case Kind::kUnknown: return "UNKNOWN";
    case Kind::kJson: return "JSON";
    case Kind::kBson: return "BSON";
    case Kind::kUuid: return "UUID";
    case Kind::kFloat16: return "FLOAT16";
    case Kind::kInterval: return "INTERVAL";
    case Kind::kVariant: return "VARIANT";
    case Kind::kGeometry: return "GEOMETRY";
    case Kind::kGeography: return "GEOGRAPHY";
    case Kind::kOther: return "OTHER";
  }
  return "";
}

Codec ParseCodec(const std::string& name) {
  const std::string n = Lower(name);
  if (n == "uncompressed" || n == "none") return Codec::kUncompressed;
  if (n == "snappy") return Codec::kSnappy;
  if (n == "gzip") return Codec::kGzip;
  if (n == "brotli") return Codec::kBrotli;
  if (n == "lz4") return Codec::kLz4;
  if (n == "zstd") return Codec::kZstd;
  if (n == "lz4_raw") return Codec::kLz4Raw;
  LAKERUN_THROW(InvalidArgument, "unknown Parquet codec '", name,
                "', expected one of uncompressed, snappy, gzip, brotli, lz4, zstd, lz4_raw");
}

Encoding ParseEncoding(const std::string& name) {
  const std::string n = Lower(name);
  for (int i = 0; i <= 9; ++i) {
    if (i == 1) continue;
    if (Lower(ToString(static_cast<Encoding>(i))) == n) return static_cast<Encoding>(i);
  }
  LAKERUN_THROW(InvalidArgument, "unknown Parquet encoding '", name, "'");
}

int FixedWidth(PhysicalType type, int32_t type_length) {
  switch (type) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kInt96: return 12;
    case PhysicalType::kByteArray: return 0;
    case PhysicalType::kFixedLenByteArray: return type_length;
  }
  return 0;
}

}  // namespace lakerun::parquet
