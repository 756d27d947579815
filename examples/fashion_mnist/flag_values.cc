#include "flag_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "lakerun/base/error.h"

namespace lakerun::examples {

int64_t ParseInt(const std::string& flag, const std::string& value, int64_t min) {
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(value.c_str(), &end, 10);
  LAKERUN_CHECK_AS(ConfigError, !value.empty() && errno == 0 && *end == '\0', "flag ", flag,
                   ": expected an integer, got '", value, "'");
  LAKERUN_CHECK_AS(ConfigError, parsed >= min, "flag ", flag, ": expected at least ", min, ", got ", parsed);
  return parsed;
}

double ParseDouble(const std::string& flag, const std::string& value, double min, bool min_exclusive) {
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  LAKERUN_CHECK_AS(ConfigError, !value.empty() && errno == 0 && *end == '\0' && std::isfinite(parsed), "flag ", flag,
                   ": expected a number, got '", value, "'");
  LAKERUN_CHECK_AS(ConfigError, min_exclusive ? parsed > min : parsed >= min, "flag ", flag, ": expected ",
                   min_exclusive ? "more than " : "at least ", min, ", got ", value);
  return parsed;
}

}  // namespace lakerun::examples
