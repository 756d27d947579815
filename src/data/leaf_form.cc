#include "leaf_form.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "lakerun/base/error.h"
#include "lakerun/format/parquet/types.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;
using Source = LeafForm::Source;
using int128 = __int128;

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;

int64_t UnitsPerSecond(pq::TimeUnit unit) {
  switch (unit) {
    case pq::TimeUnit::kMillis: return 1000;
    case pq::TimeUnit::kMicros: return 1000000;
    case pq::TimeUnit::kNanos: return 1000000000;
  }
  return 1;
}

int64_t UnitsPerSecond(TimestampUnit unit) { return unit == TimestampUnit::kMicros ? 1000000 : 1000000000; }

// element = stored * multiply / divide, for stored values in `from` units per second and elements in `to`'s.
void Rescale(LeafForm* f, int64_t from, int64_t to) {
  f->multiply = to > from ? to / from : 1;
  f->divide = from > to ? from / to : 1;
}

size_t StoredWidth(const pq::ColumnDescriptor& d) {
  switch (d.physical_type) {
    case pq::PhysicalType::kBoolean: return 1;
    case pq::PhysicalType::kInt32:
    case pq::PhysicalType::kFloat: return 4;
    case pq::PhysicalType::kInt64:
    case pq::PhysicalType::kDouble: return 8;
    case pq::PhysicalType::kInt96: return 12;
    case pq::PhysicalType::kFixedLenByteArray: return static_cast<size_t>(d.type_length);
    case pq::PhysicalType::kByteArray: return 0;
  }
  return 0;
}

bool IsInteger(ElementType t) {
  return t == ElementType::kUInt8 || t == ElementType::kInt8 || t == ElementType::kInt16 ||
         t == ElementType::kInt32 || t == ElementType::kInt64;
}

// The stored form of a leaf, before the table's schema has a say.
LeafForm FileForm(const pq::ColumnDescriptor& d, const ColumnForm& form, const std::string& where) {
  using K = pq::LogicalType::Kind;
  using P = pq::PhysicalType;
  const pq::LogicalType& l = d.logical_type;
  LeafForm f;
  f.source_width = StoredWidth(d);
  if (l.kind == K::kDecimal) {
    f.source = d.physical_type == P::kInt32   ? Source::kDecimalInt32
               : d.physical_type == P::kInt64 ? Source::kDecimalInt64
                                              : Source::kDecimalBytes;
    LAKERUN_CHECK_AS(CorruptDataError, d.physical_type != P::kBoolean && d.physical_type != P::kFloat &&
                     d.physical_type != P::kDouble && d.physical_type != P::kInt96, where, ": a DECIMAL stored as ",
                     pq::ToString(d.physical_type));
    f.scale = f.target_scale = l.scale;
    f.type = form.decimal == DecimalForm::kFloat64 ? ElementType::kFloat64 : ElementType::kInt64;
    return f;
  }
  if (d.physical_type == P::kInt96) {  // nanoseconds since the epoch (Spark, Impala, Hive)
    f.source = Source::kInt96;
    f.type = ElementType::kInt64;
    Rescale(&f, 1000000000, UnitsPerSecond(form.timestamp));
    return f;
  }
  if ((l.kind == K::kTimestamp || l.kind == K::kTime) && d.physical_type != P::kByteArray) {
    f.source = d.physical_type == P::kInt32 ? Source::kInt32 : Source::kInt64;
    f.type = ElementType::kInt64;
    Rescale(&f, UnitsPerSecond(l.unit), UnitsPerSecond(form.timestamp));
    if (f.multiply == 1 && f.divide == 1 && f.source == Source::kInt64) f.source = Source::kAsStored;
    return f;
  }
  if (l.kind == K::kInteger && (d.physical_type == P::kInt32 || d.physical_type == P::kInt64)) {
    const int bits = l.bit_width;
    if (l.is_signed) {
      f.type = bits == 8 ? ElementType::kInt8 : bits == 16 ? ElementType::kInt16
             : d.physical_type == P::kInt32 ? ElementType::kInt32 : ElementType::kInt64;
      if (bits <= 16) f.source = Source::kInt32;
    } else {
      f.type = bits == 8 ? ElementType::kUInt8 : bits == 16 ? ElementType::kInt32 : ElementType::kInt64;
      f.source = d.physical_type == P::kInt64 ? Source::kUInt64 : Source::kUInt32;
    }
    return f;
  }
  if (l.kind == K::kFloat16 && d.physical_type == P::kFixedLenByteArray && d.type_length == 2) {
    f.source = Source::kFloat16;
    f.type = ElementType::kFloat32;
    return f;
  }
  switch (d.physical_type) {
    case P::kBoolean: f.type = ElementType::kBool; break;
    case P::kInt32: f.type = ElementType::kInt32; break;
    case P::kInt64: f.type = ElementType::kInt64; break;
    case P::kFloat: f.type = ElementType::kFloat32; break;
    case P::kDouble: f.type = ElementType::kFloat64; break;
    case P::kByteArray: f.type = ElementType::kBinary; break;
    case P::kFixedLenByteArray:
      f.type = ElementType::kUInt8;
      f.shape = {d.type_length};
      break;
    case P::kInt96: break;  // above
  }
  return f;
}

