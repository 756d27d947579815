// Reading checkpoint add/remove actions column by column (see checkpoint_columns.h).
#include "format/delta/checkpoint_columns.h"

#include <algorithm>
#include <limits>

#include "lakerun/base/error.h"

namespace lakerun::delta::internal {
namespace {

namespace pq = lakerun::parquet;

enum class LeafKind { kString, kInt, kBool };

// A leaf of the checkpoint schema; column < 0 when the file lacks it (every row reads as null).
struct LeafRef {
  int column = -1;
  int16_t max_def = std::numeric_limits<int16_t>::max();
  const char* name = "";
};

// A MAP<string, string> field (partitionValues, tags).
struct MapRef {
  LeafRef key, value;
  int16_t map_def = 0;    // def level at which the map is non-null
  int16_t entry_def = 0;  // def level at which a row holds an entry
};

struct DvRef {
  int16_t dv_def = std::numeric_limits<int16_t>::max();
  LeafRef storage_type, path_or_inline_dv, offset, size_in_bytes, cardinality;
};

struct AddRef {
  int16_t action_def = 0;
  LeafRef path, size, modification_time, data_change, stats, base_row_id, default_row_commit_version;
  MapRef partition_values, tags;
  DvRef dv;
};

struct RemoveRef {
  int16_t action_def = 0;
  LeafRef path, deletion_timestamp, data_change, extended_file_metadata, size;
  MapRef partition_values;
  DvRef dv;
};

bool KindMatches(const pq::SchemaNode& leaf, LeafKind kind) {
  switch (kind) {
    case LeafKind::kString:
      return leaf.physical_type == pq::PhysicalType::kByteArray;
    case LeafKind::kInt:
      return leaf.physical_type == pq::PhysicalType::kInt32 || leaf.physical_type == pq::PhysicalType::kInt64;
    case LeafKind::kBool:
      return leaf.physical_type == pq::PhysicalType::kBoolean;
  }
  return false;
}

const pq::SchemaNode* Child(const pq::SchemaNode& group, const char* name) {
  for (const auto& c : group.children) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Binds the flat leaf `name` of `group`: false when it exists with another shape.
bool BindLeaf(const pq::SchemaNode& group, const char* name, LeafKind kind, LeafRef* out) {
  out->name = name;
  const pq::SchemaNode* node = Child(group, name);
  if (node == nullptr) return true;
  if (!node->is_leaf() || node->max_rep_level != 0 || !KindMatches(*node, kind)) return false;
  out->column = node->column_index;
  out->max_def = node->max_def_level;
  return true;
}

// Binds a MAP<string, string> child: a MAP group whose repeated key_value holds a required string key and a string
// value, not itself inside a repeated field.
bool BindMap(const pq::SchemaNode& group, const char* name, MapRef* out) {
  out->key.name = name;
  out->value.name = name;
  const pq::SchemaNode* node = Child(group, name);
  if (node == nullptr) return true;
  const pq::SchemaNode* key_value = nullptr;
  if (!node->is_group || node->max_rep_level != 0 || !pq::IsMapNode(*node, &key_value) ||
      key_value->children.size() != 2) {
    return false;
  }
  const pq::SchemaNode& key = key_value->children[0];
  const pq::SchemaNode& value = key_value->children[1];
  if (!key.is_leaf() || !value.is_leaf() || key.repetition != pq::Repetition::kRequired ||
      !KindMatches(key, LeafKind::kString) || !KindMatches(value, LeafKind::kString) || key.max_rep_level != 1) {
    return false;
  }
  out->map_def = node->max_def_level;
  out->entry_def = key_value->max_def_level;
  out->key = {key.column_index, key.max_def_level, name};
  out->value = {value.column_index, value.max_def_level, name};
  return true;
}

bool BindDv(const pq::SchemaNode& action, DvRef* out) {
  const pq::SchemaNode* dv = Child(action, "deletionVector");
  if (dv == nullptr) return true;
  if (!dv->is_group || dv->max_rep_level != 0) return false;
  out->dv_def = dv->max_def_level;
  return BindLeaf(*dv, "storageType", LeafKind::kString, &out->storage_type) &&
         BindLeaf(*dv, "pathOrInlineDv", LeafKind::kString, &out->path_or_inline_dv) &&
         BindLeaf(*dv, "offset", LeafKind::kInt, &out->offset) &&
         BindLeaf(*dv, "sizeInBytes", LeafKind::kInt, &out->size_in_bytes) &&
         BindLeaf(*dv, "cardinality", LeafKind::kInt, &out->cardinality) && out->storage_type.column >= 0;
}

// The top-level action group `name`, when it is a non-repeated group holding a string `path` leaf.
const pq::SchemaNode* ActionNode(const pq::Schema& schema, const char* name) {
  const pq::SchemaNode* node = Child(schema.root(), name);
  if (node == nullptr || !node->is_group || node->max_rep_level != 0) return nullptr;
  return node;
}

// Walks the slots of one decoded leaf column in order. A cursor over an absent leaf yields null slots.
class Cursor {
 public:
  struct Slot {
    int16_t def = 0;
    int64_t value = -1;  ///< index of the slot's value when def == max_def, else -1
  };

  Cursor(const pq::RowGroupData& group, const LeafRef& ref, const std::string& context)
      : ref_(ref), context_(context) {
    if (ref.column < 0) return;
    auto it = std::find(group.columns.begin(), group.columns.end(), ref.column);
    LAKERUN_INTERNAL_ASSERT(it != group.columns.end(), "checkpoint column ", ref.name, " was not read");
    data_ = &group.data[static_cast<size_t>(it - group.columns.begin())];
    slots_ = data_->num_slots();
  }

  Slot Take() {
    if (data_ == nullptr) return {};
    LAKERUN_CHECK_AS(CorruptDataError, slot_ < slots_, context_, ": column '", ref_.name, "' has fewer values (",
                     slots_, ") than the row group has rows");
    Slot s;
    s.def = data_->def_levels().empty() ? ref_.max_def : data_->def_levels()[static_cast<size_t>(slot_)];
    ++slot_;
    if (s.def == ref_.max_def) s.value = value_++;
    return s;
  }
  /// Repeated leaves: whether the next slot continues the current row.
  bool Continues() const {
    return data_ != nullptr && slot_ < slots_ && !data_->rep_levels().empty() &&
           data_->rep_levels()[static_cast<size_t>(slot_)] != 0;
  }
  /// After the last row: every slot must have been consumed.
  void CheckConsumed() const {
    LAKERUN_CHECK_AS(CorruptDataError, slot_ == slots_, context_, ": column '", ref_.name, "' has ", slots_,
                     " slots, more than the row group's rows");
  }

  std::string_view Bytes(const Slot& s) const { return data_->bytes_at(s.value); }
  int64_t Int(const Slot& s) const {
    return data_->type() == pq::PhysicalType::kInt32 ? data_->values<int32_t>()[s.value]
                                                      : data_->values<int64_t>()[s.value];
  }
  bool Bool(const Slot& s) const { return data_->values<uint8_t>()[s.value] != 0; }

  std::optional<std::string> OptString(const Slot& s) const {
    if (s.value < 0) return std::nullopt;
    return std::string(Bytes(s));
  }
  std::optional<int64_t> OptInt(const Slot& s) const {
    if (s.value < 0) return std::nullopt;
    return Int(s);
  }

 private:
  const LeafRef& ref_;
  const std::string& context_;
  const pq::ColumnData* data_ = nullptr;
  int64_t slots_ = 0;
  int64_t slot_ = 0;
  int64_t value_ = 0;
};

// The key and value cursors of a string map.
struct MapCursor {
  MapCursor(const pq::RowGroupData& group, const MapRef& ref, const std::string& context)
      : ref(ref), key(group, ref.key, context), value(group, ref.value, context) {}

  /// Consumes one row; calls on_entry(key, optional value) per entry. Returns whether the map is non-null.
  template <typename F>
  bool TakeRow(F&& on_entry) {
    if (ref.key.column < 0) return false;
    Cursor::Slot k = key.Take();
    Cursor::Slot v = value.Take();
    const bool present = k.def >= ref.map_def;
    while (true) {
      if (k.def >= ref.entry_def) {
        on_entry(key.Bytes(k), v.value >= 0 ? std::optional<std::string_view>(value.Bytes(v)) : std::nullopt);
      }
      if (!key.Continues()) break;
      k = key.Take();
      v = value.Take();
    }
    return present;
  }
  void CheckConsumed() const {
    key.CheckConsumed();
    value.CheckConsumed();
  }

  const MapRef& ref;
  Cursor key, value;
};

struct DvCursor {
  DvCursor(const pq::RowGroupData& group, const DvRef& ref, const std::string& context)
      : ref(ref),
        storage_type(group, ref.storage_type, context),
        path_or_inline_dv(group, ref.path_or_inline_dv, context),
        offset(group, ref.offset, context),
        size_in_bytes(group, ref.size_in_bytes, context),
        cardinality(group, ref.cardinality, context) {}

  /// Consumes one row; the descriptor when the row has one. `action` and `context` name the row for errors.
  std::optional<DeletionVectorDescriptor> TakeRow(const char* action, const std::string& context) {
    const Cursor::Slot type = storage_type.Take();
    const Cursor::Slot path = path_or_inline_dv.Take();
    const Cursor::Slot off = offset.Take();
    const Cursor::Slot size = size_in_bytes.Take();
    const Cursor::Slot card = cardinality.Take();
    if (type.def < ref.dv_def) return std::nullopt;
    DeletionVectorDescriptor dv;
    const std::optional<std::string> t = storage_type.OptString(type);
    LAKERUN_CHECK_AS(CorruptDataError, t.has_value(), context, ": deletionVector action lacks string field "
                     "'storageType' (in ", action, ")");
    LAKERUN_CHECK_AS(CorruptDataError, *t == "u" || *t == "i" || *t == "p", context,
                     ": deletionVector.storageType must be 'u', 'i' or 'p', got '", *t, "'");
    dv.storage_type = (*t)[0];
    std::optional<std::string> p = path_or_inline_dv.OptString(path);
    LAKERUN_CHECK_AS(CorruptDataError, p.has_value(), context,
                     ": deletionVector action lacks string field 'pathOrInlineDv' (in ", action, ")");
    dv.path_or_inline_dv = std::move(*p);
    if (auto o = offset.OptInt(off)) dv.offset = static_cast<int32_t>(*o);
    const std::optional<int64_t> s = size_in_bytes.OptInt(size);
    const std::optional<int64_t> c = cardinality.OptInt(card);
    LAKERUN_CHECK_AS(CorruptDataError, s && c, context, ": deletionVector action lacks integer field '",
                     s ? "cardinality" : "sizeInBytes", "' (in ", action, ")");
    dv.size_in_bytes = static_cast<int32_t>(*s);
    dv.cardinality = *c;
    return dv;
  }
  void CheckConsumed() const {
    for (const Cursor* c : {&storage_type, &path_or_inline_dv, &offset, &size_in_bytes, &cardinality}) {
      c->CheckConsumed();
    }
  }

  const DvRef& ref;
  Cursor storage_type, path_or_inline_dv, offset, size_in_bytes, cardinality;
};

std::string RowContext(const std::string& context, const pq::RowGroupData& group, int64_t row) {
  return StrCat(context, " row group ", group.row_group, " row ", row);
}

void ReadAdds(const AddRef& ref, const pq::RowGroupData& group, ActionSet* out, const std::string& context) {
  Cursor path(group, ref.path, context), size(group, ref.size, context),
      modification_time(group, ref.modification_time, context), data_change(group, ref.data_change, context),
      stats(group, ref.stats, context), base_row_id(group, ref.base_row_id, context),
      default_row_commit_version(group, ref.default_row_commit_version, context);
  MapCursor partition_values(group, ref.partition_values, context), tags(group, ref.tags, context);
  DvCursor dv(group, ref.dv, context);
  for (int64_t row = 0; row < group.num_rows; ++row) {
    const Cursor::Slot p = path.Take();
    const Cursor::Slot sz = size.Take(), mt = modification_time.Take(), dc = data_change.Take(),
                       st = stats.Take(), br = base_row_id.Take(), dr = default_row_commit_version.Take();
    const bool is_add = p.def >= ref.action_def;
    AddFile a;
    partition_values.TakeRow([&](std::string_view k, std::optional<std::string_view> v) {
      a.partition_values.emplace(std::string(k), v ? std::optional<std::string>(*v) : std::nullopt);
    });
    tags.TakeRow([&](std::string_view k, std::optional<std::string_view> v) {
      if (v) a.tags.emplace(std::string(k), std::string(*v));
    });
    if (!is_add) {
      dv.TakeRow("add", context);  // consumes the row; no descriptor on a row without an add
      continue;
    }
    const std::string where = RowContext(context, group, row);
    std::optional<std::string> path_text = path.OptString(p);
    LAKERUN_CHECK_AS(CorruptDataError, path_text.has_value(), where, ": add action lacks string field 'path'");
    a.path = std::move(*path_text);
    a.size = size.OptInt(sz).value_or(0);
    a.modification_time = modification_time.OptInt(mt).value_or(0);
    a.data_change = dc.value >= 0 ? data_change.Bool(dc) : true;
    a.stats = stats.OptString(st);
    a.deletion_vector = dv.TakeRow("add", where);
    a.base_row_id = base_row_id.OptInt(br);
    a.default_row_commit_version = default_row_commit_version.OptInt(dr);
    out->adds.push_back(std::move(a));
  }
  for (const Cursor* c : {&path, &size, &modification_time, &data_change, &stats, &base_row_id,
                          &default_row_commit_version}) {
    c->CheckConsumed();
  }
  partition_values.CheckConsumed();
  tags.CheckConsumed();
  dv.CheckConsumed();
}

void ReadRemoves(const RemoveRef& ref, const pq::RowGroupData& group, ActionSet* out, const std::string& context) {
  Cursor path(group, ref.path, context), deletion_timestamp(group, ref.deletion_timestamp, context),
      data_change(group, ref.data_change, context), extended(group, ref.extended_file_metadata, context),
      size(group, ref.size, context);
  MapCursor partition_values(group, ref.partition_values, context);
  DvCursor dv(group, ref.dv, context);
  for (int64_t row = 0; row < group.num_rows; ++row) {
    const Cursor::Slot p = path.Take();
    const Cursor::Slot ts = deletion_timestamp.Take(), dc = data_change.Take(), ex = extended.Take(),
                       sz = size.Take();
    const bool is_remove = p.def >= ref.action_def;
    RemoveFile r;
    PartitionValues values;
    const bool has_values = partition_values.TakeRow([&](std::string_view k, std::optional<std::string_view> v) {
      values.emplace(std::string(k), v ? std::optional<std::string>(*v) : std::nullopt);
    });
    if (!is_remove) {
      dv.TakeRow("remove", context);
      continue;
    }
    const std::string where = RowContext(context, group, row);
    std::optional<std::string> path_text = path.OptString(p);
    LAKERUN_CHECK_AS(CorruptDataError, path_text.has_value(), where, ": remove action lacks string field 'path'");
    r.path = std::move(*path_text);
    r.deletion_timestamp = deletion_timestamp.OptInt(ts);
    r.data_change = dc.value >= 0 ? data_change.Bool(dc) : true;
    if (ex.value >= 0) r.extended_file_metadata = extended.Bool(ex);
    if (has_values) r.partition_values = std::move(values);
    r.size = size.OptInt(sz);
    r.deletion_vector = dv.TakeRow("remove", where);
    out->removes.push_back(std::move(r));
  }
  for (const Cursor* c : {&path, &deletion_timestamp, &data_change, &extended, &size}) c->CheckConsumed();
  partition_values.CheckConsumed();
  dv.CheckConsumed();
}

}  // namespace

struct FileActionColumns::Binding {
  std::optional<AddRef> add;
  std::optional<RemoveRef> remove;
};

std::optional<FileActionColumns> FileActionColumns::Bind(const pq::Schema& schema) {
  auto binding = std::make_shared<Binding>();
  FileActionColumns out;
  if (const pq::SchemaNode* node = Child(schema.root(), "add")) {
    if (ActionNode(schema, "add") == nullptr) return std::nullopt;
    AddRef a;
    a.action_def = node->max_def_level;
    const bool ok = BindLeaf(*node, "path", LeafKind::kString, &a.path) && a.path.column >= 0 &&
                    BindLeaf(*node, "size", LeafKind::kInt, &a.size) &&
                    BindLeaf(*node, "modificationTime", LeafKind::kInt, &a.modification_time) &&
                    BindLeaf(*node, "dataChange", LeafKind::kBool, &a.data_change) &&
                    BindLeaf(*node, "stats", LeafKind::kString, &a.stats) &&
                    BindLeaf(*node, "baseRowId", LeafKind::kInt, &a.base_row_id) &&
                    BindLeaf(*node, "defaultRowCommitVersion", LeafKind::kInt, &a.default_row_commit_version) &&
                    BindMap(*node, "partitionValues", &a.partition_values) && BindMap(*node, "tags", &a.tags) &&
                    BindDv(*node, &a.dv);
    if (!ok) return std::nullopt;
    for (const char* f : {"path", "partitionValues", "size", "modificationTime", "dataChange", "stats", "tags",
                          "deletionVector", "baseRowId", "defaultRowCommitVersion"}) {
      if (Child(*node, f) != nullptr) out.read_paths_.push_back(StrCat("add.", f));
    }
    binding->add = a;
  }
  if (const pq::SchemaNode* node = Child(schema.root(), "remove")) {
    if (ActionNode(schema, "remove") == nullptr) return std::nullopt;
    RemoveRef r;
    r.action_def = node->max_def_level;
    const bool ok = BindLeaf(*node, "path", LeafKind::kString, &r.path) && r.path.column >= 0 &&
                    BindLeaf(*node, "deletionTimestamp", LeafKind::kInt, &r.deletion_timestamp) &&
                    BindLeaf(*node, "dataChange", LeafKind::kBool, &r.data_change) &&
                    BindLeaf(*node, "extendedFileMetadata", LeafKind::kBool, &r.extended_file_metadata) &&
                    BindLeaf(*node, "size", LeafKind::kInt, &r.size) &&
                    BindMap(*node, "partitionValues", &r.partition_values) && BindDv(*node, &r.dv);
    if (!ok) return std::nullopt;
    for (const char* f : {"path", "deletionTimestamp", "dataChange", "extendedFileMetadata", "partitionValues", "size",
                          "deletionVector"}) {
      if (Child(*node, f) != nullptr) out.read_paths_.push_back(StrCat("remove.", f));
    }
    binding->remove = r;
  }
  out.binding_ = std::move(binding);
  return out;
}

void FileActionColumns::Read(const pq::RowGroupData& group, ActionSet* out, const std::string& context) const {
  if (binding_->add) ReadAdds(*binding_->add, group, out, context);
  if (binding_->remove) ReadRemoves(*binding_->remove, group, out, context);
}

}  // namespace lakerun::delta::internal
