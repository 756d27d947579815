// Filter evaluation: pruning from statistics (MayMatch), one row of Values (Matches) and typed column vectors
// (EvaluateRows). Filters are in negation normal form (filter.h), so unknown (null) results are simply false.
#include <algorithm>
#include <cstring>

#include "lakerun/base/error.h"
#include "lakerun/format/filter.h"

namespace lakerun::format {
namespace {

using parquet::Value;

int Compare(const Value& a, const Value& b, const std::string& column) {
  try {
    return parquet::CompareValues(a, b);
  } catch (const InvalidArgument&) {
    LAKERUN_THROW(InvalidArgument, "filter on column '", column, "' compares ", b.ToString(), " with values like ",
                  a.ToString());
  }
}

bool LeafHolds(FilterOp op, int cmp) {
  switch (op) {
    case FilterOp::kEq: return cmp == 0;
    case FilterOp::kNe: return cmp != 0;
    case FilterOp::kLt: return cmp < 0;
    case FilterOp::kLe: return cmp <= 0;
    case FilterOp::kGt: return cmp > 0;
    case FilterOp::kGe: return cmp >= 0;
    default: return false;
  }
}

// Whether some value in [min, max] can satisfy a leaf (comparison or set test) with constants `values`.
bool RangeMayMatch(const Filter& leaf, const Value& min, const Value& max) {
  const std::string& c = leaf.column();
  auto inside = [&](const Value& v) { return Compare(min, v, c) <= 0 && Compare(max, v, c) >= 0; };
  switch (leaf.op()) {
    case FilterOp::kEq: return inside(leaf.value());
    case FilterOp::kNe: return !(Compare(min, leaf.value(), c) == 0 && Compare(max, leaf.value(), c) == 0);
    case FilterOp::kLt: return Compare(min, leaf.value(), c) < 0;
    case FilterOp::kLe: return Compare(min, leaf.value(), c) <= 0;
    case FilterOp::kGt: return Compare(max, leaf.value(), c) > 0;
    case FilterOp::kGe: return Compare(max, leaf.value(), c) >= 0;
    case FilterOp::kIn: return std::any_of(leaf.values().begin(), leaf.values().end(), inside);
    case FilterOp::kNotIn:
      if (Compare(min, max, c) != 0) return true;
      return std::none_of(leaf.values().begin(), leaf.values().end(),
                          [&](const Value& v) { return Compare(min, v, c) == 0; });
    default: return true;
  }
}

bool LeafMayMatch(const Filter& leaf, const StatisticsView& stats) {
  const std::optional<ColumnStatistics> cs = stats.column ? stats.column(leaf.column()) : std::nullopt;
  if (!cs) return true;
  const bool all_null = cs->all_null || (cs->null_count && stats.num_rows && *stats.num_rows > 0 &&
                                          *cs->null_count >= *stats.num_rows);
  if (leaf.op() == FilterOp::kIsNull) return !(cs->null_count && *cs->null_count == 0);
  if (leaf.op() == FilterOp::kIsNotNull) return !all_null;
  if (all_null) return false;  // no comparison holds for a null
  if (!cs->min || !cs->max || cs->min->is_null() || cs->max->is_null()) return true;
  try {
    return RangeMayMatch(leaf, *cs->min, *cs->max);
  } catch (const InvalidArgument&) {
    return true;  // statistics of another representation (e.g. raw decimal bytes) prove nothing; rows decide
  }
}

bool LeafMatches(const Filter& leaf, const Value& v) {
  switch (leaf.op()) {
    case FilterOp::kIsNull: return v.is_null();
    case FilterOp::kIsNotNull: return !v.is_null();
    default: break;
  }
  if (v.is_null()) return false;
  if (leaf.op() == FilterOp::kIn || leaf.op() == FilterOp::kNotIn) {
    const bool in = std::any_of(leaf.values().begin(), leaf.values().end(),
                                [&](const Value& c) { return Compare(v, c, leaf.column()) == 0; });
    return leaf.op() == FilterOp::kIn ? in : !in;
  }
  return LeafHolds(leaf.op(), Compare(v, leaf.value(), leaf.column()));
}

// ---- typed evaluation -------------------------------------------------------------------------------------------

bool IsInteger(ColumnVector::Type t) {
  return t == ColumnVector::Type::kBool || t == ColumnVector::Type::kInt8 || t == ColumnVector::Type::kInt16 ||
         t == ColumnVector::Type::kInt32 || t == ColumnVector::Type::kInt64 || t == ColumnVector::Type::kUInt8;
}

const char* TypeName(ColumnVector::Type t) {
  switch (t) {
    case ColumnVector::Type::kBool: return "boolean";
    case ColumnVector::Type::kInt8: return "int8";
    case ColumnVector::Type::kInt16: return "int16";
    case ColumnVector::Type::kInt32: return "int32";
    case ColumnVector::Type::kInt64: return "int64";
    case ColumnVector::Type::kUInt8: return "uint8";
    case ColumnVector::Type::kFloat: return "float32";
    case ColumnVector::Type::kDouble: return "float64";
    case ColumnVector::Type::kBytes: return "bytes";
  }
  return "?";
}

// Row i of a numeric column as T.
template <typename T>
T NumberAt(const ColumnVector& c, int64_t i) {
  switch (c.type) {
    case ColumnVector::Type::kBool:
    case ColumnVector::Type::kUInt8: return static_cast<T>(static_cast<const uint8_t*>(c.values)[i]);
    case ColumnVector::Type::kInt8: return static_cast<T>(static_cast<const int8_t*>(c.values)[i]);
    case ColumnVector::Type::kInt16: return static_cast<T>(static_cast<const int16_t*>(c.values)[i]);
    case ColumnVector::Type::kInt32: return static_cast<T>(static_cast<const int32_t*>(c.values)[i]);
    case ColumnVector::Type::kInt64: return static_cast<T>(static_cast<const int64_t*>(c.values)[i]);
    case ColumnVector::Type::kFloat: return static_cast<T>(static_cast<const float*>(c.values)[i]);
    case ColumnVector::Type::kDouble: return static_cast<T>(static_cast<const double*>(c.values)[i]);
    case ColumnVector::Type::kBytes: break;
  }
  return T{};
}

std::string_view BytesAt(const ColumnVector& c, int64_t i) {
  if (c.views != nullptr) return c.views[i];
  const char* base = static_cast<const char*>(c.values);
  return {base + c.offsets[i], static_cast<size_t>(c.offsets[i + 1] - c.offsets[i])};
}

// keep[i] = leaf holds for row i, with the row read by `at(i)` and compared to constants of type K.
template <typename K, typename At>
void LeafLoop(const Filter& leaf, const std::vector<K>& constants, const ColumnVector& c, int64_t rows, At at,
              uint8_t* keep) {
  const uint8_t* valid = c.validity;
  if (leaf.op() == FilterOp::kIn || leaf.op() == FilterOp::kNotIn) {
    const bool want = leaf.op() == FilterOp::kIn;
    for (int64_t i = 0; i < rows; ++i) {
      const auto v = at(i);
      keep[i] = (valid == nullptr || valid[i]) &&
                (std::find(constants.begin(), constants.end(), v) != constants.end()) == want;
    }
    return;
  }
  const K k = constants.at(0);
  auto run = [&](auto holds) {
    for (int64_t i = 0; i < rows; ++i) keep[i] = (valid == nullptr || valid[i]) && holds(at(i));
  };
  switch (leaf.op()) {
    case FilterOp::kEq: run([&](const auto& v) { return v == k; }); break;
    case FilterOp::kNe: run([&](const auto& v) { return v != k; }); break;
    case FilterOp::kLt: run([&](const auto& v) { return v < k; }); break;
    case FilterOp::kLe: run([&](const auto& v) { return v <= k; }); break;
    case FilterOp::kGt: run([&](const auto& v) { return v > k; }); break;
    case FilterOp::kGe: run([&](const auto& v) { return v >= k; }); break;
    default: LAKERUN_INTERNAL_ASSERT(false, "LeafLoop: not a comparison");
  }
}

void EvaluateLeaf(const Filter& leaf, int64_t rows, const ColumnVector& c, uint8_t* keep) {
  if (leaf.op() == FilterOp::kIsNull || leaf.op() == FilterOp::kIsNotNull) {
    const uint8_t want_valid = leaf.op() == FilterOp::kIsNotNull;
    for (int64_t i = 0; i < rows; ++i) keep[i] = (c.validity == nullptr ? 1 : c.validity[i] != 0) == want_valid;
    return;
  }
  const std::vector<Value>& values = leaf.values();
  auto refuse = [&](const Value& v) {
    LAKERUN_THROW(InvalidArgument, "filter on column '", leaf.column(), "' (", TypeName(c.type), ") compares with ",
                  v.ToString());
  };
  if (c.type == ColumnVector::Type::kBytes) {
    std::vector<std::string_view> constants;
    for (const Value& v : values) {
      if (v.kind() != Value::Kind::kString && v.kind() != Value::Kind::kBytes) refuse(v);
      constants.push_back(v.as_string());
    }
    // std::string_view compares as unsigned bytes (char_traits<char>::lt is unsigned), as CompareValues does.
    LeafLoop(leaf, constants, c, rows, [&](int64_t i) { return BytesAt(c, i); }, keep);
    return;
  }
  bool all_int = IsInteger(c.type);
  for (const Value& v : values) {
    if (v.kind() != Value::Kind::kInt && v.kind() != Value::Kind::kBool && v.kind() != Value::Kind::kFloat &&
        v.kind() != Value::Kind::kDouble) {
      refuse(v);
    }
    all_int = all_int && (v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kBool);
  }
  if (all_int) {
    std::vector<int64_t> constants;
    for (const Value& v : values) constants.push_back(v.as_int());
    LeafLoop(leaf, constants, c, rows, [&](int64_t i) { return NumberAt<int64_t>(c, i); }, keep);
  } else {
    std::vector<double> constants;
    for (const Value& v : values) constants.push_back(v.kind() == Value::Kind::kBool ? v.as_int() : v.as_double());
    LeafLoop(leaf, constants, c, rows, [&](int64_t i) { return NumberAt<double>(c, i); }, keep);
  }
}

}  // namespace

ColumnStatistics ColumnStatistics::Constant(const Value& value) {
  ColumnStatistics out;
  if (value.is_null()) {
    out.all_null = true;
  } else {
    out.min = out.max = value;
    out.null_count = 0;
  }
  return out;
}

bool MayMatch(const Filter& filter, const StatisticsView& stats) {
  switch (filter.op()) {
    case FilterOp::kTrue: return true;
    case FilterOp::kFalse: return false;
    case FilterOp::kAnd:
      return std::all_of(filter.children().begin(), filter.children().end(),
                         [&](const Filter& c) { return MayMatch(c, stats); });
    case FilterOp::kOr:
      return std::any_of(filter.children().begin(), filter.children().end(),
                         [&](const Filter& c) { return MayMatch(c, stats); });
    default: return LeafMayMatch(filter, stats);
  }
}

bool Matches(const Filter& filter, const std::function<Value(const std::string&)>& value_of) {
  switch (filter.op()) {
    case FilterOp::kTrue: return true;
    case FilterOp::kFalse: return false;
    case FilterOp::kAnd:
      return std::all_of(filter.children().begin(), filter.children().end(),
                         [&](const Filter& c) { return Matches(c, value_of); });
    case FilterOp::kOr:
      return std::any_of(filter.children().begin(), filter.children().end(),
                         [&](const Filter& c) { return Matches(c, value_of); });
    default: return LeafMatches(filter, value_of(filter.column()));
  }
}

void EvaluateRows(const Filter& filter, int64_t rows, const std::function<ColumnVector(const std::string&)>& column,
                  uint8_t* keep) {
  switch (filter.op()) {
    case FilterOp::kTrue: std::memset(keep, 1, static_cast<size_t>(rows)); return;
    case FilterOp::kFalse: std::memset(keep, 0, static_cast<size_t>(rows)); return;
    case FilterOp::kAnd:
    case FilterOp::kOr: {
      const bool is_and = filter.op() == FilterOp::kAnd;
      EvaluateRows(filter.children()[0], rows, column, keep);
      std::vector<uint8_t> part(static_cast<size_t>(rows));
      for (size_t k = 1; k < filter.children().size(); ++k) {
        EvaluateRows(filter.children()[k], rows, column, part.data());
        for (int64_t i = 0; i < rows; ++i) keep[i] = is_and ? (keep[i] & part[i]) : (keep[i] | part[i]);
      }
      return;
    }
    default: EvaluateLeaf(filter, rows, column(filter.column()), keep);
  }
}

}  // namespace lakerun::format
