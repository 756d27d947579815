// Parsing of the examples' numeric flag values: a ConfigError names the flag, the bad value and the bound.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace lakerun::examples {

/// A base-10 integer >= min.
int64_t ParseInt(const std::string& flag, const std::string& value, int64_t min);
/// A finite number >= min (> min when min_exclusive).
double ParseDouble(const std::string& flag, const std::string& value, double min, bool min_exclusive);

using FlagSetter = std::function<void(const std::string& flag, const std::string& value)>;

/// Walks argv[1..argc): `--help`/`-h` call on_help; a flag in `switches` (bare, no value) calls its function; a flag in
/// `with_value` takes `--flag value` or `--flag=value`. A flag may be in both (bare form = the switch). An unknown
/// flag or a missing value is a ConfigError naming it.
void ParseFlags(int argc, const char* const* argv, const std::function<void()>& on_help,
                const std::map<std::string, std::function<void()>>& switches,
                const std::map<std::string, FlagSetter>& with_value);

}  // namespace lakerun::examples
