// Data files for Delta appends: schema mapping, partitioning, statistics.
#include "lakerun/format/delta/writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "format/delta/uri.h"
#include "lakerun/base/error.h"
#include "lakerun/format/delta/values.h"

namespace lakerun::delta {
namespace {

namespace pq = lakerun::parquet;
using pq::Value;
using nlohmann::json;

constexpr size_t kStringStatsPrefix = 32;

bool Mapped(const Snapshot& s) { return s.column_mapping_mode() != ColumnMappingMode::kNone; }

pq::SchemaNode TypeNode(const std::string& name, const DataType& type, bool nullable, bool mapped,
                        const std::string& context) {
  const auto rep = nullable ? pq::Repetition::kOptional : pq::Repetition::kRequired;
  using pq::LogicalType;
  using pq::PhysicalType;
  switch (type.kind) {
    case TypeKind::kLong:
      return pq::Leaf(name, PhysicalType::kInt64, rep);
    case TypeKind::kInteger:
      return pq::Leaf(name, PhysicalType::kInt32, rep);
    case TypeKind::kShort:
      return pq::Leaf(name, PhysicalType::kInt32, rep, LogicalType::Int(16, true));
    case TypeKind::kByte:
      return pq::Leaf(name, PhysicalType::kInt32, rep, LogicalType::Int(8, true));
    case TypeKind::kFloat:
      return pq::Leaf(name, PhysicalType::kFloat, rep);
    case TypeKind::kDouble:
      return pq::Leaf(name, PhysicalType::kDouble, rep);
    case TypeKind::kBoolean:
      return pq::Leaf(name, PhysicalType::kBoolean, rep);
    case TypeKind::kString:
      return pq::Leaf(name, PhysicalType::kByteArray, rep, LogicalType::String());
    case TypeKind::kBinary:
      return pq::Leaf(name, PhysicalType::kByteArray, rep);
    case TypeKind::kDate:
      return pq::Leaf(name, PhysicalType::kInt32, rep, LogicalType::Date());
    case TypeKind::kTimestamp:
      return pq::Leaf(name, PhysicalType::kInt64, rep, LogicalType::Timestamp(pq::TimeUnit::kMicros, true));
    case TypeKind::kTimestampNtz:
      return pq::Leaf(name, PhysicalType::kInt64, rep, LogicalType::Timestamp(pq::TimeUnit::kMicros, false));
    case TypeKind::kDecimal:
      LAKERUN_CHECK_AS(NotImplemented, type.precision <= 18, context, ": column '", name, "' of type ",
                       TypeName(type), ": decimals wider than 18 digits cannot be written");
      return pq::Leaf(name, type.precision <= 9 ? PhysicalType::kInt32 : PhysicalType::kInt64, rep,
                      LogicalType::Decimal(type.precision, type.scale));
    case TypeKind::kStruct: {
      std::vector<pq::SchemaNode> children;
      for (const auto& f : type.fields) {
        pq::SchemaNode child = TypeNode(mapped ? f.PhysicalName() : f.name, *f.type, f.nullable, mapped, context);
        if (mapped) child.field_id = f.field_id;
        children.push_back(std::move(child));
      }
      return pq::Group(name, std::move(children), rep);
    }
    case TypeKind::kArray:
      return pq::ListOf(name, TypeNode("element", *type.element, type.contains_null, mapped, context), rep);
    case TypeKind::kMap:
      return pq::MapOf(name, TypeNode("key", *type.key, false, mapped, context),
                       TypeNode("value", *type.value, type.value_contains_null, mapped, context), rep);
    default:
      LAKERUN_THROW(NotImplemented, context, ": column '", name, "' of type ", TypeName(type),
                    " cannot be written by lakerun");
  }
}

// Coerces a logical value to the kinds the Parquet leaf expects and renames struct fields to physical names.
Value ToPhysical(const Value& v, const DataType& type, bool mapped, const std::string& where) {
  if (v.is_null()) return v;
  switch (type.kind) {
    case TypeKind::kFloat:
      return Value::Float(static_cast<float>(v.as_double()));
    case TypeKind::kDouble:
      return Value::Double(v.as_double());
    case TypeKind::kStruct: {
      LAKERUN_CHECK(v.kind() == Value::Kind::kStruct, where, ": expected a struct, got ", v.ToString().substr(0, 80));
      std::vector<std::pair<std::string, Value>> fields;
      for (const auto& f : type.fields) {
        const Value* child = v.Field(f.name);
        fields.emplace_back(mapped ? f.PhysicalName() : f.name,
                            child ? ToPhysical(*child, *f.type, mapped, where + "." + f.name) : Value::Null());
      }
      return Value::Struct(std::move(fields));
    }
    case TypeKind::kArray: {
      LAKERUN_CHECK(v.kind() == Value::Kind::kList, where, ": expected a list, got ", v.ToString().substr(0, 80));
      std::vector<Value> items;
      items.reserve(v.children().size());
      for (const auto& item : v.children()) items.push_back(ToPhysical(item, *type.element, mapped, where));
      return Value::List(std::move(items));
    }
    case TypeKind::kMap: {
      LAKERUN_CHECK(v.kind() == Value::Kind::kMap, where, ": expected a map, got ", v.ToString().substr(0, 80));
      std::vector<std::pair<Value, Value>> entries;
      for (size_t i = 0; i < v.map_size(); ++i) {
        entries.emplace_back(ToPhysical(v.map_key(i), *type.key, mapped, where),
                             ToPhysical(v.map_value(i), *type.value, mapped, where));
      }
      return Value::Map(std::move(entries));
    }
    default:
      return v;
  }
}

// Statistics of one top-level primitive column over a file's rows.
struct ColumnStats {
  int64_t nulls = 0;
  std::optional<Value> min, max;
};

std::string StatsJson(int64_t num_records, const std::vector<const StructField*>& columns,
                      const std::vector<ColumnStats>& stats, bool mapped) {
  json min = json::object(), max = json::object(), nulls = json::object();
  for (size_t i = 0; i < columns.size(); ++i) {
    const StructField& f = *columns[i];
    const std::string key = mapped ? f.PhysicalName() : f.name;
    if (!f.type->IsPrimitive()) continue;
    nulls[key] = stats[i].nulls;
    if (!stats[i].min) continue;
    Value lo = *stats[i].min, hi = *stats[i].max;
    bool keep_max = true;
    if (f.type->kind == TypeKind::kString) {
      // A prefix is still a lower bound; a cut maximum is not an upper bound, so long maxima are left out.
      if (lo.as_string().size() > kStringStatsPrefix) lo = Value::String(lo.as_string().substr(0, kStringStatsPrefix));
      keep_max = hi.as_string().size() <= kStringStatsPrefix;
    }
    if (auto s = FormatStatsValue(lo, *f.type)) min[key] = json::parse(*s);
    if (keep_max) {
      if (auto s = FormatStatsValue(hi, *f.type)) max[key] = json::parse(*s);
    }
  }
  return json{{"numRecords", num_records}, {"minValues", min}, {"maxValues", max}, {"nullCount", nulls}}.dump();
}

std::string CodecLabel(pq::Codec codec) {
  std::string s = pq::ToString(codec);
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

}  // namespace

parquet::Schema DataFileSchema(const Snapshot& snapshot) {
  const bool mapped = Mapped(snapshot);
  const auto& parts = snapshot.metadata.partition_columns;
  std::vector<pq::SchemaNode> fields;
  for (const auto& f : snapshot.metadata.schema->fields) {
    if (std::find(parts.begin(), parts.end(), f.name) != parts.end()) continue;
    if (f.type->kind == TypeKind::kVoid) continue;  // never materialized (PROTOCOL.md, "Void Type")
    pq::SchemaNode node = TypeNode(mapped ? f.PhysicalName() : f.name, *f.type, f.nullable, mapped,
                                   snapshot.Describe());
    if (mapped) node.field_id = f.field_id;
    fields.push_back(std::move(node));
  }
  LAKERUN_CHECK(!fields.empty(), snapshot.Describe(), ": the table has no data columns to write");
  return pq::Schema::FromFields(std::move(fields));
}

std::vector<AddFile> WriteDataFiles(const DeltaTable& table, const Snapshot& snapshot, const std::vector<Value>& rows,
                                    const WriteOptions& options) {
  const std::string context = snapshot.Describe();
  const bool mapped = Mapped(snapshot);
  const DataType& schema = *snapshot.metadata.schema;
  const auto& part_names = snapshot.metadata.partition_columns;
  std::vector<const StructField*> part_fields, data_fields;
  for (const auto& f : schema.fields) {
    if (std::find(part_names.begin(), part_names.end(), f.name) != part_names.end()) {
      part_fields.push_back(&f);
    } else if (f.type->kind != TypeKind::kVoid) {
      data_fields.push_back(&f);
    }
  }
  const pq::Schema file_schema = DataFileSchema(snapshot);
  pq::WriterOptions pq_options = options.parquet;
  auto codec_it = snapshot.metadata.configuration.find("delta.parquet.compression.codec");
  pq_options.codec =
      codec_it == snapshot.metadata.configuration.end() ? options.codec : pq::ParseCodec(codec_it->second);
  pq_options.tensor_shapes.clear();
  for (const auto& [column, shape] : options.tensor_shapes) {
    const StructField* f = schema.FindField(column);
    LAKERUN_CHECK(f != nullptr, context, ": tensor shape given for unknown column '", column, "'");
    pq_options.tensor_shapes[mapped ? f->PhysicalName() : f->name] = shape;
  }

  // Group row indexes by partition values (in first-seen order).
  std::map<std::vector<std::optional<std::string>>, std::vector<size_t>> groups;
  std::vector<std::vector<std::optional<std::string>>> order;
  for (size_t r = 0; r < rows.size(); ++r) {
    LAKERUN_CHECK(rows[r].kind() == Value::Kind::kStruct, context, ": row ", r, " is not a struct value");
    std::vector<std::optional<std::string>> key;
    for (const StructField* f : part_fields) {
      const Value* v = rows[r].Field(f->name);
      key.push_back(v ? FormatPartitionValue(*v, *f->type) : std::nullopt);
    }
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(r);
  }

  std::vector<AddFile> adds;
  int file_index = 0;
  for (const auto& key : order) {
    const std::vector<size_t>& members = groups.at(key);
    std::string dir;
    PartitionValues partition_values;
    for (size_t i = 0; i < part_fields.size(); ++i) {
      const std::string name = mapped ? part_fields[i]->PhysicalName() : part_fields[i]->name;
      dir += name + "=" + (key[i] ? internal::EscapePartitionValue(*key[i]) : "__HIVE_DEFAULT_PARTITION__") + "/";
      partition_values[name] = key[i];
    }
    const size_t per_file = options.max_rows_per_file > 0 ? static_cast<size_t>(options.max_rows_per_file)
                                                           : std::max<size_t>(members.size(), 1);
    for (size_t begin = 0; begin < members.size(); begin += per_file) {
      const size_t end = std::min(members.size(), begin + per_file);
      std::vector<Value> physical;
      physical.reserve(end - begin);
      std::vector<ColumnStats> stats(data_fields.size());
      for (size_t m = begin; m < end; ++m) {
        const Value& row = rows[members[m]];
        std::vector<std::pair<std::string, Value>> fields;
        for (size_t c = 0; c < data_fields.size(); ++c) {
          const StructField& f = *data_fields[c];
          const Value* v = row.Field(f.name);
          Value pv = v ? ToPhysical(*v, *f.type, mapped, StrCat(context, ": row ", members[m], " column ", f.name))
                       : Value::Null();
          if (pv.is_null()) {
            ++stats[c].nulls;
          } else if (f.type->IsPrimitive() && f.type->kind != TypeKind::kBinary &&
                     f.type->kind != TypeKind::kBoolean && !(f.type->kind == TypeKind::kDouble && std::isnan(pv.as_double())) &&
                     !(f.type->kind == TypeKind::kFloat && std::isnan(pv.as_double()))) {
            if (!stats[c].min || pq::CompareValues(pv, *stats[c].min) < 0) stats[c].min = pv;
            if (!stats[c].max || pq::CompareValues(pv, *stats[c].max) > 0) stats[c].max = pv;
          }
          fields.emplace_back(mapped ? f.PhysicalName() : f.name, std::move(pv));
        }
        physical.push_back(Value::Struct(std::move(fields)));
      }
      char index[16];
      std::snprintf(index, sizeof index, "%05d", file_index);
      const std::string relative =
          StrCat(dir, "part-", index, "-", RandomUuid(), ".c000.", CodecLabel(pq_options.codec), ".parquet");
      ++file_index;
      const std::string full = JoinPath(table.path(), relative);
      table.fs().CreateDirs(DirName(full));
      {
        pq::ParquetWriter writer(table.fs(), full, file_schema, pq_options);
        writer.WriteRows(physical);
        writer.Close();
      }
      auto info = table.fs().Stat(full);
      LAKERUN_CHECK_AS(IoError, info.has_value(), context, ": data file ", full, " vanished after writing");
      AddFile add;
      add.path = internal::PercentEncodePath(relative);
      add.partition_values = partition_values;
      add.size = static_cast<int64_t>(info->size);
      add.modification_time = info->mtime_ms;
      add.data_change = true;
      add.stats = StatsJson(static_cast<int64_t>(end - begin), data_fields, stats, mapped);
      adds.push_back(std::move(add));
    }
  }
  return adds;
}

CommitResult AppendRows(const DeltaTable& table, const std::vector<Value>& rows, const WriteOptions& options) {
  const Snapshot snapshot = table.Latest();
  CheckWritable(snapshot);
  if (options.commit.txn) {
    auto done = snapshot.TxnVersion(options.commit.txn->app_id);
    if (done && *done >= options.commit.txn->version) {
      CommitResult r;
      r.version = snapshot.version;
      r.skipped = true;
      return r;
    }
  }
  ActionSet actions;
  actions.adds = WriteDataFiles(table, snapshot, rows, options);
  CommitOptions commit = options.commit;
  commit.operation_parameters.emplace("mode", "Append");
  return Commit(table, std::move(actions), commit, snapshot.version);
}

}  // namespace lakerun::delta
