// Private: record assembly of the leading rows of column data that may hold more rows than are assembled.
#pragma once

#include <cstdint>
#include <vector>

#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

/// AssembleRecords (table_reader.h) of the first `num_rows` records only: the columns must start at the row
/// group's first row and may hold further rows (whole pages of a row range, whole chunks), which are left unread
/// instead of being reported as level entries left over.
std::vector<Value> AssembleLeadingRecords(const Schema& schema, const std::vector<int>& fields,
                                          const std::vector<int>& column_indexes,
                                          const std::vector<ColumnData>& columns, int64_t num_rows);

}  // namespace lakerun::parquet
