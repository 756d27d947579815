// How `lakerun table head` prints a column: the parts of its type that change the text of a value (dates,
// timestamps and their unit, decimals and their scale, INT96, UUID, FLOAT16, unsigned 64-bit integers) and the
// shape of nested values, built from a Parquet schema node or a Delta type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lakerun/format/delta/schema.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::cli {

struct DisplayType {
  enum class Kind {
    kPlain,       ///< printed by the value's own kind (numbers, booleans, strings, bytes)
    kUnsigned64,  ///< kInt holding the bits of an unsigned 64-bit integer
    kDate,        ///< kInt days since 1970-01-01
    kTime,        ///< kInt units since midnight
    kTimestamp,   ///< kInt units since the epoch
    kDecimal,     ///< kInt unscaled, or kBytes big-endian two's complement unscaled (any width)
    kInt96,       ///< kBytes of 12: nanoseconds of the day (8, little-endian), then the Julian day (4)
    kUuid,        ///< kBytes of 16
    kFloat16,     ///< kBytes of 2, IEEE half precision, little-endian
    kStruct,
    kList,
    kMap,
  };
  Kind kind = Kind::kPlain;
  int64_t units_per_second = 1000000;  ///< kTime, kTimestamp
  bool utc = false;                    ///< kTime, kTimestamp: print a trailing Z
  int scale = 0;                       ///< kDecimal
  std::vector<std::pair<std::string, DisplayType>> fields;  ///< kStruct, by name
  std::vector<DisplayType> children;  ///< kList: {element}; kMap: {key, value}

  /// The type of struct field `name`; a plain type when there is none.
  const DisplayType& Field(const std::string& name) const;
};

/// The type of a top-level field (or any node) of a Parquet schema, matching the Values that record assembly
/// makes of it (a repeated node is a list of its contents; LIST and MAP groups as IsListNode / IsMapNode see them).
DisplayType DisplayTypeOf(const parquet::SchemaNode& node);
/// The type of a Delta column, matching the Values a TableScan returns (delta/values.h).
DisplayType DisplayTypeOf(const delta::DataType& type);

}  // namespace lakerun::cli
