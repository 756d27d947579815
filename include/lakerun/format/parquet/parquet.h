// lakerun::parquet: reading and writing Parquet files without Arrow (and without torch).
// See docs/formats/parquet.md for what is supported.
#pragma once

#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/filter_columns.h"
#include "lakerun/format/parquet/leading_rows.h"
#include "lakerun/format/parquet/metadata.h"
#include "lakerun/format/parquet/page_index.h"
#include "lakerun/format/parquet/page_pruning.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/table_reader.h"
#include "lakerun/format/parquet/types.h"
#include "lakerun/format/parquet/value.h"
#include "lakerun/format/parquet/writer.h"
