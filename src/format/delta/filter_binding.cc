// Filters against a Delta snapshot: binding constants to column types, and what the log says of one file
// (partition values and per-file stats) as a StatisticsView.
#include <cmath>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/values.h"

namespace lakerun::delta {
namespace {

namespace pq = lakerun::parquet;
using format::ColumnStatistics;
using format::StatisticsView;
using nlohmann::json;
using pq::Value;

bool IsNumber(const Value& v) {
  return v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kFloat || v.kind() == Value::Kind::kDouble;
}

// A constant of a filter on a column of `type`, in the form readers compare with (values.h), except decimals,
// which filters compare as numbers (the unscaled value divided by 10^scale).
Value BindConstant(const Value& v, const DataType& type, const std::string& column, const std::string& where) {
  auto refuse = [&](const char* want) {
    LAKERUN_THROW(InvalidArgument, where, ": filter on column '", column, "' of type ", TypeName(type),
                  " compares with ", v.ToString(), "; expected ", want);
  };
  switch (type.kind) {
    case TypeKind::kDate:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampNtz:
      if (v.kind() == Value::Kind::kString) {
        try {
          return ParsePartitionValue(v.as_string(), type, StrCat("filter on column '", column, "'"));
        } catch (const CorruptDataError& e) {
          LAKERUN_THROW(InvalidArgument, where, ": ", e.what());
        }
      }
      if (v.kind() != Value::Kind::kInt) {
        refuse(type.kind == TypeKind::kDate ? "days since 1970-01-01 or 'YYYY-MM-DD'"
                                            : "microseconds since the epoch or an ISO-8601 string");
      }
      return v;
    case TypeKind::kString:
    case TypeKind::kBinary:
      if (v.kind() != Value::Kind::kString && v.kind() != Value::Kind::kBytes) refuse("a string");
      return v;
    case TypeKind::kBoolean:
      if (v.kind() != Value::Kind::kBool) refuse("true or false");
      return v;
    case TypeKind::kStruct:
    case TypeKind::kArray:
    case TypeKind::kMap:
      LAKERUN_THROW(InvalidArgument, where, ": filter on column '", column, "' of type ", TypeName(type),
                    "; only primitive columns (or struct leaves, as a.b) can be filtered");
    default:
      if (!IsNumber(v)) refuse("a number");
      return v;
  }
}

// The primitive field a filter column names: a top-level field, or a dotted path through structs.
const StructField* ResolvePath(const DataType& schema, const std::string& column) {
  if (const StructField* f = schema.FindField(column)) return f;
  const size_t dot = column.find('.');
  if (dot == std::string::npos) return nullptr;
  const StructField* head = schema.FindField(column.substr(0, dot));
  if (head == nullptr || head->type->kind != TypeKind::kStruct) return nullptr;
  return ResolvePath(*head->type, column.substr(dot + 1));
}

// Stats JSON of a file parsed on first use (a file's stats are parsed only when a filter needs a data column).
class LazyStats {
 public:
  explicit LazyStats(const std::optional<std::string>& text) : text_(text) {}

  const json* Get() {
    if (!parsed_) {
      parsed_ = true;
      if (text_) {
        json j = json::parse(*text_, nullptr, false);
        if (!j.is_discarded() && j.is_object()) stats_ = std::move(j);
      }
    }
    return stats_ ? &*stats_ : nullptr;
  }

  // The entry of a (dotted, physical) column path in one stats section, or nullptr.
  const json* Find(const char* section, const std::vector<std::string>& path) {
    const json* node = Get();
    if (node == nullptr) return nullptr;
    auto it = node->find(section);
    if (it == node->end()) return nullptr;
    node = &*it;
    for (const std::string& key : path) {
      if (!node->is_object()) return nullptr;
      auto next = node->find(key);
      if (next == node->end()) return nullptr;
      node = &*next;
    }
    return node;
  }

