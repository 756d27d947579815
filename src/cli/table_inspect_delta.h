// `lakerun table inspect` for Delta tables (a directory holding `_delta_log/`).
#pragma once

#include <ostream>
#include <string>

namespace lakerun::cli {

/// Prints the latest snapshot of the Delta table at `path`: version and commit time, protocol and table features,
/// id, schema (with physical names and field ids under column mapping), partition columns, configuration, file
/// count, size, rows (from statistics), deletion vectors, checkpoint used and `_last_checkpoint`, transaction ids
/// and the last commits of the history. `json` selects one JSON object instead of text. Errors are lakerun::Error.
void InspectDeltaTable(const std::string& path, bool json, std::ostream& out);

}  // namespace lakerun::cli
