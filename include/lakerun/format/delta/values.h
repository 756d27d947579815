// Typed values of Delta columns as lakerun::parquet::Value, and the string forms the log uses for them.
//
// Value kinds per Delta type: long/integer/short/byte and decimal (unscaled, precision <= 18) -> kInt;
// float -> kFloat; double -> kDouble; boolean -> kBool; string -> kString; binary -> kBytes; date -> kInt (days
// since 1970-01-01); timestamp and timestamp_ntz -> kInt (microseconds since the epoch).
#pragma once

#include <optional>
#include <string>

#include "lakerun/format/delta/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::delta {

/// Parses a partition value from the log (PROTOCOL.md, "Partition Value Serialization"): null or "" is null;
/// numbers, booleans, dates (YYYY-MM-DD), timestamps ("YYYY-MM-DD hh:mm:ss[.ffffff]" or ISO-8601 with Z) by type.
/// Throws CorruptDataError naming `context` for a value that does not parse as `type`.
parquet::Value ParsePartitionValue(const std::optional<std::string>& text, const DataType& type,
                                   const std::string& context);
/// The log's string form of a value (nullopt for null): what writers put in partitionValues.
std::optional<std::string> FormatPartitionValue(const parquet::Value& value, const DataType& type);
/// The JSON-friendly form used in stats minValues/maxValues: numbers stay numbers (returned as text of a JSON
/// number), dates "YYYY-MM-DD", timestamps ISO-8601 with milliseconds and Z. nullopt when the type has no stats.
std::optional<std::string> FormatStatsValue(const parquet::Value& value, const DataType& type);
/// Parses a stats JSON value (given as JSON text) back into a Value of `type`; nullopt when it does not fit.
std::optional<parquet::Value> ParseStatsValue(const std::string& json_text, const DataType& type);

/// Days since 1970-01-01 for a civil date, and back.
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);
std::string CivilFromDays(int64_t days);

}  // namespace lakerun::delta
