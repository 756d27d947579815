// Printing `lakerun table head` rows: a text table, JSON lines or CSV.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/display_type.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::cli {

enum class HeadFormat { kText, kJsonLines, kCsv };

/// Parses --format: "text", "jsonl" or "csv". Throws InvalidArgument otherwise.
HeadFormat ParseHeadFormat(const std::string& name);

/// Rows to print: struct Values whose fields are looked up by the column names (a missing field prints as null).
struct HeadTable {
  std::vector<std::string> names;
  std::vector<DisplayType> types;  ///< parallel to names
  std::vector<parquet::Value> rows;
  /// Rows in the whole table, when known: the text table ends with "(<rows> of <total> rows)".
  std::optional<int64_t> total_rows;
};

/// kText: a header, a rule, one line per row with cells cut to 48 bytes and line breaks and tabs as spaces, then
/// the row count. kJsonLines: one JSON object per row, keys the column names in order, full values (JsonOf).
/// kCsv: an RFC 4180 header line and one line per row ("\n" line ends; fields holding a comma, quote, CR or LF
/// quoted, quotes doubled), full values (CsvText), null as an empty field.
void PrintHead(const HeadTable& table, HeadFormat format, FILE* out);

}  // namespace lakerun::cli