// The source that reads stored values as plain numbers (for conversions the table's schema asks for).
Source NumericSource(const pq::ColumnDescriptor& d, const LeafForm& f) {
  if (f.source != Source::kAsStored) return f.source;
  switch (d.physical_type) {
    case pq::PhysicalType::kInt32: return Source::kInt32;
    case pq::PhysicalType::kInt64: return Source::kInt64;
    case pq::PhysicalType::kFloat: return Source::kFloat;
    case pq::PhysicalType::kBoolean: return Source::kBool;
    default: return Source::kAsStored;
  }
}

// Converts `f` to the Delta table's type of the column (type widening), or refuses.
void ApplyTableType(const pq::ColumnDescriptor& d, const delta::DataType& table, const ColumnForm& form,
                    const std::string& where, LeafForm* f) {
  using K = delta::TypeKind;
  const ElementType target = TableElementType(table, form, d.dotted_path, where);
  auto refuse = [&]() {
    LAKERUN_THROW(NotImplemented, where, ": the file stores ", pq::ToString(d.physical_type),
                  d.logical_type.kind == pq::LogicalType::Kind::kNone ? "" : " " + d.logical_type.ToString(),
                  " for the table's type ", delta::TypeName(table), "; the loader reads the widenings the Delta "
                  "protocol allows (integer to wider integer, decimal or double; float to double; date to "
                  "timestamp_ntz; decimal to a wider decimal)");
  };
  if (table.kind == K::kDecimal) {
    if (f->source == Source::kInt32 || f->source == Source::kInt64 || f->source == Source::kAsStored) {
      if (!IsInteger(f->type)) refuse();
      f->source = d.physical_type == pq::PhysicalType::kInt64 ? Source::kDecimalInt64 : Source::kDecimalInt32;
      f->scale = 0;  // an integer widened to decimal(p, s): unscaled = value * 10^s
    } else if (!f->is_decimal()) {
      refuse();
    }
    f->target_scale = table.scale;
    if (target == ElementType::kInt64 && f->target_scale < f->scale) refuse();
    f->type = target;
    return;
  }
  const bool timestamp = table.kind == K::kTimestamp || table.kind == K::kTimestampNtz;
  if (timestamp && f->source == Source::kAsStored && d.physical_type == pq::PhysicalType::kInt64) {
    // A timestamp stored without a TIMESTAMP annotation: microseconds, as the protocol writes them.
    Rescale(f, 1000000, UnitsPerSecond(form.timestamp));
    if (f->multiply != 1) f->source = Source::kInt64;
  }
  if (target == f->type) return;
  if (target == ElementType::kBinary && !f->shape.empty()) return;  // binary stored fixed-width: uint8 [width]
  const bool date_to_timestamp = timestamp && d.logical_type.kind == pq::LogicalType::Kind::kDate;
  if (date_to_timestamp) {
    f->source = Source::kInt32;
    f->multiply = kMicrosPerDay / 1000000 * UnitsPerSecond(form.timestamp);
    f->type = target;
    return;
  }
  const bool integer_widening =
      IsInteger(f->type) && f->shape.empty() && (IsInteger(target) || target == ElementType::kFloat64);
  const bool float_widening = f->type == ElementType::kFloat32 && target == ElementType::kFloat64;
  if (!integer_widening && !float_widening) refuse();
  f->source = NumericSource(d, *f);
  if (f->source == Source::kAsStored) refuse();
  f->type = target;
}

