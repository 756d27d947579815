#include "cli/value_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace lakerun::cli {
namespace {

using parquet::Value;
using Kind = DisplayType::Kind;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

const DisplayType& Child(const DisplayType& t, Kind kind, size_t i) {
  static const DisplayType kPlain;
  return t.kind == kind && t.children.size() > i ? t.children[i] : kPlain;
}

// Digits of a non-negative number with a decimal point `scale` digits from the right.
std::string PlacePoint(bool negative, std::string digits, int scale) {
  if (scale < 0) {
    digits.append(static_cast<size_t>(-scale), '0');
  } else if (scale > 0) {
    const size_t s = static_cast<size_t>(scale);
    if (digits.size() <= s) digits.insert(0, s + 1 - digits.size(), '0');
    digits.insert(digits.size() - s, ".");
  }
  return (negative ? "-" : "") + digits;
}

float HalfToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa ? NAN : INFINITY;
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return (h & 0x8000) ? -value : value;
}

std::string UuidText(const std::string& b) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kDigits[static_cast<unsigned char>(b[i]) >> 4]);
    out.push_back(kDigits[static_cast<unsigned char>(b[i]) & 15]);
  }
  return out;
}

// The text of a scalar whose type changes how it prints; nullopt for any other value (or a value of an unexpected
// kind, which then prints by its kind).
std::optional<std::string> TypedText(const Value& v, const DisplayType& t) {
  const bool is_int = v.kind() == Value::Kind::kInt;
  const bool is_bytes = v.kind() == Value::Kind::kBytes;
  const size_t size = is_bytes ? v.as_string().size() : 0;
  switch (t.kind) {
    case Kind::kUnsigned64:
      if (is_int) return std::to_string(static_cast<uint64_t>(v.as_int()));
      break;
    case Kind::kDate:
      if (is_int) return DateText(v.as_int());
      break;
    case Kind::kTime:
      if (is_int) return TimeText(v.as_int(), t.units_per_second);
      break;
    case Kind::kTimestamp:
      if (is_int) return TimestampText(v.as_int(), t.units_per_second, t.utc);
      if (size == 12) return Int96Text(v.as_string());
      break;
    case Kind::kDecimal:
      if (is_int) return DecimalText(v.as_int(), t.scale);
      if (size > 0) return DecimalText(v.as_string(), t.scale);
      break;
    case Kind::kInt96:
      if (size == 12) return Int96Text(v.as_string());
      break;
    case Kind::kUuid:
      if (size == 16) return UuidText(v.as_string());
      break;
    case Kind::kFloat16:
      if (size == 2) {
        uint16_t h;
        std::memcpy(&h, v.as_string().data(), 2);
        return Value::Float(HalfToFloat(h)).ToString();
      }
      break;
    default: break;
  }
  return std::nullopt;
}

// Typed scalars that read as numbers (unquoted in nested text).
bool IsNumeric(const DisplayType& t) {
  return t.kind == Kind::kDecimal || t.kind == Kind::kUnsigned64 || t.kind == Kind::kFloat16;
}

std::string Quoted(const std::string& s) { return Value::String(s).ToString(); }

// A value inside a nested one: JSON-like, strings and typed text quoted.
std::string NestedText(const Value& v, const DisplayType& t) {
  if (v.is_null()) return "null";
  if (auto typed = TypedText(v, t)) return IsNumeric(t) ? *typed : Quoted(*typed);
  std::string out;
  switch (v.kind()) {
    case Value::Kind::kList:
      out = "[";
      for (size_t i = 0; i < v.children().size(); ++i) {
        out += (i ? ", " : "") + NestedText(v.children()[i], Child(t, Kind::kList, 0));
      }
      return out + "]";
    case Value::Kind::kStruct:
      out = "{";
      for (size_t i = 0; i < v.children().size(); ++i) {
        const std::string& name = v.field_names()[i];
        out += (i ? ", " : "") + Quoted(name) + ": " + NestedText(v.children()[i], t.Field(name));
      }
      return out + "}";
    case Value::Kind::kMap:
      out = "{";
      for (size_t i = 0; i < v.map_size(); ++i) {
        out += (i ? ", " : "") + NestedText(v.map_key(i), Child(t, Kind::kMap, 0)) + " => " +
               NestedText(v.map_value(i), Child(t, Kind::kMap, 1));
      }
      return out + "}";
    default: return v.ToString();
  }
}

bool IsNested(const Value& v) {
  return v.kind() == Value::Kind::kList || v.kind() == Value::Kind::kStruct || v.kind() == Value::Kind::kMap;
}

// A floating-point number as JSON: the shortest text that round-trips, as a number; non-finite as a string.
nlohmann::ordered_json FloatJson(const Value& v) {
  const double d = v.as_double();
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  // A float's shortest text read back as a double, so 0.1f prints as 0.1 and not as 0.10000000149011612.
  return std::strtod(v.ToString().c_str(), nullptr);
}

}  // namespace

std::string DateText(int64_t days) {
  // H. Hinnant's civil_from_days.
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  char buf[64];
  if (y >= 0 && y <= 9999) {
    std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld", static_cast<long long>(y), static_cast<long long>(m),
                  static_cast<long long>(d));
  } else {
    std::snprintf(buf, sizeof buf, "%c%04lld-%02lld-%02lld", y < 0 ? '-' : '+',
                  static_cast<long long>(y < 0 ? -y : y), static_cast<long long>(m), static_cast<long long>(d));
  }
  return buf;
}

