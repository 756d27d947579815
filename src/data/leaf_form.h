// How a Parquet leaf's stored values become the loader's tensor elements: the element type a column gets (from its
// Parquet logical type, or from the Delta table's schema, which wins), and the conversion of decoded values into
// it. Conversions are exact or refused: a value the tensor form cannot hold (a sub-microsecond part, an unsigned
// value beyond int64, a narrowing that overflows) is an error naming the column, the unit and the row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lakerun/data/row_source.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::data {

struct LeafForm {
  /// How stored values are read before they become elements; kAsStored: the stored bytes are the elements.
  enum class Source {
    kAsStored, kBool, kInt32, kUInt32, kInt64, kUInt64, kFloat, kFloat16, kInt96, kDecimalInt32, kDecimalInt64,
    kDecimalBytes,
  };
  ElementType type = ElementType::kFloat32;  // the tensor's element type
  std::vector<int64_t> shape;                // FIXED_LEN_BYTE_ARRAY bytes: {width}; else scalar
  Source source = Source::kAsStored;
  size_t source_width = 0;  // bytes per stored value; 0 for BYTE_ARRAY
  int64_t multiply = 1;     // integer sources: element = stored * multiply / divide (exact, or refused)
  int64_t divide = 1;
  int32_t scale = 0;         // decimals: the file's scale
  int32_t target_scale = 0;  // decimals read unscaled: the column's (table's) scale

  bool converts() const { return source != Source::kAsStored; }
  bool is_decimal() const {
    return source == Source::kDecimalInt32 || source == Source::kDecimalInt64 || source == Source::kDecimalBytes;
  }
  /// Whether a stored value compares like its element (footer statistics can prune a filter on the column).
  bool KeepsValues() const;
};

/// The element type of a Delta type under `form` (partition columns and data columns alike). Throws
/// NotImplemented naming `column` and `where` for types with no tensor form (struct, array, map, void, variant).
ElementType TableElementType(const delta::DataType& type, const ColumnForm& form, const std::string& column,
                             const std::string& where);

/// The form of leaf `leaf` of a file. `table_type`: the column's type in the Delta table's schema (nullptr for
/// loose Parquet files); the file's values are converted to it (type widening) or refused, naming `where`.
LeafForm ChooseLeafForm(const parquet::ColumnDescriptor& leaf, const delta::DataType* table_type,
                        const ColumnForm& form, const std::string& where);

/// `in` (a chunk of `rows` rows in the stored layout: fixed-width slots of source_width bytes, or BYTE_ARRAY
/// offsets; list offsets, validity and element validity as ColumnChunk describes) with its values converted to
/// form.type. `per_row`: elements per row of a list column without offsets (1 for scalars). `first_row`: the row
/// group row of the chunk's row 0, for messages.
ColumnChunk ConvertChunk(const LeafForm& form, const ColumnChunk& in, uint64_t rows, int64_t per_row,
                         uint64_t first_row, const std::string& where);

}  // namespace lakerun::data
