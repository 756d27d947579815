// Column-chunk statistics for the writer: min/max in the column's sort order, null count.
#pragma once

#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/metadata.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::parquet {

/// min/max are left empty where no total order is defined or safe: INT96, DECIMAL and FLOAT16 byte arrays, all-NaN
/// floats, and byte arrays longer than 1 KiB. Floating-point zero is widened to -0.0 (min) / +0.0 (max) and NaN is
/// ignored, as the spec asks.
Statistics ComputeStatistics(const ColumnDescriptor& column, const ColumnData& data);
/// The same rules over values [value_begin, value_end) of `data` (one page), of whose slots `null_count` are null.
Statistics ComputeStatistics(const ColumnDescriptor& column, const ColumnData& data, int64_t value_begin,
                             int64_t value_end, int64_t null_count);

}  // namespace lakerun::parquet
