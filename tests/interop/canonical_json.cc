#include "canonical_json.h"

#include <cmath>
#include <cstring>

#include "lakerun/base/error.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::interop {
namespace {

using parquet::ConvertedType;
using parquet::LogicalType;
using parquet::PhysicalType;
using parquet::SchemaNode;
using parquet::Value;
using Kind = LogicalType::Kind;

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

/// Big-endian two's complement integer of any width -> decimal string (schoolbook division by 10).
std::string DecimalFromBigEndian(std::string_view bytes) {
  if (bytes.empty()) return "0";
  std::vector<uint8_t> mag(bytes.begin(), bytes.end());
  const bool negative = mag[0] & 0x80;
  if (negative) {  // two's complement negate
    for (auto& b : mag) b = static_cast<uint8_t>(~b);
    for (size_t i = mag.size(); i-- > 0;) {
      if (++mag[i] != 0) break;
    }
  }
  std::string digits;
  bool nonzero = true;
  while (nonzero) {
    nonzero = false;
    unsigned rem = 0;
    for (auto& b : mag) {
      unsigned cur = rem * 256 + b;
      b = static_cast<uint8_t>(cur / 10);
      rem = cur % 10;
      nonzero |= b != 0;
    }
    digits.push_back(static_cast<char>('0' + rem));
  }
  if (negative && digits != "0") digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

double HalfToDouble(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int e = (h >> 10) & 0x1f;
  const int f = h & 0x3ff;
  if (e == 0) return sign * std::ldexp(f, -24);
  if (e == 31) return f ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + f, e - 25);
}

Json CanonFloat(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0 && std::signbit(x)) return "-0";
  return x;
}

bool IsUnsigned(const SchemaNode& n) {
  if (n.logical_type.kind == Kind::kInteger) return !n.logical_type.is_signed;
  return n.converted_type == ConvertedType::kUint8 || n.converted_type == ConvertedType::kUint16 ||
         n.converted_type == ConvertedType::kUint32 || n.converted_type == ConvertedType::kUint64;
}

std::string DecimalString(const std::string& unscaled, int scale) {
  return unscaled + "e-" + std::to_string(scale);
}

Json RenderLeaf(const SchemaNode& n, const Value& v) {
  const LogicalType& lt = n.logical_type;
  switch (n.physical_type) {
    case PhysicalType::kBoolean:
      return v.as_bool();
    case PhysicalType::kInt32: {
      const auto raw = static_cast<int32_t>(v.as_int());
      if (lt.kind == Kind::kDecimal) return DecimalString(std::to_string(raw), lt.scale);
      if (IsUnsigned(n)) return static_cast<uint32_t>(raw);
      return raw;
    }
    case PhysicalType::kInt64: {
      const int64_t raw = v.as_int();
      if (lt.kind == Kind::kDecimal) return DecimalString(std::to_string(raw), lt.scale);
      if (IsUnsigned(n)) return std::to_string(static_cast<uint64_t>(raw));
      return std::to_string(raw);
    }
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      return CanonFloat(v.as_double());
    case PhysicalType::kInt96:
      return Hex(v.as_string());
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const std::string& b = v.as_string();
      switch (lt.kind) {
        case Kind::kDecimal: return DecimalString(DecimalFromBigEndian(b), lt.scale);
        case Kind::kString: case Kind::kEnum: case Kind::kJson: return b;
        case Kind::kFloat16: {
          LAKERUN_CHECK_AS(CorruptDataError, b.size() == 2, "FLOAT16 value of ", b.size(), " bytes");
          return CanonFloat(HalfToDouble(static_cast<uint16_t>(static_cast<uint8_t>(b[0]) |
                                                               (static_cast<uint8_t>(b[1]) << 8))));
        }
        default: return Hex(b);
      }
    }
  }
  LAKERUN_THROW(InternalError, "unknown physical type of ", n.name);
}

}  // namespace

