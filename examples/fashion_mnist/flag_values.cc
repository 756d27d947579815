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

void ParseFlags(int argc, const char* const* argv, const std::function<void()>& on_help,
                const std::map<std::string, std::function<void()>>& switches,
                const std::map<std::string, FlagSetter>& with_value) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      on_help();
    } else if (auto sw = switches.find(arg); sw != switches.end() && !has_value) {
      sw->second();
    } else if (auto it = with_value.find(arg); it != with_value.end()) {
      if (!has_value) {
        LAKERUN_CHECK_AS(ConfigError, i + 1 < argc, "flag ", arg, " needs a value");
        value = argv[++i];
      }
      it->second(arg, value);
    } else {
      LAKERUN_THROW(ConfigError, "unknown flag '", argv[i], "' (see --help)");
    }
  }
}

}  // namespace lakerun::examples
