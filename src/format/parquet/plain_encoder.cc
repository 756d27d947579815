#include <cstring>

#include "format/parquet/rle_encoder.h"
#include "format/parquet/value_encoders.h"

namespace lakerun::parquet {

void EncodePlain(const ColumnData& values, int64_t begin, int64_t end, std::string* out) {
  const uint8_t* data = values.value_buffer().data();
  switch (values.type()) {
    case PhysicalType::kBoolean: {
      const int64_t n = end - begin;
      const size_t at = out->size();
      out->append(static_cast<size_t>((n + 7) / 8), '\0');
      for (int64_t i = 0; i < n; ++i) {
        if (data[begin + i]) (*out)[at + (i >> 3)] |= static_cast<char>(1 << (i & 7));
      }
      return;
    }
    case PhysicalType::kByteArray: {
      const auto& offsets = values.offsets();
      for (int64_t i = begin; i < end; ++i) {
        const uint32_t len = static_cast<uint32_t>(offsets[i + 1] - offsets[i]);
        out->append(reinterpret_cast<const char*>(&len), 4);
        out->append(reinterpret_cast<const char*>(data + offsets[i]), len);
      }
      return;
    }
    default: {
      const size_t w = static_cast<size_t>(values.value_width());
      out->append(reinterpret_cast<const char*>(data + begin * w), static_cast<size_t>(end - begin) * w);
    }
  }
}

void EncodeRleBooleans(const ColumnData& values, int64_t begin, int64_t end, std::string* out) {
  EncodeRleHybridWithLength<uint8_t>(values.value_buffer().data() + begin, end - begin, 1, out);
}

}  // namespace lakerun::parquet