std::string TimeText(int64_t units, int64_t units_per_second) {
  const int64_t secs = FloorDiv(units, units_per_second);
  const int64_t frac = units - secs * units_per_second;
  const int64_t of_day = secs - FloorDiv(secs, 86400) * 86400;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(of_day / 3600),
                static_cast<long long>(of_day / 60 % 60), static_cast<long long>(of_day % 60));
  std::string out = buf;
  if (units_per_second > 1) {
    const int digits = units_per_second == 1000 ? 3 : units_per_second == 1000000 ? 6 : 9;
    std::snprintf(buf, sizeof buf, ".%0*lld", digits, static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

std::string TimestampText(int64_t units, int64_t units_per_second, bool utc) {
  const int64_t per_day = 86400 * units_per_second;
  const int64_t days = FloorDiv(units, per_day);
  return DateText(days) + "T" + TimeText(units - days * per_day, units_per_second) + (utc ? "Z" : "");
}

std::string Int96Text(std::string_view bytes) {
  constexpr int64_t kNanosPerDay = 86400LL * 1000000000LL;
  constexpr int64_t kJulianDayOfEpoch = 2440588;
  int64_t nanos = 0;
  int32_t julian = 0;
  std::memcpy(&nanos, bytes.data(), 8);
  std::memcpy(&julian, bytes.data() + 8, 4);
  const int64_t carry = FloorDiv(nanos, kNanosPerDay);
  return DateText(static_cast<int64_t>(julian) - kJulianDayOfEpoch + carry) + "T" +
         TimeText(nanos - carry * kNanosPerDay, 1000000000);
}

std::string DecimalText(int64_t unscaled, int scale) {
  const bool negative = unscaled < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  return PlacePoint(negative, std::to_string(magnitude), scale);
}

std::string DecimalText(std::string_view big_endian, int scale) {
  if (big_endian.empty()) return PlacePoint(false, "0", scale);
  const bool negative = (static_cast<unsigned char>(big_endian[0]) & 0x80) != 0;
  std::vector<uint8_t> magnitude(big_endian.begin(), big_endian.end());
  if (negative) {  // two's complement: invert and add one
    for (auto& b : magnitude) b = static_cast<uint8_t>(~b);
    for (size_t i = magnitude.size(); i-- > 0;) {
      if (++magnitude[i] != 0) break;
    }
  }
  // Long division by 10^9, collecting nine-digit groups from the least significant one.
  constexpr uint64_t kBillion = 1000000000;
  std::vector<uint32_t> groups;
  size_t start = 0;
  while (true) {
    while (start < magnitude.size() && magnitude[start] == 0) ++start;
    if (start == magnitude.size()) break;
    uint64_t remainder = 0;
    for (size_t i = start; i < magnitude.size(); ++i) {
      const uint64_t current = (remainder << 8) | magnitude[i];
      magnitude[i] = static_cast<uint8_t>(current / kBillion);
      remainder = current % kBillion;
    }
    groups.push_back(static_cast<uint32_t>(remainder));
  }
  if (groups.empty()) return PlacePoint(false, "0", scale);
  std::string digits = std::to_string(groups.back());
  for (size_t i = groups.size() - 1; i-- > 0;) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%09u", groups[i]);
    digits += buf;
  }
  return PlacePoint(negative, digits, scale);
}

std::string Base64(std::string_view bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(n >> shift) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string CellText(const Value& value, const DisplayType& type) {
  if (value.is_null()) return "null";
  if (auto typed = TypedText(value, type)) return *typed;
  if (value.kind() == Value::Kind::kString) return value.as_string();
  if (IsNested(value)) return NestedText(value, type);
  return value.ToString();
}

std::string CsvText(const Value& value, const DisplayType& type) {
  if (value.is_null()) return "";
  if (auto typed = TypedText(value, type)) return *typed;
  switch (value.kind()) {
    case Value::Kind::kString: return value.as_string();
    case Value::Kind::kBytes: return Base64(value.as_string());
    default: break;
  }
  if (IsNested(value)) {
    return JsonOf(value, type).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  return value.ToString();
}

nlohmann::ordered_json JsonOf(const Value& value, const DisplayType& type) {
  using nlohmann::ordered_json;
  if (value.is_null()) return nullptr;
  if (auto typed = TypedText(value, type)) {
    if (type.kind == Kind::kUnsigned64) return static_cast<uint64_t>(value.as_int());
    if (type.kind == Kind::kFloat16) return FloatJson(Value::Float(std::strtof(typed->c_str(), nullptr)));
    return *typed;
  }
  switch (value.kind()) {
    case Value::Kind::kBool: return value.as_bool();
    case Value::Kind::kInt: return value.as_int();
    case Value::Kind::kFloat:
    case Value::Kind::kDouble: return FloatJson(value);
    case Value::Kind::kString: return value.as_string();
    case Value::Kind::kBytes: return Base64(value.as_string());
    case Value::Kind::kList: {
      ordered_json out = ordered_json::array();
      for (const auto& item : value.children()) out.push_back(JsonOf(item, Child(type, Kind::kList, 0)));
      return out;
    }
    case Value::Kind::kStruct: {
      ordered_json out = ordered_json::object();
      for (size_t i = 0; i < value.children().size(); ++i) {
        const std::string& name = value.field_names()[i];
        out[name] = JsonOf(value.children()[i], type.Field(name));
      }
      return out;
    }
    case Value::Kind::kMap: {
      ordered_json out = ordered_json::object();
      for (size_t i = 0; i < value.map_size(); ++i) {
        const Value& key = value.map_key(i);
        out[CellText(key, Child(type, Kind::kMap, 0))] = JsonOf(value.map_value(i), Child(type, Kind::kMap, 1));
      }
      return out;
    }
    default: return nullptr;
  }
}

}  // namespace lakerun::cli
