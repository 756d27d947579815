// One line of a file-store metric file: "<timestamp_ms> <value> <step>\n".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lakerun/track/types.h"

namespace lakerun::track {

/// `value` as the file store holds it: %.17g, or "nan", "inf", "-inf" (what Python's float() reads back).
std::string FormatMetricValue(double value);
/// Appends "<timestamp> <value> <step>\n" to `out`.
void AppendMetricLine(const Metric& metric, std::string* out);
/// Parses one line (without '\n'). Accepts 2 fields (step 0), 3, or 5 (dataset name and digest, ignored).
/// CorruptDataError naming `where` on anything else.
Metric ParseMetricLine(std::string_view line, const std::string& key, const std::string& where);

}  // namespace lakerun::track