Json RenderValue(const SchemaNode& node, const Value& value) {
  if (value.is_null()) return nullptr;
  if (node.is_leaf()) {
    if (node.repetition == parquet::Repetition::kRepeated && value.kind() == Value::Kind::kList) {
      Json arr = Json::array();  // a legacy repeated primitive outside a LIST group
      SchemaNode element = node;
      element.repetition = parquet::Repetition::kRequired;
      for (const Value& item : value.children()) arr.push_back(RenderValue(element, item));
      return arr;
    }
    return RenderLeaf(node, value);
  }
  const SchemaNode* element = nullptr;
  bool element_is_repeated = false;
  if (parquet::IsListNode(node, &element, &element_is_repeated)) {
    Json arr = Json::array();
    SchemaNode elem = *element;
    if (element_is_repeated) elem.repetition = parquet::Repetition::kRequired;
    for (const Value& item : value.children()) arr.push_back(RenderValue(elem, item));
    return arr;
  }
  const SchemaNode* key_value = nullptr;
  if (parquet::IsMapNode(node, &key_value)) {
    Json arr = Json::array();
    for (size_t i = 0; i < value.map_size(); ++i) {
      Json pair = Json::array();
      pair.push_back(RenderValue(key_value->children.at(0), value.map_key(i)));
      pair.push_back(key_value->children.size() > 1 ? RenderValue(key_value->children[1], value.map_value(i))
                                                    : Json(nullptr));
      arr.push_back(std::move(pair));
    }
    return arr;
  }
  Json obj = Json::object();
  for (const SchemaNode& child : node.children) {
    const Value* field = value.Field(child.name);
    obj[child.name] = field ? RenderValue(child, *field) : Json(nullptr);
  }
  return obj;
}

Json RenderRows(const parquet::Schema& schema, const std::vector<Value>& rows) {
  Json out;
  out["num_rows"] = rows.size();
  Json& columns = out["columns"];
  columns = Json::object();
  for (const SchemaNode& field : schema.root().children) {
    Json col = Json::array();
    for (const Value& row : rows) {
      const Value* v = row.Field(field.name);
      col.push_back(v ? RenderValue(field, *v) : Json(nullptr));
    }
    columns[field.name] = std::move(col);
  }
  return out;
}

Json RenderFile(const parquet::ParquetFile& file) {
  parquet::TableReader reader(file, {});
  std::vector<Value> rows = reader.ReadRows(file.num_rows());
  return RenderRows(file.schema(), rows);
}

std::string Show(const Json& value) {
  std::string s = value.dump();
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

namespace {

bool Same(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Same(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto jt = b.find(it.key());
      if (jt == b.end() || !Same(it.value(), *jt)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

std::vector<std::string> DiffDumps(const Json& lakerun, const Json& oracle, const std::string& oracle_name,
                                   size_t limit) {
  std::vector<std::string> out;
  if (oracle.contains("error")) {
    out.push_back(oracle_name + " could not read the file: " + oracle["error"].get<std::string>());
    return out;
  }
  if (lakerun["num_rows"] != oracle["num_rows"]) {
    out.push_back(StrCat("num_rows: lakerun ", lakerun["num_rows"].dump(), " vs ", oracle_name, " ",
                         oracle["num_rows"].dump()));
  }
  const Json& a = lakerun["columns"];
  const Json& b = oracle["columns"];
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (!a.contains(it.key())) out.push_back(StrCat("column '", it.key(), "' missing in lakerun's rendering"));
  }
  for (auto it = a.begin(); it != a.end() && out.size() < limit; ++it) {
    const std::string& col = it.key();
    if (oracle.contains("lossy") && oracle["lossy"].contains(col)) continue;
    if (!b.contains(col)) {
      out.push_back(StrCat("column '", col, "' missing in ", oracle_name, "'s rendering"));
      continue;
    }
    const Json& x = it.value();
    const Json& y = b[col];
    if (x.size() != y.size()) {
      out.push_back(StrCat("column '", col, "': lakerun has ", x.size(), " values, ", oracle_name, " ", y.size()));
      continue;
    }
    for (size_t r = 0; r < x.size() && out.size() < limit; ++r) {
      if (!Same(x[r], y[r])) {
        out.push_back(StrCat("column '", col, "' row ", r, ": lakerun ", Show(x[r]), " vs ", oracle_name, " ",
                             Show(y[r])));
      }
    }
  }
  return out;
}

}  // namespace lakerun::interop
