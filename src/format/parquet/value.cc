#include "lakerun/format/parquet/value.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "lakerun/base/error.h"

namespace lakerun::parquet {

Value Value::Bool(bool v) {
  Value r;
  r.kind_ = Kind::kBool;
  r.int_ = v;
  return r;
}
Value Value::Int(int64_t v) {
  Value r;
  r.kind_ = Kind::kInt;
  r.int_ = v;
  return r;
}
Value Value::Float(float v) {
  Value r;
  r.kind_ = Kind::kFloat;
  r.double_ = v;
  return r;
}
Value Value::Double(double v) {
  Value r;
  r.kind_ = Kind::kDouble;
  r.double_ = v;
  return r;
}
Value Value::String(std::string v) {
  Value r;
  r.kind_ = Kind::kString;
  r.bytes_ = std::move(v);
  return r;
}
Value Value::Bytes(std::string v) {
  Value r;
  r.kind_ = Kind::kBytes;
  r.bytes_ = std::move(v);
  return r;
}
Value Value::List(std::vector<Value> items) {
  Value r;
  r.kind_ = Kind::kList;
  r.children_ = std::move(items);
  return r;
}
Value Value::Struct(std::vector<std::pair<std::string, Value>> fields) {
  Value r;
  r.kind_ = Kind::kStruct;
  for (auto& [name, value] : fields) {
    r.names_.push_back(std::move(name));
    r.children_.push_back(std::move(value));
  }
  return r;
}
Value Value::Map(std::vector<std::pair<Value, Value>> entries) {
  Value r;
  r.kind_ = Kind::kMap;
  for (auto& [k, v] : entries) {
    r.children_.push_back(std::move(k));
    r.children_.push_back(std::move(v));
  }
  return r;
}

double Value::as_double() const {
  if (kind_ == Kind::kInt || kind_ == Kind::kBool) return static_cast<double>(int_);
  return double_;
}

const Value* Value::Field(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return &children_[i];
  }
  return nullptr;
}

namespace {

void AppendQuoted(std::string* out, const std::string& s, bool bytes) {
  if (bytes) out->push_back('b');
  out->push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '\t') {
      *out += "\\t";
    } else if (c < 0x20 || (bytes && c >= 0x7f)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, bytes ? "\\x%02x" : "\\u%04x", c);
      *out += buf;
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

void AppendNumber(std::string* out, double d, bool single) {
  if (std::isnan(d)) {
    *out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    *out += d > 0 ? "Infinity" : "-Infinity";
    return;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", d);
  // Use the shortest representation that round-trips.
  for (int precision = 1; precision <= (single ? 9 : 17); ++precision) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, d);
    if (single ? static_cast<float>(std::strtod(shorter, nullptr)) == static_cast<float>(d)
               : std::strtod(shorter, nullptr) == d) {
      std::memcpy(buf, shorter, sizeof shorter);
      break;
    }
  }
  *out += buf;
}

void Append(std::string* out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: *out += "null"; return;
    case Value::Kind::kBool: *out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kInt: *out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: AppendNumber(out, v.as_double(), true); return;
    case Value::Kind::kDouble: AppendNumber(out, v.as_double(), false); return;
    case Value::Kind::kString: AppendQuoted(out, v.as_string(), false); return;
    case Value::Kind::kBytes: AppendQuoted(out, v.as_string(), true); return;
    case Value::Kind::kList:
      out->push_back('[');
      for (size_t i = 0; i < v.children().size(); ++i) {
        if (i) *out += ", ";
        Append(out, v.children()[i]);
      }
      out->push_back(']');
      return;
    case Value::Kind::kStruct:
      out->push_back('{');
      for (size_t i = 0; i < v.children().size(); ++i) {
        if (i) *out += ", ";
        AppendQuoted(out, v.field_names()[i], false);
        *out += ": ";
        Append(out, v.children()[i]);
      }
      out->push_back('}');
      return;
    case Value::Kind::kMap:
      out->push_back('{');
      for (size_t i = 0; i < v.map_size(); ++i) {
        if (i) *out += ", ";
        Append(out, v.map_key(i));
        *out += " => ";
        Append(out, v.map_value(i));
      }
      out->push_back('}');
      return;
  }
}

}  // namespace

std::string Value::ToString() const {
  std::string out;
  Append(&out, *this);
  return out;
}

bool Value::operator==(const Value& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kNull: return true;
    case Kind::kBool:
    case Kind::kInt: return int_ == o.int_;
    case Kind::kFloat:
    case Kind::kDouble: return double_ == o.double_ || (std::isnan(double_) && std::isnan(o.double_));
    case Kind::kString:
    case Kind::kBytes: return bytes_ == o.bytes_;
    default: return children_ == o.children_ && names_ == o.names_;
  }
}

int CompareValues(const Value& a, const Value& b) {
  using K = Value::Kind;
  auto numeric = [](K k) { return k == K::kInt || k == K::kFloat || k == K::kDouble || k == K::kBool; };
  if (a.kind() == K::kInt && b.kind() == K::kInt) {
    return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
  }
  if (numeric(a.kind()) && numeric(b.kind())) {
    double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  bool a_str = a.kind() == K::kString || a.kind() == K::kBytes;
  bool b_str = b.kind() == K::kString || b.kind() == K::kBytes;
  if (a_str && b_str) {
    const std::string& x = a.as_string();
    const std::string& y = b.as_string();
    size_t n = std::min(x.size(), y.size());
    int c = n ? std::memcmp(x.data(), y.data(), n) : 0;
    if (c != 0) return c < 0 ? -1 : 1;
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  LAKERUN_THROW(InvalidArgument, "cannot compare ", a.ToString(), " with ", b.ToString());
}

}  // namespace lakerun::parquet
