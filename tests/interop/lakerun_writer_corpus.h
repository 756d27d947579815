// Parquet files written by lakerun for the oracles to read: one table of every supported type (nulls everywhere,
// NaN/±Inf/-0, nested LIST, LIST<LIST>, STRUCT with a list, MAP, LIST<STRUCT>) written with each codec, both page
// versions, per-column encodings, a dictionary that overflows part-way, and no dictionary; all with the page index
// but one variant per page version.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "canonical_json.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::interop {

struct WrittenFile {
  std::string path;
  std::string description;         ///< "page v2, ZSTD, DELTA/BYTE_STREAM_SPLIT encodings"
  Json expected;                   ///< canonical rendering of the rows lakerun was asked to write
  std::set<std::string> unreadable_by;  ///< oracles that cannot read this codec at all (DuckDB: Hadoop LZ4)
};

/// The schema of the corpus table.
parquet::Schema CorpusSchema();
/// `n` deterministic rows of CorpusSchema() (row i depends only on i).
std::vector<parquet::Value> CorpusRows(int n);
/// Writes every variant into `dir` and returns them.
std::vector<WrittenFile> WriteLakerunCorpus(const std::string& dir);

}  // namespace lakerun::interop
