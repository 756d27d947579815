// Filter construction: leaves, AND / OR flattening, NOT pushed down to the leaves, printing.
#include "lakerun/format/filter.h"

#include <algorithm>
#include <cctype>

#include "lakerun/base/error.h"

namespace lakerun::format {
namespace {

using parquet::Value;

bool IsComparison(FilterOp op) { return op >= FilterOp::kEq && op <= FilterOp::kGe; }

// The leaf operator that holds exactly where `op` is false (for non-null operands).
FilterOp Negated(FilterOp op) {
  switch (op) {
    case FilterOp::kEq: return FilterOp::kNe;
    case FilterOp::kNe: return FilterOp::kEq;
    case FilterOp::kLt: return FilterOp::kGe;
    case FilterOp::kLe: return FilterOp::kGt;
    case FilterOp::kGt: return FilterOp::kLe;
    case FilterOp::kGe: return FilterOp::kLt;
    case FilterOp::kIn: return FilterOp::kNotIn;
    case FilterOp::kNotIn: return FilterOp::kIn;
    case FilterOp::kIsNull: return FilterOp::kIsNotNull;
    case FilterOp::kIsNotNull: return FilterOp::kIsNull;
    default: break;
  }
  LAKERUN_INTERNAL_ASSERT(false, "Negated: not a leaf operator");
  return op;
}

// A column name as the parser reads it back: bare when it is a plain (dotted) identifier, else back-quoted.
std::string QuoteColumn(const std::string& name) {
  bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  if (plain) return name;
  std::string out = "`";
  for (char c : name) out += c == '`' ? std::string("``") : std::string(1, c);
  return out + "`";
}

std::string Literal(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
    case Value::Kind::kBytes: {
      std::string out = "'";
      for (char c : v.as_string()) out += c == '\'' ? std::string("''") : std::string(1, c);
      return out + "'";
    }
    case Value::Kind::kBool: return v.as_bool() ? "true" : "false";
    default: return v.ToString();
  }
}

}  // namespace

const char* ToString(FilterOp op) {
  switch (op) {
    case FilterOp::kTrue: return "TRUE";
    case FilterOp::kFalse: return "FALSE";
    case FilterOp::kEq: return "=";
    case FilterOp::kNe: return "!=";
    case FilterOp::kLt: return "<";
    case FilterOp::kLe: return "<=";
    case FilterOp::kGt: return ">";
    case FilterOp::kGe: return ">=";
    case FilterOp::kIn: return "IN";
    case FilterOp::kNotIn: return "NOT IN";
    case FilterOp::kIsNull: return "IS NULL";
    case FilterOp::kIsNotNull: return "IS NOT NULL";
    case FilterOp::kAnd: return "AND";
    case FilterOp::kOr: return "OR";
  }
  return "?";
}

Filter Filter::Compare(std::string column, FilterOp op, Value value) {
  LAKERUN_CHECK(IsComparison(op), "Filter::Compare takes = != < <= > >=, not ", format::ToString(op));
  LAKERUN_CHECK(!value.is_null(), "filter on '", column, "': a comparison with null is never true; use IS NULL");
  LAKERUN_CHECK(!column.empty(), "filter: empty column name");
  Filter f;
  f.op_ = op;
  f.column_ = std::move(column);
  f.values_.push_back(std::move(value));
  return f;
}

Filter Filter::In(std::string column, std::vector<Value> values) {
  LAKERUN_CHECK(!column.empty(), "filter: empty column name");
  for (const Value& v : values) {
    LAKERUN_CHECK(!v.is_null(), "filter on '", column, "': IN lists cannot hold null; use IS NULL");
  }
  Filter f;
  f.op_ = FilterOp::kIn;
  f.column_ = std::move(column);
  f.values_ = std::move(values);
  return f;
}

Filter Filter::NotIn(std::string column, std::vector<Value> values) {
  Filter f = In(std::move(column), std::move(values));
  f.op_ = FilterOp::kNotIn;
  return f;
}

Filter Filter::IsNull(std::string column) {
  LAKERUN_CHECK(!column.empty(), "filter: empty column name");
  Filter f;
  f.op_ = FilterOp::kIsNull;
  f.column_ = std::move(column);
  return f;
}

