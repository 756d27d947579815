// Partition-value and statistics serialization of typed values.
#include "lakerun/format/delta/values.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  if (s == "NaN") { *out = NAN; return true; }
  if (s == "Infinity") { *out = INFINITY; return true; }
  if (s == "-Infinity") { *out = -INFINITY; return true; }
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

bool ParseDate(const std::string& s, int64_t* days) {
  int y = 0;
  unsigned m = 0, d = 0;
  int used = 0;
  if (std::sscanf(s.c_str(), "%d-%u-%u%n", &y, &m, &d, &used) != 3 || m < 1 || m > 12 || d < 1 || d > 31) return false;
  if (static_cast<size_t>(used) != s.size()) return false;
  *days = DaysFromCivil(y, m, d);
  return true;
}

// "YYYY-MM-DD hh:mm:ss[.ffffff]" or "YYYY-MM-DDThh:mm:ss[.ffffff]Z" -> microseconds since the epoch.
bool ParseTimestamp(const std::string& s, int64_t* micros) {
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char sep = 0;
  int used = 0;
  if (std::sscanf(s.c_str(), "%d-%u-%u%c%u:%u:%u%n", &y, &mo, &d, &sep, &h, &mi, &sec, &used) != 7) return false;
  if ((sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) {
    return false;
  }
  size_t pos = static_cast<size_t>(used);
  int64_t fraction = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (digits < 6) fraction = fraction * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return false;
    for (int i = digits; i < 6; ++i) fraction *= 10;
  }
  if (pos < s.size() && s[pos] == 'Z') ++pos;
  if (pos != s.size()) return false;
  *micros = ((DaysFromCivil(y, mo, d) * 24 + h) * 60 + mi) * 60000000ll + sec * 1000000ll + fraction;
  return true;
}

std::string FormatTimestamp(int64_t micros, bool iso_utc, bool millis_only) {
  int64_t days = micros / 86400000000ll;
  int64_t rest = micros % 86400000000ll;
  if (rest < 0) {
    rest += 86400000000ll;
    --days;
  }
  const int64_t secs = rest / 1000000;
  const int64_t frac = rest % 1000000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%c%02lld:%02lld:%02lld", CivilFromDays(days).c_str(), iso_utc ? 'T' : ' ',
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  std::string out = buf;
  if (millis_only) {
    std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac / 1000));
    out += buf;
  } else if (frac != 0) {
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  if (iso_utc) out += 'Z';
  return out;
}

bool IsIntegral(TypeKind k) {
  return k == TypeKind::kLong || k == TypeKind::kInteger || k == TypeKind::kShort || k == TypeKind::kByte;
}

}  // namespace

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::string CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

Value ParsePartitionValue(const std::optional<std::string>& text, const DataType& type, const std::string& context) {
  if (!text || text->empty()) return Value::Null();
  const std::string& s = *text;
  auto fail = [&]() -> Value {
    LAKERUN_THROW(CorruptDataError, context, ": partition value '", s, "' is not a valid ", TypeName(type));
  };
  switch (type.kind) {
    case TypeKind::kString:
      return Value::String(s);
    case TypeKind::kBinary:
      return Value::Bytes(s);
    case TypeKind::kLong:
    case TypeKind::kInteger:
    case TypeKind::kShort:
    case TypeKind::kByte: {
      int64_t v = 0;
      return ParseInt(s, &v) ? Value::Int(v) : fail();
    }
    case TypeKind::kFloat: {
      double v = 0;
      return ParseDouble(s, &v) ? Value::Float(static_cast<float>(v)) : fail();
    }
    case TypeKind::kDouble: {
      double v = 0;
      return ParseDouble(s, &v) ? Value::Double(v) : fail();
    }
    case TypeKind::kBoolean:
      if (s == "true") return Value::Bool(true);
      if (s == "false") return Value::Bool(false);
      return fail();
    case TypeKind::kDate: {
      int64_t days = 0;
      return ParseDate(s, &days) ? Value::Int(days) : fail();
    }
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampNtz: {
      int64_t micros = 0;
      return ParseTimestamp(s, &micros) ? Value::Int(micros) : fail();
    }
    case TypeKind::kDecimal: {
      // Unscaled integer of the decimal text.
      const size_t dot = s.find('.');
      std::string digits = dot == std::string::npos ? s : s.substr(0, dot) + s.substr(dot + 1);
      int frac = dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
      if (frac > type.scale) return fail();
      for (int i = frac; i < type.scale; ++i) digits += '0';
      int64_t v = 0;
      return type.precision <= 18 && ParseInt(digits, &v) ? Value::Int(v) : fail();
    }
    default:
      LAKERUN_THROW(NotImplemented, context, ": partition columns of type ", TypeName(type), " are not supported");
  }
}

