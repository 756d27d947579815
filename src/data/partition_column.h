// Delta partition columns as loader columns. Their values are not in the data files but in the log, one per file, so
// a unit's column is its file's value repeated on every row.
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/data/row_source.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::data {

/// The column a column of Delta type `type` becomes when its values do not come from a data file (partition
/// columns, and columns no data file holds): TableElementType (leaf_form.h) under `form`, with a warning when a
/// decimal's precision passes the 15 digits float64 holds exactly. `nullable`: some file's value is null. Throws
/// NotImplemented naming `where` and the column for types without a tensor form (nested).
ColumnInfo PartitionColumnInfo(const std::string& name, const delta::DataType& type, bool nullable,
                               const ColumnForm& form, const std::string& where);

/// A chunk of `rows` rows of column `info`, each holding `value` (a Value of the kind delta::ParsePartitionValue
/// gives for the column's type); every row null when `value` is null.
ColumnChunk ConstantColumn(const ColumnInfo& info, const parquet::Value& value, uint64_t rows);

}  // namespace lakerun::data
