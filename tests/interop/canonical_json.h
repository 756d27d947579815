// lakerun's side of the canonical JSON form defined in tests/interop/lib/canonical.mjs (and docs/testing-parquet.md):
// renders values read or written by lakerun exactly as the Node oracles render them, and compares two renderings
// value by value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::interop {

using Json = nlohmann::json;

/// Canonical rendering of one value of schema node `node` (a top-level field or any node below it).
Json RenderValue(const parquet::SchemaNode& node, const parquet::Value& value);

/// {"num_rows": N, "columns": {field: [row values...]}} for struct Values holding the schema's top-level fields.
Json RenderRows(const parquet::Schema& schema, const std::vector<parquet::Value>& rows);

/// Reads every row of `file` with lakerun (TableReader::ReadRows) and renders it.
Json RenderFile(const parquet::ParquetFile& file);

/// Value-by-value differences between two canonical dumps, at most `limit`, each naming the column and row:
/// "column 'x' row 17: lakerun 1.5 vs duckdb 2.5". Columns listed in either side's "lossy" object are skipped.
/// Numbers compare numerically (both sides only hold doubles and integers below 2^53 there).
std::vector<std::string> DiffDumps(const Json& lakerun, const Json& oracle, const std::string& oracle_name,
                                   size_t limit = 20);

/// Shortest round-trip decimal form of a double, as JSON.stringify writes it for use in messages.
std::string Show(const Json& value);

}  // namespace lakerun::interop
