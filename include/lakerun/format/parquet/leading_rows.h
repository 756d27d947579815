// Reading the first rows of a Parquet file without decoding whole column chunks (`lakerun table head`).
//
//   auto file = ParquetFile::Open(fs, "big.parquet");
//   ColumnSelection sel = SelectColumns(file->schema(), {"id", "a.b", "payload.size"}, file->path());
//   std::vector<Value> rows = ReadLeadingRows(*file, sel, 10);   // structs of id, a.b, payload (in that order)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

/// Top-level fields and the leaf columns under them that a list of column names selects.
struct ColumnSelection {
  std::vector<int> fields;   ///< indexes into schema.root().children, in the order they were first named
  std::vector<int> columns;  ///< leaf columns to read, in schema order
};

/// Resolves column names: a name equal to a top-level field's name selects that whole field, even when the name
/// holds a '.'; any other name is a dotted path and selects the leaves under that node (and, for the output, the
/// top-level field holding them, assembled from the selected leaves only). An empty list selects every field.
/// Throws InvalidArgument "<context>: no column '<name>'" for a name that matches nothing.
ColumnSelection SelectColumns(const Schema& schema, const std::vector<std::string>& names,
                              const std::string& context);

/// The first `limit` rows of `file` as struct Values of the selected fields, in selection order. Reads only what
/// those rows need: row groups in order until `limit` rows are assembled (row groups without rows are not read);
/// columns without repetition read just the data pages holding the rows wanted (ColumnReadOptions row range with
/// fetch_range_only: the bytes of later pages are never read); columns with repetition are read whole, because
/// page headers do not say where records end. Errors are those of ParquetFile::ReadColumnChunk.
std::vector<Value> ReadLeadingRows(const ParquetFile& file, const ColumnSelection& selection, int64_t limit);

}  // namespace lakerun::parquet
