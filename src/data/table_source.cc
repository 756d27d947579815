// OpenTable: Parquet files and Delta snapshots as a RowSource whose units are (file, row group) pairs.
#include "lakerun/data/table_source.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "error_context.h"
#include "hive_partitions.h"
#include "partition_column.h"
#include "scratch_pool.h"
#include "lakerun/base/error.h"
#include "spaced_column.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/values.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/metadata.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

struct DataFile {
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ms = 0;
  std::shared_ptr<const pq::ParquetFile> file;  // shared with the sources WithUnitBytes makes
  std::vector<uint64_t> deleted;  // sorted row positions removed by a Delta deletion vector
  std::map<std::string, pq::Value> partition_values;  // the file's typed value of every partition column
};

// A table's partition columns and their types: a Delta table's, or the key=value folders of loose Parquet files.
struct PartitionSchema {
  std::map<std::string, delta::DataTypePtr> types;

  bool Has(const std::string& name) const { return types.count(name) > 0; }
};

// One I/O unit: rows [begin, begin + rows) of a row group (all of it unless TableOptions::unit_bytes slices it).
struct Unit {
  size_t file = 0;
  int row_group = 0;
  uint64_t rg_rows = 0;               // rows stored in the row group
  uint64_t begin = 0;                 // first row of the unit inside the row group
  uint64_t rows = 0;                  // rows of the unit, deleted ones included
  std::vector<uint64_t> deleted;      // positions inside the unit to drop
  bool sliced() const { return begin > 0 || rows < rg_rows; }
};

// The chunk from its row `skip` on: its pointers moved past the rows before (the memory stays owned as before).
ColumnChunk SkipRows(ColumnChunk chunk, uint64_t skip, const ColumnInfo& info) {
  if (skip == 0) return chunk;
  if (chunk.views != nullptr) {
    chunk.views += skip;
  } else if (chunk.offsets != nullptr) {
    chunk.offsets += skip;  // offsets index `data` from its start
  } else {
    chunk.data += skip * info.row_bytes();
  }
  if (chunk.validity != nullptr) chunk.validity += skip;
  return chunk;
}

// How one projected column is stored in one file.
struct ColumnLayout {
  int leaf = 0;
  bool partition = false;  // a partition column: its values come from DataFile::partition_values
  bool is_list = false;
  int16_t list_def_level = 0;  // lists: the definition level at which the list itself is present (not null)
};

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

void ListParquetFiles(FileSystem& fs, const std::string& dir, std::vector<std::string>* out) {
  for (const FileInfo& entry : fs.List(dir)) {
    if (StartsWith(entry.name, "_") || StartsWith(entry.name, ".")) continue;
    const std::string path = JoinPath(dir, entry.name);
    if (entry.is_directory) {
      ListParquetFiles(fs, path, out);
    } else if (entry.name.size() > 8 && entry.name.compare(entry.name.size() - 8, 8, ".parquet") == 0) {
      out->push_back(path);
    }
  }
}

