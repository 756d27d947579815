// Filters against a Delta snapshot: binding constants to column types, and what the log says of one file
// (partition values and per-file stats) as a StatisticsView.
#include <algorithm>
#include <cmath>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/file_stats.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/values.h"

namespace lakerun::delta {
namespace {

namespace pq = lakerun::parquet;
using format::ColumnStatistics;
using format::StatisticsView;
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

}  // namespace

std::vector<std::string> PhysicalColumnPath(const Snapshot& s, const std::string& column) {
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

Value FilterValue(const Value& v, const DataType& type) {
  if (type.kind != TypeKind::kDecimal || v.kind() != Value::Kind::kInt) return v;
  return Value::Double(static_cast<double>(v.as_int()) / std::pow(10.0, type.scale));  // unscaled / 10^scale
}

FilePruner::FilePruner(const Snapshot& snapshot, const Filter& bound_filter)
    : snapshot_(snapshot), filter_(bound_filter) {
  const auto& partitions = snapshot.metadata.partition_columns;
  for (const std::string& column : filter_.Columns()) {
    const StructField* field = FindFilterColumn(snapshot, column);
    if (field == nullptr) continue;
    Column c{field, std::find(partitions.begin(), partitions.end(), column) != partitions.end(), ""};
    if (!c.partition && field->type->IsPrimitive()) {
      const std::vector<std::string> path = PhysicalColumnPath(snapshot, column);
      for (size_t i = 0; i < path.size(); ++i) c.stats_key += (i ? "." : "") + path[i];
      if (!c.stats_key.empty()) stats_columns_[c.stats_key] = field->type.get();
    }
    columns_[column] = c;
  }
}

bool FilePruner::MayMatch(const AddFile& file) const {
  if (filter_.is_true()) return true;
  std::optional<FileStats> stats;  // parsed on the first question about a data column
  bool parsed = false;
  auto parse = [&]() -> const FileStats* {
    if (!parsed) {
      parsed = true;
      if (file.stats && !stats_columns_.empty()) stats = ParseFileStats(*file.stats, stats_columns_);
    }
    return stats ? &*stats : nullptr;
  };
  StatisticsView view;
  if (file.stats && !stats_columns_.empty() && parse() != nullptr) view.num_rows = stats->num_records;
  view.column = [&](const std::string& name) -> std::optional<ColumnStatistics> {
    const auto it = columns_.find(name);
    if (it == columns_.end()) return std::nullopt;
    const Column& c = it->second;
    const DataType& type = *c.field->type;
    if (c.partition) {
      return ColumnStatistics::Constant(FilterValue(PartitionValue(snapshot_, file, *c.field), type));
    }
    const FileStats* fs = c.stats_key.empty() ? nullptr : parse();
    if (fs == nullptr) return std::nullopt;
    const auto found = fs->columns.find(c.stats_key);
    if (found == fs->columns.end()) return std::nullopt;
    ColumnStatistics out{found->second.min, found->second.max, found->second.null_count};
    if (out.min) out.min = FilterValue(*out.min, type);
    if (out.max) out.max = FilterValue(*out.max, type);
    if (out.max && (type.kind == TypeKind::kTimestamp || type.kind == TypeKind::kTimestampNtz)) {
      out.max = Value::Int(out.max->as_int() + 999);  // stats are truncated to milliseconds
    }
    return out;
  };
  return format::MayMatch(filter_, view);
}

bool FileMayMatch(const Snapshot& snapshot, const AddFile& file, const Filter& bound_filter) {
  return FilePruner(snapshot, bound_filter).MayMatch(file);
}

}  // namespace lakerun::delta
