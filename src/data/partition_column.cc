#include "partition_column.h"

#include <cstring>
#include <memory>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "leaf_form.h"
#include "spaced_column.h"

namespace lakerun::data {

ColumnInfo PartitionColumnInfo(const std::string& name, const delta::DataType& type, bool nullable,
                               const ColumnForm& form, const std::string& where) {
  ColumnInfo info;
  info.name = name;
  info.nullable = nullable;
  info.type = TableElementType(type, form, name, where);
  if (type.kind == delta::TypeKind::kDecimal && form.decimal == DecimalForm::kUnscaledInt64) info.scale = type.scale;
  if (type.kind == delta::TypeKind::kDecimal && info.type == ElementType::kFloat64 && type.precision > 15) {
    Log(LogLevel::Warning, StrCat(where, ": decimal column '", name, "' (", delta::TypeName(type),
                                  ") becomes float64, which holds 15 significant digits exactly; wider values "
                                  "are rounded to the nearest float64 (DecimalForm::kUnscaledInt64 reads them "
                                  "exactly)"));
  }
  return info;
}

ColumnChunk ConstantColumn(const ColumnInfo& info, const parquet::Value& value, uint64_t rows) {
  auto column = std::make_shared<SpacedColumn>();
  if (value.is_null()) column->validity.assign(rows, 0);
  if (info.type == ElementType::kBinary) {
    const std::string& bytes = value.is_null() ? std::string() : value.as_string();
    column->offsets.resize(rows + 1);
    column->data.resize(rows * bytes.size());
    for (uint64_t r = 0; r < rows; ++r) {
      column->offsets[r] = static_cast<int64_t>(r * bytes.size());
      if (!bytes.empty()) std::memcpy(column->data.data() + r * bytes.size(), bytes.data(), bytes.size());
    }
    column->offsets[rows] = static_cast<int64_t>(rows * bytes.size());
    if (info.is_list) column->value_offsets.assign(1, 0);  // a list of binary values (null: no elements)
  } else {
    const size_t width = ElementSize(info.type);
    uint8_t one[8] = {};  // the value in the column's element type; zeros for null rows
    auto put = [&one](auto v) { std::memcpy(one, &v, sizeof v); };
    if (!value.is_null()) {
      switch (info.type) {
        case ElementType::kInt8: put(static_cast<int8_t>(value.as_int())); break;
        case ElementType::kInt16: put(static_cast<int16_t>(value.as_int())); break;
        case ElementType::kInt32: put(static_cast<int32_t>(value.as_int())); break;
        case ElementType::kInt64: put(value.as_int()); break;
        case ElementType::kFloat32: put(static_cast<float>(value.as_double())); break;
        case ElementType::kFloat64: put(value.as_double()); break;
        case ElementType::kBool: put(static_cast<uint8_t>(value.as_bool() ? 1 : 0)); break;
        default: break;  // PartitionColumnInfo makes no other fixed-width type
      }
    }
    // Every element of a row (fixed-size values and lists of a column no file holds have several) holds it.
    const uint64_t elements = rows * static_cast<uint64_t>(info.elements_per_row());
    column->data.resize(elements * width);
    for (uint64_t e = 0; e < elements; ++e) std::memcpy(column->data.data() + e * width, one, width);
  }
  column->values = column->data.data();
  column->values_size = column->data.size();
  return SpacedColumn::View(column);
}

}  // namespace lakerun::data
