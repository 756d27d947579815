// Conversion of one physical leaf value to a Value, shared by record assembly and statistics.
#pragma once

#include <cstring>
#include <string_view>

#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

/// `bytes` holds the value as ColumnData stores it (fixed-width little-endian, or the BYTE_ARRAY payload).
inline Value LeafToValue(PhysicalType type, const LogicalType& logical, ConvertedType converted,
                         std::string_view bytes) {
  switch (type) {
    case PhysicalType::kBoolean: return Value::Bool(bytes[0] != 0);
    case PhysicalType::kInt32: {
      int32_t v;
      std::memcpy(&v, bytes.data(), 4);
      if (logical.kind == LogicalType::Kind::kInteger && !logical.is_signed) {
        // UINT_8/16/32 are stored in INT32; present them zero-extended.
        return Value::Int(static_cast<int64_t>(static_cast<uint32_t>(v)));
      }
      return Value::Int(v);
    }
    case PhysicalType::kInt64: {
      int64_t v;
      std::memcpy(&v, bytes.data(), 8);
      return Value::Int(v);
    }
    case PhysicalType::kFloat: {
      float v;
      std::memcpy(&v, bytes.data(), 4);
      return Value::Float(v);
    }
    case PhysicalType::kDouble: {
      double v;
      std::memcpy(&v, bytes.data(), 8);
      return Value::Double(v);
    }
    case PhysicalType::kByteArray: {
      using K = LogicalType::Kind;
      bool text = logical.kind == K::kString || logical.kind == K::kEnum || logical.kind == K::kJson ||
                  converted == ConvertedType::kUtf8 || converted == ConvertedType::kEnum ||
                  converted == ConvertedType::kJson;
      return text ? Value::String(std::string(bytes)) : Value::Bytes(std::string(bytes));
    }
    default: return Value::Bytes(std::string(bytes));
  }
}

}  // namespace lakerun::parquet
