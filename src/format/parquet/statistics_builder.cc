#include "format/parquet/statistics_builder.h"

#include <cmath>
#include <cstring>
#include <string>

namespace lakerun::parquet {
namespace {

template <typename T>
std::string Raw(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T, typename Cmp = std::less<T>>
void MinMax(const T* v, int64_t n, Statistics* s, Cmp less = Cmp()) {
  if (n == 0) return;
  T lo = v[0], hi = v[0];
  for (int64_t i = 1; i < n; ++i) {
    if (less(v[i], lo)) lo = v[i];
    if (less(hi, v[i])) hi = v[i];
  }
  s->min = Raw(lo);
  s->max = Raw(hi);
}

template <typename T>
void FloatMinMax(const T* v, int64_t n, Statistics* s) {
  bool any = false;
  T lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(v[i])) continue;
    if (!any) {
      lo = hi = v[i];
      any = true;
    } else {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
  }
  if (!any) return;
  if (lo == 0) lo = -T(0);
  if (hi == 0) hi = T(0);
  s->min = Raw(lo);
  s->max = Raw(hi);
}

}  // namespace

Statistics ComputeStatistics(const ColumnDescriptor& column, const ColumnData& data) {
  return ComputeStatistics(column, data, 0, data.num_values(), data.num_slots() - data.num_values());
}

Statistics ComputeStatistics(const ColumnDescriptor& column, const ColumnData& data, int64_t value_begin,
                             int64_t value_end, int64_t null_count) {
  Statistics s;
  s.null_count = null_count;
  const int64_t b = value_begin, n = value_end - value_begin;
  const bool is_unsigned = column.logical_type.kind == LogicalType::Kind::kInteger && !column.logical_type.is_signed;
  const auto kind = column.logical_type.kind;
  switch (column.physical_type) {
    case PhysicalType::kBoolean: MinMax(data.values<uint8_t>() + b, n, &s); break;
    case PhysicalType::kInt32:
      if (is_unsigned) MinMax(data.values<uint32_t>() + b, n, &s);
      else MinMax(data.values<int32_t>() + b, n, &s);
      break;
    case PhysicalType::kInt64:
      if (is_unsigned) MinMax(data.values<uint64_t>() + b, n, &s);
      else MinMax(data.values<int64_t>() + b, n, &s);
      break;
    case PhysicalType::kFloat: FloatMinMax(data.values<float>() + b, n, &s); break;
    case PhysicalType::kDouble: FloatMinMax(data.values<double>() + b, n, &s); break;
    case PhysicalType::kInt96: break;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      if (kind == LogicalType::Kind::kDecimal || kind == LogicalType::Kind::kFloat16 ||
          kind == LogicalType::Kind::kInterval || n == 0) {
        break;
      }
      std::string_view lo = data.bytes_at(b), hi = lo;
      for (int64_t i = 1; i < n; ++i) {
        std::string_view v = data.bytes_at(b + i);
        if (v < lo) lo = v;  // string_view compares as unsigned bytes (char_traits<char>::compare uses memcmp)
        if (v > hi) hi = v;
      }
      if (lo.size() <= 1024 && hi.size() <= 1024) {
        s.min = std::string(lo);
        s.max = std::string(hi);
      }
      break;
    }
  }
  return s;
}

}  // namespace lakerun::parquet