Filter Filter::IsNotNull(std::string column) {
  Filter f = IsNull(std::move(column));
  f.op_ = FilterOp::kIsNotNull;
  return f;
}

Filter Filter::And(std::vector<Filter> children) {
  Filter f;
  for (Filter& c : children) {
    if (c.is_true()) continue;
    if (c.is_false()) return c;  // x AND false is false
    if (c.op_ == FilterOp::kAnd) {
      for (Filter& g : c.children_) f.children_.push_back(std::move(g));
    } else {
      f.children_.push_back(std::move(c));
    }
  }
  if (f.children_.empty()) return Filter();
  if (f.children_.size() == 1) return std::move(f.children_[0]);
  f.op_ = FilterOp::kAnd;
  return f;
}

Filter Filter::Or(std::vector<Filter> children) {
  Filter f;
  for (Filter& c : children) {
    if (c.is_true()) return Filter();  // x OR true is true
    if (c.is_false()) continue;
    if (c.op_ == FilterOp::kOr) {
      for (Filter& g : c.children_) f.children_.push_back(std::move(g));
    } else {
      f.children_.push_back(std::move(c));
    }
  }
  if (f.children_.empty()) {  // no operand, or only false ones
    f.op_ = FilterOp::kFalse;
    return f;
  }
  if (f.children_.size() == 1) return std::move(f.children_[0]);
  f.op_ = FilterOp::kOr;
  return f;
}

Filter Filter::Not(const Filter& child) {
  switch (child.op_) {
    case FilterOp::kTrue:
    case FilterOp::kFalse: {
      Filter f;
      f.op_ = child.op_ == FilterOp::kTrue ? FilterOp::kFalse : FilterOp::kTrue;
      return f;
    }
    case FilterOp::kAnd:
    case FilterOp::kOr: {
      std::vector<Filter> negated;
      for (const Filter& c : child.children_) negated.push_back(Not(c));
      return child.op_ == FilterOp::kAnd ? Or(std::move(negated)) : And(std::move(negated));
    }
    default: {
      Filter f = child;
      f.op_ = Negated(child.op_);
      return f;
    }
  }
}

std::vector<std::string> Filter::Columns() const {
  std::vector<std::string> out;
  std::function<void(const Filter&)> walk = [&](const Filter& f) {
    if (f.is_leaf() && std::find(out.begin(), out.end(), f.column_) == out.end()) out.push_back(f.column_);
    for (const Filter& c : f.children_) walk(c);
  };
  walk(*this);
  return out;
}

bool Filter::References(const std::string& column) const {
  if (is_leaf()) return column_ == column;
  return std::any_of(children_.begin(), children_.end(), [&](const Filter& c) { return c.References(column); });
}

Filter Filter::MapValues(const std::function<Value(const std::string&, const Value&)>& convert) const {
  Filter f = *this;
  for (Value& v : f.values_) v = convert(f.column_, v);
  for (Filter& c : f.children_) c = c.MapValues(convert);
  return f;
}

std::vector<Filter> Filter::Conjuncts() const {
  if (op_ == FilterOp::kTrue) return {};
  if (op_ == FilterOp::kAnd) return children_;
  return {*this};
}

std::string Filter::ToString() const {
  switch (op_) {
    case FilterOp::kTrue: return "TRUE";
    case FilterOp::kFalse: return "FALSE";
    case FilterOp::kAnd:
    case FilterOp::kOr: {
      std::string out = "(";
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i > 0) out += op_ == FilterOp::kAnd ? " AND " : " OR ";
        out += children_[i].ToString();
      }
      return out + ")";
    }
    case FilterOp::kIsNull:
    case FilterOp::kIsNotNull: return QuoteColumn(column_) + " " + format::ToString(op_);
    case FilterOp::kIn:
    case FilterOp::kNotIn: {
      std::string out = QuoteColumn(column_) + " " + format::ToString(op_) + " (";
      for (size_t i = 0; i < values_.size(); ++i) out += (i ? ", " : "") + Literal(values_[i]);
      return out + ")";
    }
    default: return QuoteColumn(column_) + " " + format::ToString(op_) + " " + Literal(values_.at(0));
  }
}

bool Filter::operator==(const Filter& o) const {
  return op_ == o.op_ && column_ == o.column_ && values_ == o.values_ && children_ == o.children_;
}

}  // namespace lakerun::format