// A half-precision float's value (every one is exact in float32).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

// A big-endian two's-complement integer of `n` bytes; false when it needs more than 127 bits.
bool BigEndianInteger(const uint8_t* p, size_t n, int128* out) {
  if (n == 0) {
    *out = 0;
    return true;
  }
  const uint8_t extension = (p[0] & 0x80) ? 0xff : 0x00;
  while (n > 16) {
    if (p[0] != extension) return false;
    ++p;
    --n;
  }
  if (n == 16 && ((p[0] & 0x80) != (extension & 0x80))) return false;
  unsigned __int128 v = extension ? ~static_cast<unsigned __int128>(0) : 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  *out = static_cast<int128>(v);
  return true;
}

// unscaled / 10^scale, correctly rounded to float64.
double DecimalToDouble(int128 unscaled, int32_t scale) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  constexpr int128 kExact = int128{1} << 53;
  if (unscaled > -kExact && unscaled < kExact && scale >= 0 && scale <= 22) {
    return static_cast<double>(static_cast<int64_t>(unscaled)) / kPow10[scale];  // both exact: one rounding
  }
  const bool negative = unscaled < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(unscaled) : unscaled;
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude > 0);
  std::reverse(digits.begin(), digits.end());
  const std::string text = std::string(negative ? "-" : "") + digits + "e" + std::to_string(-scale);
  return std::strtod(text.c_str(), nullptr);
}

class Converter {
 public:
  Converter(const LeafForm& form, const ColumnChunk& in, uint64_t rows, int64_t per_row, uint64_t first_row,
            const std::string& where)
      : f_(form), in_(in), rows_(rows), per_row_(static_cast<uint64_t>(std::max<int64_t>(1, per_row))),
        first_row_(first_row), where_(where) {}

  // Writes element e (stored value e) into `out`; throws when the element type cannot hold it.
  void Convert(uint64_t e, uint8_t* out) const {
    const uint8_t* p = in_.data + e * f_.source_width;
    switch (f_.source) {
      case Source::kFloat: return StoreFloat(Load<float>(p), out);
      case Source::kFloat16: return StoreFloat(HalfToFloat(Load<uint16_t>(p)), out);
      case Source::kDecimalInt32: return StoreDecimal(Load<int32_t>(p), e, out);
      case Source::kDecimalInt64: return StoreDecimal(Load<int64_t>(p), e, out);
      case Source::kDecimalBytes: {
        const bool variable = f_.source_width == 0;
        const uint8_t* bytes = variable ? in_.data + in_.offsets[e] : p;
        const size_t n = variable ? static_cast<size_t>(in_.offsets[e + 1] - in_.offsets[e]) : f_.source_width;
        int128 unscaled = 0;
        if (!BigEndianInteger(bytes, n, &unscaled)) Fail(e, "a decimal wider than 127 bits");
        return StoreDecimal(unscaled, e, out);
      }
      default: return StoreInteger(Integer(p, e), e, out);
    }
  }

  [[noreturn]] void Fail(uint64_t e, const std::string& what) const {
    LAKERUN_THROW(InvalidArgument, where_, ": row ", first_row_ + RowOf(e), " holds ", what, ", which a ",
                  ToString(f_.type), " tensor cannot hold exactly; ", Hint());
  }

 private:
  template <typename T>
  static T Load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  template <typename T>
  static void Put(T v, uint8_t* out) {
    std::memcpy(out, &v, sizeof v);
  }