ElementType MapPhysical(pq::PhysicalType type, const std::string& where) {
  switch (type) {
    case pq::PhysicalType::kBoolean: return ElementType::kBool;
    case pq::PhysicalType::kInt32: return ElementType::kInt32;
    case pq::PhysicalType::kInt64: return ElementType::kInt64;
    case pq::PhysicalType::kFloat: return ElementType::kFloat32;
    case pq::PhysicalType::kDouble: return ElementType::kFloat64;
    case pq::PhysicalType::kByteArray: return ElementType::kBinary;
    case pq::PhysicalType::kFixedLenByteArray: return ElementType::kUInt8;
    default: break;
  }
  LAKERUN_THROW(NotImplemented, where, ": physical type ", pq::ToString(type), " cannot become a tensor");
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The loader's view of top-level field `name` of `file`, and where its values live.
ColumnInfo Describe(const pq::ParquetFile& file, const std::string& name, ColumnLayout* layout) {
  const pq::Schema& schema = file.schema();
  const std::string where = StrCat(file.path(), " column '", name, "'");
  const pq::SchemaNode* node = schema.FindNode(name);
  LAKERUN_CHECK(node != nullptr, file.path(), ": no column '", name, "' (schema: ", schema.ToString(), ")");
  const std::vector<int> leaves = schema.ColumnsUnder(name);
  const auto shape_meta = pq::TensorShape(file.metadata(), name);
  ColumnInfo info{name, ElementType::kFloat32, {}};
  if (node->is_leaf()) {
    layout->leaf = node->column_index;
    layout->is_list = false;
    info.nullable = node->repetition == pq::Repetition::kOptional;
    info.type = MapPhysical(node->physical_type, where);
    if (node->physical_type == pq::PhysicalType::kFixedLenByteArray) {
      info.shape = {node->type_length};
      if (shape_meta && Product(*shape_meta) == node->type_length) info.shape = *shape_meta;
    }
    return info;
  }
  const pq::SchemaNode* element = nullptr;
  bool element_is_repeated = false;
  LAKERUN_CHECK_AS(NotImplemented,
                   pq::IsListNode(*node, &element, &element_is_repeated) && element->is_leaf() && leaves.size() == 1,
                   where, ": nested columns other than lists of numbers are not supported by the loader");
  layout->leaf = leaves[0];
  layout->is_list = true;
  layout->list_def_level = node->max_def_level;
  info.is_list = true;
  info.nullable = node->repetition == pq::Repetition::kOptional || element->repetition == pq::Repetition::kOptional;
  info.type = MapPhysical(element->physical_type, where);
  LAKERUN_CHECK_AS(NotImplemented, info.type != ElementType::kBinary &&
                   element->physical_type != pq::PhysicalType::kFixedLenByteArray,
                   where, ": lists of binary values are not supported by the loader");
  if (shape_meta) {
    info.shape = *shape_meta;
  } else {
    // No recorded shape: the list length from the first non-empty row group's value count.
    int64_t length = -1;
    for (const auto& rg : file.metadata().row_groups) {
      if (rg.num_rows > 0) {
        length = rg.columns.at(layout->leaf).num_values / rg.num_rows;
        break;
      }
    }
    LAKERUN_CHECK_AS(NotImplemented, length >= 0, where,
                     ": list length unknown (no rows and no lakerun.shape metadata)");
    info.shape = {length};
  }
  return info;
}

pq::Predicate ToPredicate(const Filter& f, const pq::ParquetFile& file) {
  const auto leaf = file.schema().FindColumn(f.column);
  LAKERUN_CHECK(leaf.has_value(), file.path(), ": filter column '", f.column, "' is not a leaf column");
  const pq::PhysicalType type = file.schema().column(*leaf).physical_type;
  pq::Predicate p;
  p.column = f.column;
  p.op = f.op == FilterOp::kEq ? pq::Predicate::Op::kEq
         : f.op == FilterOp::kLt ? pq::Predicate::Op::kLt
         : f.op == FilterOp::kLe ? pq::Predicate::Op::kLe
         : f.op == FilterOp::kGt ? pq::Predicate::Op::kGt
                                 : pq::Predicate::Op::kGe;
  const std::string bad = StrCat(file.path(), ": filter on '", f.column, "' (", pq::ToString(type),
                                 ") needs a value of the column's kind");
  if (type == pq::PhysicalType::kInt32 || type == pq::PhysicalType::kInt64) {
    LAKERUN_CHECK(std::holds_alternative<int64_t>(f.value), bad);
    p.value = pq::Value::Int(std::get<int64_t>(f.value));
  } else if (type == pq::PhysicalType::kFloat || type == pq::PhysicalType::kDouble) {
    const double v = std::holds_alternative<double>(f.value) ? std::get<double>(f.value)
                     : std::holds_alternative<int64_t>(f.value)
                         ? static_cast<double>(std::get<int64_t>(f.value))
                         : throw InvalidArgument(bad);
    p.value = type == pq::PhysicalType::kFloat ? pq::Value::Float(static_cast<float>(v)) : pq::Value::Double(v);
  } else if (type == pq::PhysicalType::kByteArray) {
    LAKERUN_CHECK(std::holds_alternative<std::string>(f.value), bad);
    p.value = pq::Value::String(std::get<std::string>(f.value));
  } else {
    LAKERUN_THROW(NotImplemented, bad);
  }
  return p;
}

// Whether a partition value (its text in the Delta log or a Hive folder name) satisfies `f` (null never matches).
bool PartitionMatches(const std::optional<std::string>& value, const Filter& f) {
  if (!value) return false;
  int cmp;
  if (std::holds_alternative<std::string>(f.value)) {
    cmp = value->compare(std::get<std::string>(f.value));
  } else {
    char* end = nullptr;
    const double a = std::strtod(value->c_str(), &end);
    LAKERUN_CHECK(!value->empty() && end == value->c_str() + value->size(), "filter on partition column '", f.column,
                  "' compares with a number, but a file's value is '", *value, "'; compare with a string");
    const double b = std::holds_alternative<double>(f.value) ? std::get<double>(f.value)
                                                             : static_cast<double>(std::get<int64_t>(f.value));
    cmp = a < b ? -1 : (a > b ? 1 : 0);
  }
  switch (f.op) {
    case FilterOp::kEq: return cmp == 0;
    case FilterOp::kLt: return cmp < 0;
    case FilterOp::kLe: return cmp <= 0;
    case FilterOp::kGt: return cmp > 0;
    case FilterOp::kGe: return cmp >= 0;
  }
  return false;
}

// Whether `n` views of `row_bytes` bytes each lie back to back in memory.
bool BackToBack(const std::string_view* views, int64_t n, size_t row_bytes) {
  const char* next = views[0].data();
  for (int64_t i = 0; i < n; ++i, next += row_bytes) {
    if (views[i].data() != next || views[i].size() != row_bytes) return false;
  }
  return true;
}

// A chunk viewing a dense decoded column (every row holds a value; lists: all of the column's length).
// `fixed_row_bytes`: the row size of a fixed-width column, 0 for binary values.
ColumnChunk Dense(const std::shared_ptr<pq::ColumnData>& data, size_t fixed_row_bytes) {
  ColumnChunk chunk;
  chunk.owner = data;
  if (data->has_views()) {
    const std::string_view* views = data->views();
    const int64_t n = data->num_values();
    // Fixed-width values whose pages were decompressed one after another into one block (PLAIN pages of a column
    // without nulls) lie back to back: served as contiguous rows, so collation reads a row without first loading
    // its 16-byte view (a second cache miss per row when a shuffled batch gathers them).
    // The views themselves (16 bytes a row) are freed; `data` stays the owner of the page memory.
    if (fixed_row_bytes > 0 && n > 0 && BackToBack(views, n, fixed_row_bytes)) {
      chunk.data = reinterpret_cast<const uint8_t*>(views[0].data());
      chunk.size_bytes = static_cast<size_t>(n) * fixed_row_bytes;
      data->mutable_view_buffer() = pq::Buffer();
      data->set_has_views(false);
      return chunk;
    }
    chunk.views = views;
    for (int64_t i = 0; i < n; ++i) chunk.size_bytes += chunk.views[i].size();
    return chunk;
  }
  chunk.data = data->value_buffer().data();
  chunk.size_bytes = data->value_buffer().size();
  if (data->type() == pq::PhysicalType::kByteArray) chunk.offsets = data->offsets().data();
  chunk.owner = data;
  return chunk;
}

// Memory a chunk of `rows` rows holds, for the cache budget.
size_t ChunkBytes(const ColumnChunk& chunk, uint64_t rows) {
  size_t bytes = chunk.size_bytes;
  if (chunk.offsets) bytes += (rows + 1) * sizeof(int64_t);
  if (chunk.validity) bytes += rows;
  if (chunk.views) bytes += rows * sizeof(std::string_view);
  return bytes;
}

class ParquetTableSource final : public RowSource {
 public:
  ParquetTableSource(std::vector<DataFile> files, const TableOptions& options, PartitionSchema partitions,
                     std::string where)
      : files_(std::move(files)), options_(options), partitions_(std::move(partitions)), where_(std::move(where)) {
    std::vector<std::string> names = options.columns;
    if (names.empty() && !files_.empty()) {
      for (const auto& child : files_[0].file->schema().root().children) names.push_back(child.name);
    }
    layouts_.resize(files_.size());
    for (size_t f = 0; f < files_.size(); ++f) {
      for (size_t c = 0; c < names.size(); ++c) {
        ColumnLayout layout;
        if (partitions_.Has(names[c])) {
          layout.partition = true;
          layouts_[f].push_back(layout);
          if (f == 0) infos_.push_back(DescribePartitionColumn(names[c]));
          continue;
        }
        ColumnInfo info = Describe(*files_[f].file, names[c], &layout);
        if (f == 0) {
          infos_.push_back(info);
        } else {
          infos_[c].nullable = infos_[c].nullable || info.nullable;
          const ColumnInfo& first = infos_[c];
          LAKERUN_CHECK(info.type == first.type && info.shape == first.shape, files_[f].path, ": column '",
                        names[c], "' is ", ToString(info.type), " of ", info.shape.size(), "-d shape, but in ",
                        files_[0].path, " it is ", ToString(first.type), " of ", first.shape.size(), "-d shape");
        }
        layouts_[f].push_back(layout);
        LAKERUN_CHECK(options.unit_bytes == 0 || !layout.is_list, files_[f].path, ": column '", names[c],
                      "' is a list: TableOptions::unit_bytes can only slice row groups of columns without "
                      "repetition; leave it out of the projection or set unit_bytes to 0");
      }
      std::vector<pq::Predicate> predicates;
      for (const Filter& filter : options.filters) {
        if (partitions_.Has(filter.column)) continue;  // already applied to the files
        predicates.push_back(ToPredicate(filter, *files_[f].file));
      }
      const pq::FileMetaData& md = files_[f].file->metadata();
      uint64_t file_row = 0;
      auto deleted = files_[f].deleted.begin();
      for (int rg = 0; rg < static_cast<int>(md.row_groups.size()); ++rg) {
        const auto rows = static_cast<uint64_t>(md.row_groups[rg].num_rows);
        std::vector<uint64_t> rg_deleted;
        while (deleted != files_[f].deleted.end() && *deleted < file_row + rows) {
          rg_deleted.push_back(*deleted++ - file_row);
        }
        file_row += rows;
        bool pruned = false;
        for (const auto& p : predicates) pruned = pruned || pq::RowGroupCannotMatch(md, rg, p);
        if (pruned || rg_deleted.size() == rows) continue;
        // Equal row slices of about unit_bytes decoded bytes each (one slice: the whole row group).
        uint64_t slices = 1;
        if (options.unit_bytes > 0) {
          slices = std::clamp<uint64_t>((ProjectedBytes(f, rg) + options.unit_bytes - 1) / options.unit_bytes, 1, rows);
        }
        const uint64_t slice_rows = (rows + slices - 1) / slices;
        auto next_deleted = rg_deleted.begin();
        for (uint64_t begin = 0; begin < rows; begin += slice_rows) {
          Unit unit{f, rg, rows, begin, std::min(slice_rows, rows - begin), {}};
          while (next_deleted != rg_deleted.end() && *next_deleted < begin + unit.rows) {
            unit.deleted.push_back(*next_deleted++ - begin);
          }
          if (unit.deleted.size() == unit.rows) continue;
          starts_.push_back(rows_);
          rows_ += unit.rows - unit.deleted.size();
          units_.push_back(std::move(unit));
        }
      }
    }
    starts_.push_back(rows_);
  }

  const std::vector<ColumnInfo>& columns() const override { return infos_; }
  uint64_t num_rows() const override { return rows_; }
  size_t num_units() const override { return units_.size(); }
  uint64_t unit_start(size_t unit) const override { return starts_.at(unit); }
  std::string DescribeUnit(size_t unit) const override {
    const Unit& u = units_.at(unit);
    if (u.sliced()) {
      return StrCat(files_[u.file].path, " row group ", u.row_group, " rows ", u.begin, "-", u.begin + u.rows);
    }
    return StrCat(files_[u.file].path, " row group ", u.row_group);
  }

  uint64_t UnitBytesHint(size_t unit) const override {
    const Unit& u = units_.at(unit);
    const uint64_t bytes = ProjectedBytes(u.file, u.row_group);
    return u.rg_rows == 0 ? bytes : static_cast<uint64_t>(static_cast<double>(bytes) * u.rows / u.rg_rows);
  }

  std::string Fingerprint() const override { return fingerprint_; }

  std::shared_ptr<const RowSource> WithUnitBytes(uint64_t unit_bytes) const override {
    for (const auto& file : layouts_) {
      for (const ColumnLayout& layout : file) {
        if (layout.is_list) return nullptr;
      }
    }
    TableOptions options = options_;
    options.unit_bytes = unit_bytes;
    auto sliced = std::make_shared<ParquetTableSource>(files_, options, partitions_, where_);
    sliced->set_fingerprint(fingerprint_);
    return sliced;
  }
  void set_fingerprint(std::string f) { fingerprint_ = std::move(f); }

  std::shared_ptr<const UnitData> ReadUnit(size_t index) const override { return ReadUnitWith(index, {}); }

  std::shared_ptr<const UnitData> ReadUnitWith(size_t index, const UnitReadOptions& options) const override {
    const Unit& unit = units_.at(index);
    const pq::ParquetFile& file = *files_[unit.file].file;
    // The chunk's raw bytes and decompressed pages go to memory earlier decodes (of any thread or loader) used,
    // instead of freshly allocated and page-faulted memory every time (scratch_pool.h).
    const ScratchPool::Lease scratch = scratch_.Borrow();
    auto out = std::make_shared<UnitData>();
    out->rows = unit.rows;
    for (size_t c = 0; c < infos_.size(); ++c) {
      const ColumnInfo& info = infos_[c];
      const ColumnLayout& layout = layouts_[unit.file][c];
      if (layout.partition) {  // the file's value on each of the unit's rows
        ColumnChunk chunk = ConstantColumn(info, files_[unit.file].partition_values.at(info.name), unit.rows);
        out->bytes += ChunkBytes(chunk, unit.rows);
        out->columns.push_back(std::move(chunk));
        continue;
      }
      auto data = std::make_shared<pq::ColumnData>();
      // Byte values (images, FIXED_LEN_BYTE_ARRAY tensors) as views into the decompressed pages: one copy of every
      // value less than the copied form. Units a deletion vector compacts are copied anyway.
      pq::ColumnReadOptions read;
      read.byte_views = options.allow_views && !layout.is_list && unit.deleted.empty() &&
                        (info.type == ElementType::kBinary || info.type == ElementType::kUInt8);
      if (unit.sliced()) {  // only the pages holding the unit's rows (columns without repetition)
        read.row_begin = static_cast<int64_t>(unit.begin);
        read.row_end = static_cast<int64_t>(unit.begin + unit.rows);
      }
      file.ReadColumnChunk(unit.row_group, layout.leaf, data.get(), scratch.get(), read);
      const std::string where = StrCat(DescribeUnit(index), " column '", info.name, "'");
      // Rows the decoded pages hold (from row `first` of the row group): the unit's rows, or more when sliced.
      const uint64_t first = unit.sliced() ? static_cast<uint64_t>(data->first_row()) : 0;
      const uint64_t rows = unit.sliced() ? static_cast<uint64_t>(data->num_slots()) : unit.rg_rows;
      ColumnChunk chunk;
      if (layout.is_list) {
        const auto length = rows > 0 ? data->FixedListLength() : std::optional<int64_t>(0);
        if (length && *length == info.elements_per_row() &&
            static_cast<uint64_t>(data->num_values()) == rows * static_cast<uint64_t>(*length)) {
          chunk = Dense(data, info.row_bytes());  // the fast path: every row a non-null list of the column's length
        } else {
          chunk = SpacedColumn::View(SpaceList(*data, rows, layout.list_def_level,
                                               info.elements_per_row(), where));
        }
      } else if (static_cast<uint64_t>(data->num_values()) != rows) {
        data->Materialize();
        chunk = SpacedColumn::View(SpaceFlat(data, rows, where));  // nulls
      } else {
        chunk = Dense(data, info.type == ElementType::kBinary ? 0 : info.row_bytes());
        if (info.type != ElementType::kBinary && chunk.views == nullptr) {
          LAKERUN_CHECK_AS(CorruptDataError, chunk.size_bytes >= rows * info.row_bytes(), where, ": ",
                           chunk.size_bytes, " value bytes for ", rows, " rows of ", info.row_bytes(), " bytes");
        }
      }
      out->bytes += ChunkBytes(chunk, rows);
      LAKERUN_CHECK_AS(CorruptDataError, first <= unit.begin && unit.begin + unit.rows <= first + rows, where,
                       ": pages read hold rows ", first, "-", first + rows, " of the row group, not the unit's");
      out->columns.push_back(SkipRows(std::move(chunk), unit.begin - first, info));
    }
    // A slice copies its rows out, releasing the page memory of the pages it read (they hold rows of its
    // neighbours too): the cache then holds, and counts, only the slice's own rows.
    if (!unit.deleted.empty() || unit.sliced()) Compact(unit, out.get());
    return out;
  }

 private:
  // Decoded bytes of the projected columns of a row group, from the footer.
  uint64_t ProjectedBytes(size_t file, int row_group) const {
    const pq::RowGroupMeta& rg = files_[file].file->metadata().row_groups.at(row_group);
    uint64_t bytes = 0;
    for (size_t c = 0; c < layouts_[file].size(); ++c) {
      const ColumnLayout& layout = layouts_[file][c];
      if (layout.partition) {
        const pq::Value& value = files_[file].partition_values.at(infos_[c].name);
        const uint64_t row_bytes = infos_[c].type == ElementType::kBinary
                                       ? (value.is_null() ? 0 : value.as_string().size()) + sizeof(int64_t)
                                       : infos_[c].row_bytes();
        bytes += static_cast<uint64_t>(std::max<int64_t>(0, rg.num_rows)) * row_bytes;
        continue;
      }
      bytes += static_cast<uint64_t>(std::max<int64_t>(0, rg.columns.at(layout.leaf).total_uncompressed_size));
    }
    return bytes;
  }

  // Copies the unit's rows into memory of its own, dropping the rows a deletion vector removed (keeping validity,
  // offsets and element validity aligned).
  void Compact(const Unit& unit, UnitData* data) const {
    std::vector<uint64_t> kept;
    kept.reserve(unit.rows - unit.deleted.size());
    auto d = unit.deleted.begin();
    for (uint64_t r = 0; r < unit.rows; ++r) {
      if (d != unit.deleted.end() && *d == r) {
        ++d;
      } else {
        kept.push_back(r);
      }
    }
    data->bytes = 0;
    for (size_t c = 0; c < infos_.size(); ++c) {
      const ColumnInfo& info = infos_[c];
      const ColumnChunk& chunk = data->columns[c];
      auto out = std::make_shared<SpacedColumn>();
      // Bytes per element of `data`, and elements per row when rows have no offsets.
      const size_t element = info.type == ElementType::kBinary ? 1 : ElementSize(info.type);
      const auto per_row = static_cast<uint64_t>(info.elements_per_row());
      const bool view_offsets = chunk.views != nullptr && info.type == ElementType::kBinary;
      if (chunk.offsets != nullptr || view_offsets) out->offsets.push_back(0);
      for (uint64_t r : kept) {
        if (chunk.views != nullptr) {  // byte values as views: the row's bytes, with offsets for binary values
          const std::string_view v = chunk.views[r];
          out->data.insert(out->data.end(), v.begin(), v.end());
          if (view_offsets) out->offsets.push_back(static_cast<int64_t>(out->data.size()));
          if (chunk.validity) out->validity.push_back(chunk.validity[r]);
          continue;
        }
        const uint64_t begin = chunk.offsets ? static_cast<uint64_t>(chunk.offsets[r] - chunk.offsets[0]) : r * per_row;
        const uint64_t end = chunk.offsets ? static_cast<uint64_t>(chunk.offsets[r + 1] - chunk.offsets[0])
                                           : (r + 1) * per_row;
        const uint8_t* base = chunk.data + (chunk.offsets ? chunk.offsets[0] * element : 0);
        out->data.insert(out->data.end(), base + begin * element, base + end * element);
        if (chunk.element_validity) {
          out->element_validity.insert(out->element_validity.end(), chunk.element_validity + begin,
                                       chunk.element_validity + end);
        }
        if (chunk.offsets) out->offsets.push_back(static_cast<int64_t>(out->data.size() / element));
        if (chunk.validity) out->validity.push_back(chunk.validity[r]);
      }
      out->values = out->data.data();
      out->values_size = out->data.size();
      data->columns[c] = SpacedColumn::View(out);
      data->bytes += ChunkBytes(data->columns[c], kept.size());
    }
    data->rows = kept.size();
  }

  std::vector<DataFile> files_;
  TableOptions options_;                        // as opened (WithUnitBytes reopens with another unit_bytes)
  // The column partition column `name` becomes: its Delta type, nullable when some file's value is null.
  ColumnInfo DescribePartitionColumn(const std::string& name) const {
    bool nullable = false;
    for (const DataFile& file : files_) nullable = nullable || file.partition_values.at(name).is_null();
    return PartitionColumnInfo(name, *partitions_.types.at(name), nullable, where_);
  }

  PartitionSchema partitions_;
  std::string where_;  // the table, for messages
  mutable ScratchPool scratch_;  // decode memory, lent to one ReadUnitWith at a time
  std::vector<std::vector<ColumnLayout>> layouts_;  // per file, per projected column
  std::vector<ColumnInfo> infos_;
  std::vector<Unit> units_;
  std::vector<uint64_t> starts_;
  uint64_t rows_ = 0;
  std::string fingerprint_;
};

pq::ReaderOptions ReaderOptionsFor(const TableOptions& options, bool is_delta) {
  pq::ReaderOptions reader;
  reader.memory_map = options.memory_map.value_or(is_delta);
  return reader;
}

std::shared_ptr<RowSource> OpenTableImpl(const std::string& path, const TableOptions& options, FileSystem& fs) {
  std::vector<DataFile> files;
  PartitionSchema partitions;
  std::string where = path;
  const bool is_delta = delta::IsDeltaTable(path, fs);
  if (is_delta) {
    delta::DeltaTable table(path, fs);
    const delta::Snapshot snapshot = options.delta_version      ? table.AtVersion(*options.delta_version)
                                     : options.delta_timestamp_ms ? table.AtTimestamp(*options.delta_timestamp_ms)
                                                                  : table.Latest();
    LAKERUN_CHECK_AS(NotImplemented, snapshot.column_mapping_mode() == delta::ColumnMappingMode::kNone,
                     snapshot.Describe(), ": column mapping is not supported by the loader yet");
    where = snapshot.Describe();
    for (const std::string& name : snapshot.metadata.partition_columns) {
      const delta::StructField* field = snapshot.metadata.schema->FindField(name);
      LAKERUN_CHECK_AS(CorruptDataError, field != nullptr, where, ": partition column '", name,
                       "' is not in the table's schema");
      partitions.types[name] = field->type;
    }
    for (const delta::AddFile& add : snapshot.files) {
      bool keep = true;
      for (const Filter& f : options.filters) {
        if (!partitions.Has(f.column)) continue;
        const auto it = add.partition_values.find(f.column);
        keep = keep && it != add.partition_values.end() && PartitionMatches(it->second, f);
      }
      if (!keep) continue;
      DataFile file;
      file.path = snapshot.DataFilePath(add);
      for (const auto& [name, type] : partitions.types) {
        const auto it = add.partition_values.find(name);
        file.partition_values[name] = delta::ParsePartitionValue(
            it != add.partition_values.end() ? it->second : std::nullopt, *type,
            StrCat(where, ": ", add.path, " partition column '", name, "'"));
      }
      if (add.deletion_vector) {
        file.deleted = delta::LoadDeletionVector(fs, snapshot.table_path, *add.deletion_vector, snapshot.Describe());
        std::sort(file.deleted.begin(), file.deleted.end());
      }
      files.push_back(std::move(file));
    }
  } else {
    const auto info = fs.Stat(path);
    LAKERUN_CHECK_AS(IoError, info.has_value(), "cannot open table ", path, ": no such file or directory");
    std::vector<std::string> paths;
    if (info->is_directory) {
      ListParquetFiles(fs, path, &paths);
      std::sort(paths.begin(), paths.end());
    } else {
      paths.push_back(path);
    }
    // Hive-style key=value folders are partition columns, as in a Delta table (a column the files hold wins).
    HivePartitions hive = ParseHivePartitions(path, paths);
    std::shared_ptr<const pq::ParquetFile> first;  // opened to see its columns; kept for the loop below
    if (!hive.keys.empty()) {
      first = pq::ParquetFile::Open(fs, paths.front(), ReaderOptionsFor(options, is_delta));
      for (const std::string& key : hive.keys) {
        if (first->schema().FindNode(key) == nullptr) partitions.types[key] = hive.types.at(key);
      }
    }
    for (size_t i = 0; i < paths.size(); ++i) {
      bool keep = true;
      for (const Filter& f : options.filters) {
        if (partitions.Has(f.column)) keep = keep && PartitionMatches(hive.text[i].at(f.column), f);
      }
      if (!keep) continue;
      DataFile file{std::move(paths[i]), 0, 0, i == 0 ? first : nullptr, {}, {}};
      for (const auto& [name, type] : partitions.types) file.partition_values[name] = hive.values[i].at(name);
      files.push_back(std::move(file));
    }
  }
  for (DataFile& file : files) {
    if (!file.file) file.file = pq::ParquetFile::Open(fs, file.path, ReaderOptionsFor(options, is_delta));
    file.size = file.file->file_size();
    if (const auto info = fs.Stat(file.path)) file.mtime_ms = info->mtime_ms;
  }
  std::string fingerprint = StrCat("table ", path, "\n");
  for (const std::string& c : options.columns) fingerprint += StrCat("column ", c, "\n");
  for (const Filter& f : options.filters) {
    fingerprint += StrCat("filter ", f.column, " ", static_cast<int>(f.op), " ", f.value.index(), " ");
    std::visit([&](const auto& v) { fingerprint += StrCat(v, "\n"); }, f.value);
  }
  for (const DataFile& f : files) {
    fingerprint += StrCat("file ", f.path, " ", f.size, " ", f.mtime_ms, " deleted ", f.deleted.size(), "\n");
  }
  auto source = std::make_shared<ParquetTableSource>(std::move(files), options, std::move(partitions), where);
  source->set_fingerprint(std::move(fingerprint));
  return source;
}

}  // namespace

std::shared_ptr<RowSource> OpenTable(const std::string& path, const TableOptions& options, FileSystem& fs) {
  try {
    return OpenTableImpl(path, options, fs);
  } catch (...) {
    if (options.rank < 0) throw;
    RethrowWithContext(StrCat("rank ", options.rank, ": "));
  }
}

}  // namespace lakerun::data