std::optional<std::string> FormatPartitionValue(const Value& v, const DataType& type) {
  if (v.is_null()) return std::nullopt;
  switch (type.kind) {
    case TypeKind::kDate:
      return CivilFromDays(v.as_int());
    case TypeKind::kTimestamp:
      return FormatTimestamp(v.as_int(), /*iso_utc=*/true, /*millis_only=*/false);
    case TypeKind::kTimestampNtz:
      return FormatTimestamp(v.as_int(), /*iso_utc=*/false, /*millis_only=*/false);
    case TypeKind::kBoolean:
      return v.as_bool() ? "true" : "false";
    case TypeKind::kFloat:
    case TypeKind::kDouble: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_double());
      return std::string(buf);
    }
    case TypeKind::kString:
    case TypeKind::kBinary:
      return v.as_string();
    case TypeKind::kDecimal: {
      std::string digits = std::to_string(std::llabs(v.as_int()));
      while (static_cast<int>(digits.size()) <= type.scale) digits = "0" + digits;
      if (type.scale > 0) digits.insert(digits.size() - static_cast<size_t>(type.scale), ".");
      return (v.as_int() < 0 ? "-" : "") + digits;
    }
    default:
      return std::to_string(v.as_int());
  }
}

std::optional<std::string> FormatStatsValue(const Value& v, const DataType& type) {
  if (v.is_null()) return std::nullopt;
  if (IsIntegral(type.kind)) return std::to_string(v.as_int());
  switch (type.kind) {
    case TypeKind::kFloat:
    case TypeKind::kDouble: {
      const double d = v.as_double();
      if (!std::isfinite(d)) return std::nullopt;
      return nlohmann::json(d).dump();
    }
    case TypeKind::kString:
      return nlohmann::json(v.as_string()).dump();
    case TypeKind::kDate:
      return nlohmann::json(CivilFromDays(v.as_int())).dump();
    case TypeKind::kTimestamp:
      return nlohmann::json(FormatTimestamp(v.as_int(), true, true)).dump();
    case TypeKind::kTimestampNtz:
      return nlohmann::json(FormatTimestamp(v.as_int(), false, true)).dump();
    default:
      return std::nullopt;
  }
}

std::optional<Value> ParseStatsValue(const std::string& json_text, const DataType& type) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || j.is_null()) return std::nullopt;
  if (IsIntegral(type.kind)) {
    if (j.is_number_integer()) return Value::Int(j.get<int64_t>());
    return std::nullopt;
  }
  switch (type.kind) {
    case TypeKind::kFloat:
    case TypeKind::kDouble:
      if (j.is_number()) return type.kind == TypeKind::kFloat ? Value::Float(j.get<float>()) : Value::Double(j.get<double>());
      return std::nullopt;
    case TypeKind::kString:
      if (j.is_string()) return Value::String(j.get<std::string>());
      return std::nullopt;
    case TypeKind::kDate: {
      int64_t days = 0;
      if (j.is_string() && ParseDate(j.get<std::string>(), &days)) return Value::Int(days);
      return std::nullopt;
    }
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampNtz: {
      int64_t micros = 0;
      if (j.is_string()) {
        std::string s = j.get<std::string>();
        // Stats may carry a zone offset like "+00:00"; only UTC forms are understood here.
        if (s.size() > 6 && (s.compare(s.size() - 6, 6, "+00:00") == 0)) s = s.substr(0, s.size() - 6) + "Z";
        if (ParseTimestamp(s, &micros)) return Value::Int(micros);
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace lakerun::delta
