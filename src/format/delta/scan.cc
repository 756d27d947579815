// Scanning a snapshot: pruning, Parquet reads, deletion vectors, partition values, column mapping.
#include "lakerun/format/delta/scan.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/values.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::delta {
namespace {

namespace pq = lakerun::parquet;
using pq::Value;
using nlohmann::json;

bool IsPartition(const Snapshot& s, const std::string& name) {
  const auto& p = s.metadata.partition_columns;
  return std::find(p.begin(), p.end(), name) != p.end();
}

const StructField& FieldOrThrow(const Snapshot& s, const std::string& name) {
  const StructField* f = s.metadata.schema->FindField(name);
  LAKERUN_CHECK(f != nullptr, s.Describe(), ": unknown column '", name, "'");
  return *f;
}

std::string LogKey(const Snapshot& s, const StructField& f) {
  return s.column_mapping_mode() == ColumnMappingMode::kNone ? f.name : f.PhysicalName();
}


// INT96 (nanoseconds of day + Julian day) to microseconds since the epoch.
int64_t Int96ToMicros(const std::string& b) {
  uint64_t nanos = 0;
  for (int i = 7; i >= 0; --i) nanos = (nanos << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  uint32_t julian = 0;
  for (int i = 11; i >= 8; --i) julian = (julian << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return (static_cast<int64_t>(julian) - 2440588) * 86400000000ll + static_cast<int64_t>(nanos / 1000);
}

// The node holding one element of a list node, one key or one value of a map node (nullptr: not such a node).
const pq::SchemaNode* ElementNode(const pq::SchemaNode* node) {
  const pq::SchemaNode* element = nullptr;
  bool element_is_repeated = false;
  if (node == nullptr || !pq::IsListNode(*node, &element, &element_is_repeated)) return nullptr;
  return element;
}
const pq::SchemaNode* MapChild(const pq::SchemaNode* node, size_t index) {
  const pq::SchemaNode* key_value = nullptr;
  if (node == nullptr || !pq::IsMapNode(*node, &key_value) || key_value->children.size() <= index) return nullptr;
  return &key_value->children[index];
}

// A stored timestamp (or date, widened to a timestamp) in microseconds: Delta's unit, whatever the file stores.
Value TimestampMicros(const Value& v, const pq::SchemaNode* leaf) {
  if (v.kind() == Value::Kind::kBytes && v.as_string().size() == 12) return Value::Int(Int96ToMicros(v.as_string()));
  if (v.kind() != Value::Kind::kInt || leaf == nullptr) return v;
  const pq::LogicalType& l = leaf->logical_type;
  if (l.kind == pq::LogicalType::Kind::kDate) return Value::Int(v.as_int() * 86400000000LL);
  if (l.kind != pq::LogicalType::Kind::kTimestamp) return v;
  if (l.unit == pq::TimeUnit::kMillis) return Value::Int(v.as_int() * 1000);
  if (l.unit == pq::TimeUnit::kNanos) {  // floor division: the protocol's timestamps hold microseconds
    const int64_t n = v.as_int();
    return Value::Int(n / 1000 - (n % 1000 < 0 ? 1 : 0));
  }
  return v;
}

// A stored decimal (or integer, widened to a decimal) as its unscaled value at the table's scale.
Value DecimalUnscaled(const Value& v, const DataType& type, const pq::SchemaNode* leaf) {
  Value out = v;
  if (v.kind() == Value::Kind::kBytes && !v.as_string().empty() && v.as_string().size() <= 8) {
    const std::string& b = v.as_string();
    int64_t x = static_cast<signed char>(b[0]);
    for (size_t i = 1; i < b.size(); ++i) x = x * 256 + static_cast<unsigned char>(b[i]);
    out = Value::Int(x);
  }
  if (out.kind() != Value::Kind::kInt || leaf == nullptr) return out;
  const bool is_decimal = leaf->logical_type.kind == pq::LogicalType::Kind::kDecimal;
  int64_t x = out.as_int();
  for (int s = is_decimal ? leaf->logical_type.scale : 0; s < type.scale; ++s) {
    if (__builtin_mul_overflow(x, 10, &x)) return v;  // left as stored: printed as the file holds it
  }
  return Value::Int(x);
}

// A file's value of a logical type, with struct fields renamed back to logical names. `node`: the file's schema
// node holding the value (nullptr when unknown), which says the stored unit of timestamps and scale of decimals.
Value FromPhysical(const Value& v, const DataType& type, bool mapped, const pq::SchemaNode* node) {
  if (v.is_null()) return v;
  switch (type.kind) {
    case TypeKind::kStruct: {
      if (v.kind() != Value::Kind::kStruct) return v;
      std::vector<std::pair<std::string, Value>> fields;
      for (const auto& f : type.fields) {
        const std::string& name = mapped ? f.PhysicalName() : f.name;
        const Value* child = v.Field(name);
        const pq::SchemaNode* child_node = nullptr;
        for (size_t i = 0; node != nullptr && i < node->children.size() && child_node == nullptr; ++i) {
          if (node->children[i].name == name) child_node = &node->children[i];
        }
        fields.emplace_back(f.name, child ? FromPhysical(*child, *f.type, mapped, child_node) : Value::Null());
      }
      return Value::Struct(std::move(fields));
    }
    case TypeKind::kArray: {
      if (v.kind() != Value::Kind::kList) return v;
      std::vector<Value> items;
      items.reserve(v.children().size());
      for (const auto& item : v.children()) items.push_back(FromPhysical(item, *type.element, mapped, ElementNode(node)));
      return Value::List(std::move(items));
    }
    case TypeKind::kMap: {
      if (v.kind() != Value::Kind::kMap) return v;
      std::vector<std::pair<Value, Value>> entries;
      for (size_t i = 0; i < v.map_size(); ++i) {
        entries.emplace_back(FromPhysical(v.map_key(i), *type.key, mapped, MapChild(node, 0)),
                             FromPhysical(v.map_value(i), *type.value, mapped, MapChild(node, 1)));
      }
      return Value::Map(std::move(entries));
    }
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampNtz: return TimestampMicros(v, node);
    case TypeKind::kDecimal: return DecimalUnscaled(v, type, node);
    case TypeKind::kDouble:  // widened from an integer or a float: the double value, as the loader reads it
      return v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kFloat ? Value::Double(v.as_double()) : v;
    case TypeKind::kBinary:
      return v.kind() == Value::Kind::kString ? Value::Bytes(v.as_string()) : v;
    default:
      return v;
  }
}

// Logical column -> name of the file's top-level field holding it; partition columns and columns the file lacks
// are left out (they read as the partition value / null).
std::map<const StructField*, std::string> MapColumns(const Snapshot& s, const pq::SchemaNode& root,
                                                     const std::vector<const StructField*>& needed,
                                                     const std::string& context) {
  const ColumnMappingMode mode = s.column_mapping_mode();
  std::map<const StructField*, std::string> source;
  bool file_has_ids = false;
  for (const auto& child : root.children) file_has_ids |= child.field_id.has_value();
  for (const StructField* f : needed) {
    if (IsPartition(s, f->name)) continue;
    for (const auto& child : root.children) {
      bool match = false;
      if (mode == ColumnMappingMode::kId) {
        LAKERUN_CHECK_AS(CorruptDataError, file_has_ids, context,
                         ": the table uses column mapping mode 'id' but the file has no Parquet field ids");
        match = f->field_id && child.field_id == f->field_id;
      } else {
        match = child.name == (mode == ColumnMappingMode::kName ? f->PhysicalName() : f->name);
      }
      if (match) {
        source[f] = child.name;
        break;
      }
    }
  }
  return source;
}

}  // namespace

Value PartitionValue(const Snapshot& s, const AddFile& file, const StructField& f) {
  auto it = file.partition_values.find(LogKey(s, f));
  const std::optional<std::string> text = it == file.partition_values.end() ? std::nullopt : it->second;
  return ParsePartitionValue(text, *f.type, StrCat(s.Describe(), " file ", file.path, " partition column ", f.name));
}

std::vector<AddFile> PruneFiles(const Snapshot& snapshot, const Filter& filter) {
  const FilePruner pruner(snapshot, BindFilter(snapshot, filter));
  std::vector<AddFile> out;
  for (const auto& f : snapshot.files) {
    if (pruner.MayMatch(f)) out.push_back(f);
  }
  return out;
}

TableScan::TableScan(const DeltaTable& table, const Snapshot& snapshot, ScanOptions options)
    : table_(table), snapshot_(snapshot), options_(std::move(options)) {
  LAKERUN_CHECK(options_.batch_rows > 0, "ScanOptions::batch_rows must be positive");
  if (options_.columns.empty()) {
    for (const auto& f : snapshot.metadata.schema->fields) columns_.push_back(&f);
  } else {
    for (const auto& name : options_.columns) columns_.push_back(&FieldOrThrow(snapshot, name));
  }
  options_.filter = BindFilter(snapshot, options_.filter);
  const FilePruner pruner(snapshot, options_.filter);
  for (const auto& f : snapshot.files) {
    if (pruner.MayMatch(f)) files_.push_back(f);
  }
}

std::optional<FileBatch> TableScan::Next() {
  if (next_ >= files_.size()) return std::nullopt;
  return ReadFile(files_[next_++]);
}

std::vector<FileScanTask> PlanScan(const DeltaTable& table, const Snapshot& snapshot, const ScanOptions& options) {
  TableScan scan(table, snapshot, options);  // validates columns and filters, prunes files
  std::vector<const StructField*> columns;
  if (options.columns.empty()) {
    for (const auto& f : snapshot.metadata.schema->fields) columns.push_back(&f);
  } else {
    for (const auto& name : options.columns) columns.push_back(&FieldOrThrow(snapshot, name));
  }
  std::vector<FileScanTask> tasks;
  for (const AddFile& file : scan.files()) {
    FileScanTask task;
    task.file = file;
    task.path = snapshot.DataFilePath(file);
    const std::string context = StrCat(snapshot.Describe(), " data file ", task.path);
    std::map<const StructField*, std::string> source;
    if (snapshot.column_mapping_mode() == ColumnMappingMode::kId) {
      std::unique_ptr<pq::ParquetFile> pf;
      try {
        pf = pq::ParquetFile::Open(table.fs(), task.path);
      } catch (const IoError& e) {
        LAKERUN_THROW(IoError, context, " (add path ", file.path, "): cannot read the data file: ", e.what());
      }
      source = MapColumns(snapshot, pf->schema().root(), columns, context);
    } else {
      // Without id mapping the file column is the (physical) name; a column the file lacks reads as null.
      for (const StructField* f : columns) {
        if (!IsPartition(snapshot, f->name)) source[f] = LogKey(snapshot, *f);
      }
    }
    for (const StructField* f : columns) {
      auto it = source.find(f);
      task.columns.emplace_back(f->name, it == source.end() ? std::nullopt : std::optional<std::string>(it->second));
      if (IsPartition(snapshot, f->name)) task.partition_values[f->name] = PartitionValue(snapshot, file, *f);
    }
    if (file.deletion_vector) {
      task.deleted_rows = LoadDeletionVector(table.fs(), table.path(), *file.deletion_vector, context);
    }
    tasks.push_back(std::move(task));
  }
  return tasks;
}

std::vector<Value> TableScan::ReadAll() {
  std::vector<Value> out;
  while (auto batch = Next()) {
    for (auto& r : batch->rows) out.push_back(std::move(r));
  }
  return out;
}

FileBatch TableScan::ReadFile(const AddFile& file) {
  const Snapshot& s = snapshot_;
  const ColumnMappingMode mode = s.column_mapping_mode();
  const bool mapped = mode != ColumnMappingMode::kNone;
  FileBatch batch;
  batch.file = &file;
  batch.path = s.DataFilePath(file);
  const std::string context = StrCat(s.Describe(), " data file ", batch.path);

  // Every column a filter or the caller needs.
  std::vector<const StructField*> needed = columns_;
  for (const std::string& column : options_.filter.Columns()) {
    // A top-level field, or the struct field a dotted path starts with.
    const bool top_level = s.metadata.schema->FindField(column) != nullptr;
    const StructField* field = &FieldOrThrow(s, top_level ? column : column.substr(0, column.find('.')));
    if (std::find(needed.begin(), needed.end(), field) == needed.end()) needed.push_back(field);
  }

  std::unique_ptr<pq::ParquetFile> pf;
  try {
    pf = pq::ParquetFile::Open(table_.fs(), batch.path);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, context, " (add path ", file.path, "): cannot read the data file: ", e.what());
  } catch (const CorruptDataError& e) {
    LAKERUN_THROW(CorruptDataError, context, ": ", e.what());
  }
  batch.rows_in_file = pf->num_rows();
  const pq::SchemaNode& root = pf->schema().root();

  // Logical column -> name of the file's top-level field holding it (absent: read as null).
  const std::map<const StructField*, std::string> source = MapColumns(s, root, needed, context);

  std::vector<uint64_t> deleted;
  if (file.deletion_vector) {
    deleted = LoadDeletionVector(table_.fs(), table_.path(), *file.deletion_vector, context);
  }
  std::map<const StructField*, Value> partition_values;
  for (const StructField* f : needed) {
    if (IsPartition(s, f->name)) partition_values[f] = PartitionValue(s, file, *f);
  }

  auto emit = [&](const Value* physical_row, int64_t position) {
    if (!deleted.empty() && std::binary_search(deleted.begin(), deleted.end(), static_cast<uint64_t>(position))) {
      ++batch.deleted;
      return;
    }
    auto value_of = [&](const StructField* f) -> Value {
      if (auto it = partition_values.find(f); it != partition_values.end()) return it->second;
      auto src = source.find(f);
      if (src == source.end() || physical_row == nullptr) return Value::Null();
      const Value* v = physical_row->Field(src->second);
      const pq::SchemaNode* node = nullptr;
      for (const pq::SchemaNode& child : root.children) {
        if (child.name == src->second) node = &child;
      }
      return v ? FromPhysical(*v, *f->type, mapped, node) : Value::Null();
    };
    // A filter column: a top-level field, or a dotted path into a struct field's value.
    auto filter_value = [&](const std::string& column) -> Value {
      if (const StructField* f = s.metadata.schema->FindField(column)) return FilterValue(value_of(f), *f->type);
      const size_t dot = column.find('.');
      Value v = value_of(&FieldOrThrow(s, column.substr(0, dot)));
      for (size_t begin = dot + 1; !v.is_null();) {
        const size_t end = column.find('.', begin);
        const Value* child = v.Field(column.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
        v = child != nullptr ? *child : Value::Null();
        if (end == std::string::npos) break;
        begin = end + 1;
      }
      const StructField* leaf = FindFilterColumn(s, column);
      return leaf != nullptr ? FilterValue(v, *leaf->type) : v;
    };
    if (!format::Matches(options_.filter, filter_value)) return;
    std::vector<std::pair<std::string, Value>> fields;
    fields.reserve(columns_.size());
    for (const StructField* f : columns_) fields.emplace_back(f->name, value_of(f));
    batch.rows.push_back(Value::Struct(std::move(fields)));
  };

  int64_t position = 0;
  try {
    if (source.empty()) {
      for (; position < batch.rows_in_file; ++position) emit(nullptr, position);
    } else {
      pq::TableReadOptions read;
      for (const auto& [f, name] : source) {
        if (std::find(read.columns.begin(), read.columns.end(), name) == read.columns.end()) {
          read.columns.push_back(name);
        }
      }
      pq::TableReader reader(*pf, read);
      while (true) {
        std::vector<Value> rows = reader.ReadRows(options_.batch_rows);
        if (rows.empty()) break;
        for (const auto& r : rows) emit(&r, position++);
      }
    }
  } catch (const CorruptDataError& e) {
    LAKERUN_THROW(CorruptDataError, context, ": ", e.what());
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, context, ": ", e.what());
  }
  LAKERUN_CHECK_AS(CorruptDataError, position == batch.rows_in_file, context, ": read ", position,
                   " rows, the footer says ", batch.rows_in_file);
  if (!deleted.empty()) {
    LAKERUN_CHECK_AS(CorruptDataError, deleted.back() < static_cast<uint64_t>(batch.rows_in_file), context,
                     ": deletion vector deletes row ", deleted.back(), " of a file with ", batch.rows_in_file,
                     " rows");
  }
  return batch;
}

}  // namespace lakerun::delta
