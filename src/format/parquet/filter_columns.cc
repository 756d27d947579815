#include "lakerun/format/parquet/filter_columns.h"

#include <vector>

#include "lakerun/base/error.h"

namespace lakerun::parquet {

FilterColumnResolver FileLeafColumns(const Schema& schema) {
  return [&schema](const std::string& column) -> FilterColumnSource {
    if (auto c = schema.FindColumn(column)) return {*c, std::nullopt};
    const std::vector<int> under = schema.ColumnsUnder(column);
    LAKERUN_CHECK(under.size() == 1, "filter column '", column, "' ",
                  under.empty() ? "does not exist" : "is not a single leaf column");
    return {under[0], std::nullopt};
  };
}

std::optional<format::ColumnStatistics> LeafStatistics(const ColumnDescriptor& d, const Statistics& s) {
  if (d.max_rep_level > 0) return std::nullopt;  // list elements: counts are not rows
  format::ColumnStatistics out;
  out.null_count = s.null_count;
  if (!(d.logical_type.kind == LogicalType::Kind::kInteger && !d.logical_type.is_signed &&
        d.logical_type.bit_width == 64)) {
    out.min = s.MinValue(d);
    out.max = s.MaxValue(d);
  }
  return out;
}

}  // namespace lakerun::parquet
