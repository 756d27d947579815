// `lakerun table head PATH [-n N] [--columns a,b]`: the first rows of a Parquet file as a text table; nested values
// are rendered JSON-like.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/parquet.h"

namespace lakerun::cli {
namespace {

using namespace lakerun::parquet;

constexpr size_t kMaxCellWidth = 48;

// Days since 1970-01-01 to "YYYY-MM-DD" (proleptic Gregorian; H. Hinnant's civil_from_days).
std::string Date(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld", static_cast<long long>(y), static_cast<long long>(m),
                static_cast<long long>(d));
  return buf;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Time of day from a count of `per_second` units since midnight.
std::string TimeOfDay(int64_t units, int64_t per_second) {
  const int64_t secs = FloorDiv(units, per_second);
  const int64_t frac = units - secs * per_second;
  char buf[80];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(secs / 3600 % 24),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  std::string out = buf;
  if (per_second > 1) {
    const int digits = per_second == 1000 ? 3 : per_second == 1000000 ? 6 : 9;
    std::snprintf(buf, sizeof buf, ".%0*lld", digits, static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

std::string Timestamp(int64_t units, int64_t per_second, bool utc) {
  const int64_t per_day = 86400 * per_second;
  const int64_t days = FloorDiv(units, per_day);
  return Date(days) + " " + TimeOfDay(units - days * per_day, per_second) + (utc ? "Z" : "");
}

int64_t PerSecond(TimeUnit unit) {
  return unit == TimeUnit::kMillis ? 1000 : unit == TimeUnit::kMicros ? 1000000 : 1000000000;
}

std::string Decimal(int64_t unscaled, int scale) {
  if (scale <= 0) return std::to_string(unscaled);
  const bool negative = unscaled < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  std::string digits = std::to_string(magnitude);
  if (digits.size() <= static_cast<size_t>(scale)) digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
  digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  return (negative ? "-" : "") + digits;
}

std::string Hex(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
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

// Renders a top-level leaf by its logical type (dates, times, timestamps, decimals, INT96, UUID, FLOAT16); other
// values as Value::ToString does.
std::string Render(const Value& v, const SchemaNode& node) {
  if (v.is_null() || node.is_group) return v.ToString();
  const LogicalType& t = node.logical_type;
  using K = LogicalType::Kind;
  if (v.kind() == Value::Kind::kInt) {
    switch (t.kind) {
      case K::kDate: return Date(v.as_int());
      case K::kTime: return TimeOfDay(v.as_int(), PerSecond(t.unit));
      case K::kTimestamp: return Timestamp(v.as_int(), PerSecond(t.unit), t.adjusted_to_utc);
      case K::kDecimal: return Decimal(v.as_int(), t.scale);
      case K::kInteger:
        if (!t.is_signed && t.bit_width == 64) return std::to_string(static_cast<uint64_t>(v.as_int()));
        break;
      default: break;
    }
  }
  if (v.kind() == Value::Kind::kBytes) {
    const std::string& b = v.as_string();
    if (node.physical_type == PhysicalType::kInt96 && b.size() == 12) {
      int64_t nanos;
      int32_t julian;
      std::memcpy(&nanos, b.data(), 8);
      std::memcpy(&julian, b.data() + 8, 4);
      return Date(static_cast<int64_t>(julian) - 2440588) + " " + TimeOfDay(nanos, 1000000000);
    }
    if (t.kind == K::kUuid && b.size() == 16) {
      const std::string h = Hex(b);
      return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
             h.substr(20);
    }
    if (t.kind == K::kFloat16 && b.size() == 2) {
      uint16_t h;
      std::memcpy(&h, b.data(), 2);
      return Value::Float(HalfToFloat(h)).ToString();
    }
    if (t.kind == K::kDecimal && !b.empty() && b.size() <= 8) {
      // Big-endian two's complement.
      int64_t unscaled = static_cast<int8_t>(b[0]);
      for (size_t i = 1; i < b.size(); ++i) unscaled = unscaled * 256 + static_cast<unsigned char>(b[i]);
      return Decimal(unscaled, t.scale);
    }
  }
  return v.kind() == Value::Kind::kString ? v.as_string() : v.ToString();
}

// One table cell: the rendered value on one line, truncated.
std::string Cell(const Value& v, const SchemaNode& node) {
  std::string s = Render(v, node);
  for (char& c : s) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  if (s.size() > kMaxCellWidth) s = s.substr(0, kMaxCellWidth - 3) + "...";
  return s;
}

std::vector<std::string> SplitColumns(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string part = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int RunTableHead(int argc, char** argv) {
  CLI::App app("print the first rows of a table", argv[0]);
  std::string path, columns;
  int64_t n = 10;
  app.add_option("PATH", path, "a Parquet file")->required();
  app.add_option("-n,--rows", n, "number of rows (default 10)")->check(CLI::NonNegativeNumber);
  app.add_option("--columns", columns, "comma-separated top-level fields or dotted paths (default: all)");
  CLI11_PARSE(app, argc, argv);

  auto file = ParquetFile::Open(LocalFileSystem(), path);
  TableReadOptions options;
  options.columns = SplitColumns(columns);
  TableReader reader(*file, options);
  std::vector<Value> rows = reader.ReadRows(n);

  std::vector<std::string> header;
  for (int f : reader.top_level_fields()) header.push_back(file->schema().root().children[static_cast<size_t>(f)].name);
  std::vector<std::vector<std::string>> cells;
  for (const Value& row : rows) {
    std::vector<std::string> line;
    for (const std::string& name : header) {
      const Value* v = row.Field(name);
      const SchemaNode* node = file->schema().FindNode(name);
      line.push_back(v && node ? Cell(*v, *node) : "");
    }
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = std::min(kMaxCellWidth, header[c].size());
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string out;
    for (size_t c = 0; c < line.size(); ++c) {
      out += (c ? " | " : "") + line[c] + std::string(width[c] - std::min(width[c], line[c].size()), ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::printf("%s\n", out.c_str());
  };
  print_line(header);
  std::string rule;
  for (size_t c = 0; c < header.size(); ++c) rule += (c ? "-+-" : "") + std::string(width[c], '-');
  std::printf("%s\n", rule.c_str());
  for (const auto& line : cells) print_line(line);
  std::printf("(%zu of %lld rows)\n", rows.size(), static_cast<long long>(file->num_rows()));
  return 0;
}

}  // namespace
}  // namespace lakerun::cli

LAKERUN_REGISTER_COMMAND("table head", "print the first rows of a table", lakerun::cli::RunTableHead);