 private:
  const std::optional<std::string>& text_;
  bool parsed_ = false;
  std::optional<json> stats_;
};

// Physical key path of a logical column path in the stats (physical names under column mapping).
std::vector<std::string> StatsPath(const Snapshot& s, const std::string& column) {
  std::vector<std::string> path;
  const DataType* type = s.metadata.schema.get();
  std::string rest = column;
  while (type != nullptr) {
    const StructField* f = type->FindField(rest);
    std::string head = rest, tail;
    if (f == nullptr) {
      const size_t dot = rest.find('.');
      if (dot == std::string::npos) return {};
      head = rest.substr(0, dot);
      tail = rest.substr(dot + 1);
      f = type->FindField(head);
      if (f == nullptr) return {};
    }
    path.push_back(s.column_mapping_mode() == ColumnMappingMode::kNone ? f->name : f->PhysicalName());
    if (tail.empty()) return path;
    type = f->type->kind == TypeKind::kStruct ? f->type.get() : nullptr;
    rest = tail;
  }
  return {};
}

// Decimals are compared as numbers by filters: the unscaled integer over 10^scale.
Value AsFilterNumber(const Value& v, const DataType& type) {
  if (type.kind != TypeKind::kDecimal || v.kind() != Value::Kind::kInt) return v;
  return Value::Double(static_cast<double>(v.as_int()) / std::pow(10.0, type.scale));
}

}  // namespace

const StructField* FindFilterColumn(const Snapshot& snapshot, const std::string& column) {
  return ResolvePath(*snapshot.metadata.schema, column);
}

Filter BindFilter(const Snapshot& snapshot, const Filter& filter) {
  const std::string where = snapshot.Describe();
  return filter.MapValues([&](const std::string& column, const Value& v) {
    const StructField* field = FindFilterColumn(snapshot, column);
    LAKERUN_CHECK(field != nullptr, where, ": filter on unknown column '", column, "' (schema: ",
                  TypeName(*snapshot.metadata.schema), ")");
    return BindConstant(v, *field->type, column, where);
  });
}

Value FilterValue(const Value& v, const DataType& type) { return AsFilterNumber(v, type); }

bool FileMayMatch(const Snapshot& s, const AddFile& file, const Filter& filter) {
  if (filter.is_true()) return true;
  LazyStats stats(file.stats);
  StatisticsView view;
  if (const json* n = stats.Find("numRecords", {}); n != nullptr && n->is_number_integer()) {
    view.num_rows = n->get<int64_t>();
  }
  const auto& partitions = s.metadata.partition_columns;
  view.column = [&](const std::string& column) -> std::optional<ColumnStatistics> {
    const StructField* field = FindFilterColumn(s, column);
    if (field == nullptr) return std::nullopt;
    if (std::find(partitions.begin(), partitions.end(), column) != partitions.end()) {
      const Value v = AsFilterNumber(PartitionValue(s, file, *field), *field->type);
      if (v.is_null()) return ColumnStatistics{std::nullopt, std::nullopt, view.num_rows.value_or(1)};
      return ColumnStatistics{v, v, 0};
    }
    if (!field->type->IsPrimitive()) return std::nullopt;
    const std::vector<std::string> path = StatsPath(s, column);
    if (path.empty()) return std::nullopt;
    ColumnStatistics out;
    if (const json* n = stats.Find("nullCount", path); n != nullptr && n->is_number_integer()) {
      out.null_count = n->get<int64_t>();
    }
    auto bound = [&](const char* section) -> std::optional<Value> {
      const json* m = stats.Find(section, path);
      if (m == nullptr) return std::nullopt;
      std::optional<Value> v = ParseStatsValue(m->dump(), *field->type);
      if (v) v = AsFilterNumber(*v, *field->type);
      return v;
    };
    out.min = bound("minValues");
    out.max = bound("maxValues");
    const TypeKind kind = field->type->kind;
    if (out.max && (kind == TypeKind::kTimestamp || kind == TypeKind::kTimestampNtz)) {
      out.max = Value::Int(out.max->as_int() + 999);  // stats are truncated to milliseconds
    }
    return out;
  };
  return format::MayMatch(filter, view);
}

}  // namespace lakerun::delta
