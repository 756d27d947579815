// Delta partition columns as loader columns. Their values are not in the data files but in the log, one per file, so
// a unit's column is its file's value repeated on every row.
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/data/row_source.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::data {

/// The column a partition column of Delta type `type` becomes: long -> int64, integer -> int32, short -> int16,
/// byte -> int8, float -> float32, double -> float64, decimal -> float64 (a warning when its precision passes the 15
/// digits float64 holds exactly), boolean -> bool, date -> int32 (days since 1970-01-01), timestamp and
/// timestamp_ntz -> int64 (microseconds since the epoch), string and binary -> binary. `nullable`: some file's value
/// is null. Throws NotImplemented naming `where` and the column for other types (nested).
ColumnInfo PartitionColumnInfo(const std::string& name, const delta::DataType& type, bool nullable,
                               const std::string& where);

/// A chunk of `rows` rows of column `info`, each holding `value` (a Value of the kind delta::ParsePartitionValue
/// gives for the column's type); every row null when `value` is null.
ColumnChunk ConstantColumn(const ColumnInfo& info, const parquet::Value& value, uint64_t rows);

}  // namespace lakerun::data
