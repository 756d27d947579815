#include "track/metric_line.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lakerun/base/error.h"

namespace lakerun::track {

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[40];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", value);
  return std::string(buf, static_cast<size_t>(n));
}

void AppendMetricLine(const Metric& metric, std::string* out) {
  out->append(std::to_string(metric.timestamp_ms));
  out->push_back(' ');
  out->append(FormatMetricValue(metric.value));
  out->push_back(' ');
  out->append(std::to_string(metric.step));
  out->push_back('\n');
}

namespace {

int64_t ParseInt(std::string_view field, const std::string& where, const char* what) {
  const std::string s(field);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  LAKERUN_CHECK_AS(CorruptDataError, !s.empty() && end == s.c_str() + s.size() && errno == 0, where, ": bad ", what,
                   " '", s, "', expected an integer");
  return v;
}

double ParseDouble(std::string_view field, const std::string& where) {
  const std::string s(field);
  // Python's float() spellings: nan, inf, infinity in any case, with a sign.
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const std::string_view body = (!lower.empty() && (lower[0] == '-' || lower[0] == '+'))
                                    ? std::string_view(lower).substr(1)
                                    : std::string_view(lower);
  if (body == "nan") return std::nan("");
  if (body == "inf" || body == "infinity") return lower[0] == '-' ? -INFINITY : INFINITY;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  LAKERUN_CHECK_AS(CorruptDataError, !s.empty() && end == s.c_str() + s.size(), where, ": bad value '", s,
                   "', expected a number");
  return v;
}

}  // namespace

Metric ParseMetricLine(std::string_view line, const std::string& key, const std::string& where) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (pos <= line.size()) {
    size_t space = line.find(' ', pos);
    if (space == std::string_view::npos) space = line.size();
    if (space > pos) fields.push_back(line.substr(pos, space - pos));
    pos = space + 1;
  }
  LAKERUN_CHECK_AS(CorruptDataError, fields.size() == 2 || fields.size() == 3 || fields.size() >= 5, where,
                   ": metric line '", line, "' has ", fields.size(),
                   " fields, expected 'timestamp value step' (2, 3 or 5 fields)");
  Metric m;
  m.key = key;
  m.timestamp_ms = ParseInt(fields[0], where, "timestamp");
  m.value = ParseDouble(fields[1], where);
  m.step = fields.size() >= 3 ? ParseInt(fields[2], where, "step") : 0;
  return m;
}

}  // namespace lakerun::track
