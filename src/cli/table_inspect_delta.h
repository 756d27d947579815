// `lakerun table inspect` for Delta tables (a directory holding `_delta_log/`).
#pragma once

#include <ostream>
#include <string>

#include "cli/table_source.h"

namespace lakerun::cli {

/// Prints a snapshot of the Delta table at `path` (the latest, or the one `travel` asks for): version and commit
/// time, protocol and table features, id, schema (with physical names and field ids under column mapping),
/// partition columns, configuration, file count, size, rows (from statistics), deletion vectors, checkpoint used
/// and `_last_checkpoint`, transaction ids and the last commits of the history. `json` selects one JSON object instead of text.
/// Errors are lakerun::Error.
/// The snapshot comes from listing the log, as every lakerun reader loads it: `_last_checkpoint` is only a hint
/// (PROTOCOL.md), so an empty or damaged one is reported as such, never an error. Every data file the snapshot
/// references is checked to exist at the size the log recorded: the missing and resized ones are listed on `err`
/// as errors after the report (in the JSON's "missingFiles" / "filesOfWrongSize" instead), and the result is then 1
/// (else 0), the exit code.
int InspectDeltaTable(const std::string& path, const TimeTravel& travel, bool json, std::ostream& out,
                      std::ostream& err);

}  // namespace lakerun::cli