  int64_t Integer(const uint8_t* p, uint64_t e) const {
    int64_t v = 0;
    switch (f_.source) {
      case Source::kBool: v = p[0] != 0; break;
      case Source::kInt32: v = Load<int32_t>(p); break;
      case Source::kUInt32: v = Load<uint32_t>(p); break;
      case Source::kInt64: v = Load<int64_t>(p); break;
      case Source::kUInt64: {
        const auto u = Load<uint64_t>(p);
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) Fail(e, "uint64 " + std::to_string(u));
        v = static_cast<int64_t>(u);
        break;
      }
      case Source::kInt96: return Int96(p, e);
      default: break;
    }
    if (f_.divide != 1) {
      if (v % f_.divide != 0) Fail(e, StrCat(v, " (stored units), whose last ", Digits(f_.divide), " digits are not 0"));
      v /= f_.divide;
    }
    if (f_.multiply != 1 && __builtin_mul_overflow(v, f_.multiply, &v)) Fail(e, "a time beyond int64 in that unit");
    return v;
  }

  // An INT96 timestamp in the element's unit, from its day and nanosecond of the day: exact, or refused (days
  // beyond int64 nanoseconds still fit microseconds, so the day is never scaled to nanoseconds first).
  int64_t Int96(const uint8_t* p, uint64_t e) const {
    const auto nanos_of_day = Load<int64_t>(p);
    const int64_t day = static_cast<int64_t>(Load<int32_t>(p + 8)) - 2440588;  // the Unix epoch's Julian day
    const int64_t units_per_day = 86400LL * 1000000000 / f_.divide;
    if (nanos_of_day % f_.divide != 0) {
      Fail(e, StrCat("an INT96 time of day of ", nanos_of_day, " ns, whose last ", Digits(f_.divide),
                     " digits are not 0"));
    }
    int64_t v = 0;
    if (__builtin_mul_overflow(day, units_per_day, &v) || __builtin_add_overflow(v, nanos_of_day / f_.divide, &v)) {
      Fail(e, "a time beyond int64 in that unit");
    }
    return v;
  }

  void StoreInteger(int64_t v, uint64_t e, uint8_t* out) const {
    auto check = [&](int64_t lo, int64_t hi) {
      if (v < lo || v > hi) Fail(e, StrCat("the value ", v));
    };
    switch (f_.type) {
      case ElementType::kBool: return Put<uint8_t>(v != 0, out);
      case ElementType::kUInt8: check(0, 255); return Put(static_cast<uint8_t>(v), out);
      case ElementType::kInt8: check(-128, 127); return Put(static_cast<int8_t>(v), out);
      case ElementType::kInt16: check(-32768, 32767); return Put(static_cast<int16_t>(v), out);
      case ElementType::kInt32: check(INT32_MIN, INT32_MAX); return Put(static_cast<int32_t>(v), out);
      case ElementType::kInt64: return Put(v, out);
      case ElementType::kFloat64: check(-(int64_t{1} << 53), int64_t{1} << 53); return Put(static_cast<double>(v), out);
      default: LAKERUN_INTERNAL_ASSERT(false, "integer conversion to ", ToString(f_.type));
    }
  }

  void StoreFloat(float v, uint8_t* out) const {
    if (f_.type == ElementType::kFloat64) return Put(static_cast<double>(v), out);
    Put(v, out);
  }

  void StoreDecimal(int128 unscaled, uint64_t e, uint8_t* out) const {
    if (f_.type == ElementType::kFloat64) return Put(DecimalToDouble(unscaled, f_.scale), out);
    for (int32_t s = f_.scale; s < f_.target_scale; ++s) unscaled *= 10;  // |unscaled| < 2^127 / 10^(38 - s)
    if (unscaled < std::numeric_limits<int64_t>::min() || unscaled > std::numeric_limits<int64_t>::max()) {
      Fail(e, "a decimal whose unscaled value is beyond int64");
    }
    Put(static_cast<int64_t>(unscaled), out);
  }

  static int Digits(int64_t power_of_ten) {
    int n = 0;
    for (; power_of_ten > 1; power_of_ten /= 10) ++n;
    return n;
  }

  // The row holding element e.
  uint64_t RowOf(uint64_t e) const {
    const bool list_offsets = in_.offsets != nullptr && f_.source_width > 0;
    if (!list_offsets) return e / per_row_;
    const int64_t* end = in_.offsets + rows_ + 1;
    return static_cast<uint64_t>(std::upper_bound(in_.offsets, end, static_cast<int64_t>(e)) - in_.offsets - 1);
  }

  std::string Hint() const {
    if (f_.source == Source::kInt96 || f_.divide != 1 || f_.multiply != 1) {
      return "read the column with TableOptions::forms[column].timestamp = TimestampUnit::kNanos (or, for "
             "timestamps beyond years 1677-2262, in microseconds)";
    }
    if (f_.is_decimal()) {
      return "read it as float64 (DecimalForm::kFloat64)";
    }
    return "the table's values do not fit the column's type";
  }

 private:
  const LeafForm& f_;
  const ColumnChunk& in_;
  uint64_t rows_;
  uint64_t per_row_;  // elements per row without list offsets
  uint64_t first_row_;
  const std::string& where_;
};

