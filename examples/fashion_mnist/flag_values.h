// Parsing of the examples' numeric flag values: a ConfigError names the flag, the bad value and the bound.
#pragma once

#include <cstdint>
#include <string>

namespace lakerun::examples {

/// A base-10 integer >= min.
int64_t ParseInt(const std::string& flag, const std::string& value, int64_t min);
/// A finite number >= min (> min when min_exclusive).
double ParseDouble(const std::string& flag, const std::string& value, double min, bool min_exclusive);

}  // namespace lakerun::examples
