// `lakerun table inspect PATH --filter EXPR`: what the filter skips in a Parquet file, a folder of Parquet files
// (Hive key=value folders prune files) or a Delta table (partition values and add stats prune files), then row groups
// (footer statistics) and pages (page index) of the files kept.
#pragma once

#include <ostream>
#include <string>

#include "cli/table_source.h"

namespace lakerun::cli {

/// Prints the SkipReport (cli/skip_report.h) of filter text `filter` on the table at `path`, as text or one JSON
/// object. Throws InvalidArgument naming the filter text when it does not parse, and naming the column when the
/// filter names one the table lacks.
void InspectFilter(const std::string& path, TableKind kind, const TimeTravel& travel, const std::string& filter,
                   bool json, std::ostream& out);

}  // namespace lakerun::cli
