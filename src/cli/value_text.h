// The text of table values for `lakerun table head`: ISO-8601 dates and timestamps (expanded years beyond 0000-9999),
// exact decimals of any width, UUIDs, half floats; nested values as JSON-like text or as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cli/display_type.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::cli {

/// Days since 1970-01-01 as YYYY-MM-DD (proleptic Gregorian). Years outside 0000-9999 use ISO 8601's expanded form
/// with a sign: +12345-01-01, -0001-12-31 (year 0 is 1 BC).
std::string DateText(int64_t days);
/// `units` (units_per_second of them per second: 1000, 1000000 or 1000000000) since 1970-01-01T00:00:00 as
/// YYYY-MM-DDThh:mm:ss.fff[fff[fff]], with a trailing Z when `utc`.
std::string TimestampText(int64_t units, int64_t units_per_second, bool utc);
/// Units since midnight as hh:mm:ss[.fff...].
std::string TimeText(int64_t units, int64_t units_per_second);
/// An INT96 timestamp (12 bytes: nanoseconds of the day, then the Julian day, both little-endian) as
/// YYYY-MM-DDThh:mm:ss.fffffffff; nanoseconds outside one day carry into the date.
std::string Int96Text(std::string_view bytes);
/// An unscaled decimal with `scale` digits after the point: 12345, 2 -> "123.45"; -1, 3 -> "-0.001".
std::string DecimalText(int64_t unscaled, int scale);
/// Same, from a big-endian two's complement integer of any width (FIXED_LEN_BYTE_ARRAY / BYTE_ARRAY decimals).
std::string DecimalText(std::string_view big_endian, int scale);
/// Standard base64 (RFC 4648, with padding).
std::string Base64(std::string_view bytes);

/// A value as one cell of the text table: strings as they are, typed scalars as above, bytes quoted with escapes,
/// nested values JSON-like (lists [..], structs {"name": ..}, maps {key => value}); null is "null".
std::string CellText(const parquet::Value& value, const DisplayType& type);
/// A value as CSV field content: like CellText, but bytes in base64, nested values as JSON, null as "".
std::string CsvText(const parquet::Value& value, const DisplayType& type);
/// A value as JSON: numbers and booleans as such (NaN and infinities as the strings "NaN", "Infinity",
/// "-Infinity"), decimals, dates, times, timestamps and UUIDs as strings, bytes as base64 strings, lists as arrays,
/// structs as objects, maps as objects keyed by the key's text.
nlohmann::ordered_json JsonOf(const parquet::Value& value, const DisplayType& type);

}  // namespace lakerun::cli
