// Parquet column chunks with nulls or lists of varying length, laid out the way ColumnChunk describes them: a slot
// per row (fixed-width values), offsets per row (binary values, list elements), validity per row and per element.
// Torch-free; used by the Parquet table source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/data/row_source.h"
#include "lakerun/format/parquet/column_data.h"

namespace lakerun::data {

/// Memory behind a ColumnChunk built from levels (its `owner`).
struct SpacedColumn {
  std::vector<uint8_t> data;          // spaced fixed-width values (empty for binary values: see `values`)
  std::vector<int64_t> offsets;       // rows + 1 entries, or empty
  std::vector<uint8_t> validity;      // rows entries, or empty (no nulls)
  std::vector<uint8_t> element_validity;
  std::vector<int64_t> value_offsets;  // lists of binary values: elements + 1 byte offsets into `values`, or empty
  const uint8_t* values = nullptr;    // the values: data.data(), or the decoded binary values in `keep`
  size_t values_size = 0;
  std::shared_ptr<const void> keep;   // decoded values still pointed into (binary values)

  /// A chunk viewing this column (the shared_ptr keeps it alive).
  static ColumnChunk View(const std::shared_ptr<const SpacedColumn>& column);
};

/// A flat (non-list) column chunk with `rows` rows, some null: fixed-width values get a slot per row (nulls
/// zero-filled), binary values offsets per row (nulls empty). `where` names the unit and column for errors.
std::shared_ptr<const SpacedColumn> SpaceFlat(std::shared_ptr<const parquet::ColumnData> data, uint64_t rows,
                                              const std::string& where);

/// A list column chunk with `rows` rows, one or more levels of lists (`list_def_levels`: per level, outermost
/// first, the definition level at which that level's list is present). Row i holds values [offsets[i],
/// offsets[i+1]) (row validity: a row is null when its list is; element validity per value; values spaced to one
/// slot per value, null values zero-filled). `info.shape` is the column's expected shape, one dimension per level: every
/// inner list (levels 2 and below) must hold exactly its dimension's count of elements, else an InvalidArgument
/// names the row (a null inner list too), and offsets are dropped (nullptr in the view) when every row is a
/// non-null list of info.elements_per_row() values. BYTE_ARRAY values (one level only) stay where `data` decoded them
/// (it must be in the copied layout: ColumnData::Materialize), with value_offsets per element (null elements empty)
/// and offsets always kept. Throws CorruptDataError naming `where` when the levels do not describe `rows` rows.
std::shared_ptr<const SpacedColumn> SpaceList(std::shared_ptr<const parquet::ColumnData> data, uint64_t rows,
                                              const std::vector<int16_t>& list_def_levels, const ColumnInfo& info,
                                              const std::string& where);

/// The shape of a nested list column guessed from its first row whose lists have an element at every level: the
/// row's element count, then the length of its first list at each deeper level. std::nullopt when no row has.
std::optional<std::vector<int64_t>> NestedListShape(const parquet::ColumnData& data,
                                                   const std::vector<int16_t>& list_def_levels);

}  // namespace lakerun::data
