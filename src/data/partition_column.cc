#include "partition_column.h"

#include <cstring>
#include <memory>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "spaced_column.h"

namespace lakerun::data {

ColumnInfo PartitionColumnInfo(const std::string& name, const delta::DataType& type, bool nullable,
                               const std::string& where) {
  ColumnInfo info;
  info.name = name;
  info.nullable = nullable;
  switch (type.kind) {
    case delta::TypeKind::kLong:
    case delta::TypeKind::kTimestamp:
    case delta::TypeKind::kTimestampNtz: info.type = ElementType::kInt64; break;
    case delta::TypeKind::kInteger:
    case delta::TypeKind::kDate: info.type = ElementType::kInt32; break;
    case delta::TypeKind::kShort: info.type = ElementType::kInt16; break;
    case delta::TypeKind::kByte: info.type = ElementType::kInt8; break;
    case delta::TypeKind::kFloat: info.type = ElementType::kFloat32; break;
    case delta::TypeKind::kDouble: info.type = ElementType::kFloat64; break;
    case delta::TypeKind::kDecimal:
      info.type = ElementType::kFloat64;  // the unscaled value over 10^scale (delta::FilterValue)
      if (type.precision > 15) {
        Log(LogLevel::Warning, StrCat(where, ": decimal column '", name, "' (", delta::TypeName(type),
                                      ") becomes float64, which holds 15 significant digits exactly; wider values "
                                      "are rounded to the nearest float64"));
      }
      break;
    case delta::TypeKind::kBoolean: info.type = ElementType::kBool; break;
    case delta::TypeKind::kString:
    case delta::TypeKind::kBinary: info.type = ElementType::kBinary; break;
    default:
      LAKERUN_THROW(NotImplemented, where, ": column '", name, "' is ", delta::TypeName(type),
                    ", which the loader cannot read into tensors from the table's schema (columns of integer, "
                    "floating-point, decimal, boolean, date, timestamp, string and binary types can be read)");
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
    column->data.resize(rows * width);
    for (uint64_t r = 0; r < rows; ++r) std::memcpy(column->data.data() + r * width, one, width);
  }
  column->values = column->data.data();
  column->values_size = column->data.size();
  return SpacedColumn::View(column);
}

}  // namespace lakerun::data
