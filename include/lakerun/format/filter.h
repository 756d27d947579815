// One filter expression for every reader: Delta file pruning (partition values and per-file stats), Parquet
// row-group pruning (column statistics) and exact row filtering all evaluate the same Filter.
//
//   Filter f = Filter::Parse("label < 5 and split = 'train'");
//   Filter g = Filter::And({Filter::Compare("id", FilterOp::kGe, Value::Int(10)),
//                           Filter::Not(Filter::In("city", {Value::String("Paris"), Value::String("Rome")}))});
//
// Semantics are SQL's: a comparison with a null value (or a missing column, which reads as null) is unknown, and a
// row is kept only where the whole expression is true. NOT is pushed down to the leaves when the filter is built
// (NOT a < 5 becomes a >= 5, NOT a IN (...) becomes NOT IN, De Morgan for AND / OR), which is exact under three-valued
// logic, so every evaluator below only sees leaves joined by AND and OR.
//
// Numbers compare numerically across integer and floating kinds; strings and bytes as unsigned bytes; booleans
// false < true. A leaf whose constant cannot be compared with the column's values (a string against a number) is
// an InvalidArgument naming the column and both values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakerun/format/parquet/value.h"

namespace lakerun::format {

enum class FilterOp : int8_t {
  kTrue,   // matches every row (the empty filter)
  kFalse,  // matches no row (NOT TRUE, IN ())
  kEq, kNe, kLt, kLe, kGt, kGe,
  kIn, kNotIn,
  kIsNull, kIsNotNull,
  kAnd, kOr,
};

const char* ToString(FilterOp op);

class Filter {
 public:
  /// Matches every row.
  Filter() = default;
  /// `column op value` for kEq ... kGe. A null value is an InvalidArgument (use IsNull).
  static Filter Compare(std::string column, FilterOp op, parquet::Value value);
  static Filter In(std::string column, std::vector<parquet::Value> values);
  static Filter NotIn(std::string column, std::vector<parquet::Value> values);
  static Filter IsNull(std::string column);
  static Filter IsNotNull(std::string column);
  /// Conjunction (an empty list matches every row); nested ANDs are flattened.
  static Filter And(std::vector<Filter> children);
  static Filter Or(std::vector<Filter> children);
  static Filter Not(const Filter& child);

  /// Parses SQL-like text:
  ///   expr    := or
  ///   or      := and ("or" and)*          and := unary ("and" unary)*
  ///   unary   := "not" unary | "(" expr ")" | leaf
  ///   leaf    := column op literal | column ["not"] "in" "(" literal ("," literal)* ")" | column "is" ["not"] "null"
  ///   op      := = == != <> < <= > >=
  ///   column  := name | `any name` (back-quoted, `` for a back quote inside); a dotted name is a nested leaf path
  ///   literal := integer | decimal number | 'string' ('' for a quote) | true | false
  /// Keywords are case-insensitive. Errors are InvalidArgument naming the text and the offset at fault.
  static Filter Parse(std::string_view text);

  FilterOp op() const { return op_; }
  bool is_true() const { return op_ == FilterOp::kTrue; }
  bool is_false() const { return op_ == FilterOp::kFalse; }
  bool is_leaf() const {
    return op_ != FilterOp::kTrue && op_ != FilterOp::kFalse && op_ != FilterOp::kAnd && op_ != FilterOp::kOr;
  }
  /// Leaves: the column (a top-level name, or a dotted path of a nested leaf).
  const std::string& column() const { return column_; }
  /// Comparisons: one value; kIn / kNotIn: the set; null tests: none.
  const std::vector<parquet::Value>& values() const { return values_; }
  const parquet::Value& value() const { return values_.at(0); }
  /// kAnd / kOr: the operands.
  const std::vector<Filter>& children() const { return children_; }

  /// Every column a leaf names, once each, in first-use order.
  std::vector<std::string> Columns() const;
  /// Whether some leaf names `column`.
  bool References(const std::string& column) const;
  /// The same filter with every leaf's constants replaced by `convert(column, value)` (e.g. an ISO date string
  /// to days for a date column); leaves keep their shape.
  Filter MapValues(const std::function<parquet::Value(const std::string&, const parquet::Value&)>& convert) const;
  /// Splits a conjunction: the operands of a top-level AND, or {this} (empty for kTrue).
  std::vector<Filter> Conjuncts() const;
  /// Parseable text, e.g. "(`label` < 5 AND `split` = 'train')".
  std::string ToString() const;

  bool operator==(const Filter& o) const;
  bool operator!=(const Filter& o) const { return !(*this == o); }

 private:
  FilterOp op_ = FilterOp::kTrue;
  std::string column_;
  std::vector<parquet::Value> values_;
  std::vector<Filter> children_;
};

/// What is known about one column over a set of rows (a file, a row group, a partition): bounds of its non-null
/// values and its null count. Absent members are unknown.
struct ColumnStatistics {
  std::optional<parquet::Value> min;
  std::optional<parquet::Value> max;
  std::optional<int64_t> null_count;
  /// Every row is null (what null_count == num_rows says, also where the row count is unknown).
  bool all_null = false;

  /// A column holding `value` on every row (a partition value): min == max == value and no null, or all null.
  static ColumnStatistics Constant(const parquet::Value& value);
};

/// The statistics of a set of rows: `num_rows` when known, and a lookup from column to what is known of it
/// (std::nullopt: nothing). A constant column (a partition value) is ColumnStatistics::Constant.
struct StatisticsView {
  std::optional<int64_t> num_rows;
  std::function<std::optional<ColumnStatistics>(const std::string& column)> column;
};

/// False only when the statistics prove that no row satisfies `filter` (pruning); true otherwise.
bool MayMatch(const Filter& filter, const StatisticsView& stats);

/// Whether one row satisfies `filter`; `value_of(column)` returns the row's value (null when absent).
bool Matches(const Filter& filter, const std::function<parquet::Value(const std::string&)>& value_of);

/// A column of `rows` values for vectorised evaluation (EvaluateRows). Fixed-width types read `values` (rows
/// entries of the type); kBytes reads `views` when set, else `offsets` (rows + 1 entries) into `values`.
/// `validity` (rows entries, 0 = null) may be nullptr: no nulls.
struct ColumnVector {
  enum class Type : int8_t { kBool, kInt8, kInt16, kInt32, kInt64, kUInt8, kFloat, kDouble, kBytes };
  Type type = Type::kInt64;
  const void* values = nullptr;
  const int64_t* offsets = nullptr;
  const std::string_view* views = nullptr;
  const uint8_t* validity = nullptr;
};

/// Evaluates `filter` on `rows` rows: keep[i] = 1 where row i satisfies it, else 0. `column(name)` gives each
/// referenced column. Comparisons run as typed loops (no per-row Values).
void EvaluateRows(const Filter& filter, int64_t rows, const std::function<ColumnVector(const std::string&)>& column,
                  uint8_t* keep);

}  // namespace lakerun::format
