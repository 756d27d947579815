// Per-file statistics of an add action, parsed lazily and only for the columns a caller needs.
//
// A snapshot keeps each add's stats as the JSON text of the log (AddFile::stats); a 300,000-file table would spend
// seconds and hundreds of MB building a DOM for every file. A scan planner asks for the few columns its filters
// touch instead:
//
//   std::map<std::string, const DataType*> wanted = {{"id", field.type.get()}};   // stats key -> Delta type
//   if (auto stats = ParseFileStats(*add.stats, wanted)) {
//     auto it = stats->columns.find("id");
//     if (it != stats->columns.end() && it->second.min) ... it->second.min->as_int() ...
//   }
//
// The stats JSON looks like {"numRecords":10,"minValues":{"id":1,"s":{"x":"a"}},"maxValues":{...},
// "nullCount":{"id":0,"s":{"x":2}}}. Stats keys are the column names the log uses: physical names under column
// mapping, and a dotted path ("s.x") for a leaf inside a struct column (the stats nest it as an object).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "lakerun/format/delta/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::delta {

struct ColumnStats {
  /// Typed as ParseStatsValue (values.h) types them: timestamps are microseconds, truncated to the milliseconds the
  /// stats hold (a file's true maximum may be up to 999 us above `max`); dates are days.
  std::optional<parquet::Value> min, max;
  std::optional<int64_t> null_count;
};

struct FileStats {
  std::optional<int64_t> num_records;
  /// Keyed by the stats key; a requested column appears only when the stats hold min, max or nullCount for it.
  std::map<std::string, ColumnStats> columns;
};

/// Parses only the entries of `columns` (stats key -> Delta type, typed as values.h's ParseStatsValue does) out of
/// an add's stats JSON; nullopt when the text is not a JSON object (including malformed or truncated JSON). Never
/// throws on odd stats (missing or ill-typed entries are just absent), since stats are optional hints. Values of
/// columns not asked for are skipped without being decoded.
std::optional<FileStats> ParseFileStats(std::string_view json, const std::map<std::string, const DataType*>& columns);

}  // namespace lakerun::delta