struct ConvertedColumn {
  std::shared_ptr<const void> input;  // keeps the input's offsets and validity alive
  std::vector<uint8_t> data;
};

}  // namespace

bool LeafForm::KeepsValues() const {
  switch (source) {
    case Source::kAsStored:
    case Source::kInt32:
    case Source::kInt64:
    case Source::kFloat:
    case Source::kBool: return multiply == 1 && divide == 1;
    default: return false;  // unsigned, half floats, INT96, decimals: statistics are of the stored form
  }
}

ElementType TableElementType(const delta::DataType& type, const ColumnForm& form, const std::string& column,
                             const std::string& where) {
  using K = delta::TypeKind;
  switch (type.kind) {
    case K::kLong:
    case K::kTimestamp:
    case K::kTimestampNtz: return ElementType::kInt64;
    case K::kInteger:
    case K::kDate: return ElementType::kInt32;
    case K::kShort: return ElementType::kInt16;
    case K::kByte: return ElementType::kInt8;
    case K::kFloat: return ElementType::kFloat32;
    case K::kDouble: return ElementType::kFloat64;
    case K::kDecimal: return form.decimal == DecimalForm::kFloat64 ? ElementType::kFloat64 : ElementType::kInt64;
    case K::kBoolean: return ElementType::kBool;
    case K::kString:
    case K::kBinary: return ElementType::kBinary;
    default:
      LAKERUN_THROW(NotImplemented, where, ": column '", column, "' is ", delta::TypeName(type),
                    ", which has no tensor form (columns of integer, floating-point, decimal, boolean, date, "
                    "timestamp, string and binary types, and structs, lists and maps of them, can be read)");
  }
}

LeafForm ChooseLeafForm(const pq::ColumnDescriptor& leaf, const delta::DataType* table_type, const ColumnForm& form,
                        const std::string& where) {
  LeafForm f = FileForm(leaf, form, where);
  if (table_type != nullptr) ApplyTableType(leaf, *table_type, form, where, &f);
  return f;
}

ColumnChunk ConvertChunk(const LeafForm& form, const ColumnChunk& in, uint64_t rows, int64_t per_row,
                         uint64_t first_row, const std::string& where) {
  LAKERUN_INTERNAL_ASSERT(in.views == nullptr, "conversion of a chunk of views");
  const bool list_offsets = in.offsets != nullptr && form.source_width > 0;
  const uint64_t elements = list_offsets ? static_cast<uint64_t>(in.offsets[rows] - in.offsets[0])
                                         : rows * static_cast<uint64_t>(form.source_width > 0 ? per_row : 1);
  LAKERUN_CHECK_AS(CorruptDataError, !list_offsets || in.offsets[0] == 0, where, ": list offsets start at ",
                   in.offsets[0]);
  LAKERUN_CHECK_AS(CorruptDataError, form.source_width == 0 || in.size_bytes >= elements * form.source_width, where,
                   ": ", in.size_bytes, " value bytes for ", elements, " values of ", form.source_width, " bytes");
  const uint8_t* valid = in.element_validity != nullptr ? in.element_validity
                         : (list_offsets || per_row != 1) ? nullptr : in.validity;
  auto out = std::make_shared<ConvertedColumn>();
  out->input = in.owner;
  const size_t width = ElementSize(form.type);
  out->data.assign(elements * width, 0);
  const Converter converter(form, in, rows, per_row, first_row, where);
  for (uint64_t e = 0; e < elements; ++e) {
    if (valid == nullptr || valid[e]) converter.Convert(e, out->data.data() + e * width);
  }
  ColumnChunk chunk;
  chunk.data = out->data.data();
  chunk.size_bytes = out->data.size();
  chunk.offsets = list_offsets ? in.offsets : nullptr;
  chunk.validity = in.validity;
  chunk.element_validity = in.element_validity;
  chunk.owner = out;
  return chunk;
}

}  // namespace lakerun::data
