// The loader's columns of a table are its primitive leaves, named by their logical path: a struct's fields as
// "a.b", a list's elements under the list's own name ("tags" for array<string>, "points.x" for
// array<struct<x, y>>), a map's keys and values as "m.key" and "m.value". A leaf under one list or map is a list
// column; a leaf under two or more is a nested list column (array<array<T>>).
//
// A Delta table's leaves come from its schema (a data file that lacks one reads it as null); loose Parquet files'
// from the first file's schema. Each file then resolves every leaf to its own Parquet column: by name, or under
// Delta column mapping by physical name ('name' mode) or field id ('id' mode), through LIST and MAP groups in any
// of the shapes the Parquet spec allows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::data {

/// One step from a node to a child on a leaf's path.
struct LeafStep {
  enum class Kind { kField, kElement, kKey, kValue };
  Kind kind = Kind::kField;
  std::string name;                  // kField: the logical name
  std::string physical_name;         // kField: the name in data files (column mapping), else == name
  std::optional<int32_t> field_id;   // kField: the Parquet field id (column mapping 'id')
};

/// A primitive leaf of a table.
struct TableLeaf {
  std::string name;                                 // logical path, as above
  std::string top;                                  // its top-level column
  std::vector<LeafStep> steps;                      // from the table's root
  const delta::DataType* table_type = nullptr;      // Delta: the leaf's type in the table's schema
};

/// Every primitive leaf of a Delta schema, in schema order. `mode` decides which names and ids data files use.
std::vector<TableLeaf> DeltaLeaves(const delta::DataType& schema, delta::ColumnMappingMode mode);
/// Every leaf of a Parquet file's schema, in column order.
std::vector<TableLeaf> ParquetLeaves(const parquet::Schema& schema);

/// Where a leaf lives in one data file.
struct FileLeaf {
  int column = -1;              // leaf index in the file's schema
  int repetition = 0;           // repeated ancestors (and the leaf itself): 0 scalar, 1 list, 2+ nested lists
  /// Lists: per level of repetition, outermost first, the definition level at which that level's list is present
  /// (not null); above it the list has an element.
  std::vector<int16_t> list_def_levels;
};

/// The file's column for `leaf`, or std::nullopt when the file lacks it (or holds something else than a primitive
/// there: `*mismatch` then says what, for the error message).
std::optional<FileLeaf> ResolveLeaf(const parquet::Schema& schema, const TableLeaf& leaf, delta::ColumnMappingMode mode,
                                    std::string* mismatch);

}  // namespace lakerun::data
