// OpenTable: Parquet files and Delta snapshots as a RowSource whose units are (file, row group) pairs.
#include "lakerun/data/table_source.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <new>
#include <optional>

#include "error_context.h"
#include "hive_partitions.h"
#include "leaf_form.h"
#include "partition_column.h"
#include "scratch_pool.h"
#include "lakerun/base/error.h"
#include "lakerun/base/thread_pool.h"
#include "spaced_column.h"
#include "table_leaves.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/values.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/metadata.h"
#include "lakerun/format/parquet/page_pruning.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

struct DataFile {
  std::string path;
  // Size and modification time as the folder's listing or the Delta log gives them (no Stat or HEAD per file); a
  // size of 0 is unknown (a log without sizes: no Parquet file is empty) until the file is open.
  uint64_t size = 0;
  int64_t mtime_ms = 0;
  std::shared_ptr<const pq::ParquetFile> file;  // shared with the sources WithUnitBytes makes
  std::vector<uint64_t> deleted;  // sorted row positions removed by a Delta deletion vector
  std::map<std::string, pq::Value> partition_values;  // the file's typed value of every partition column
  // Row groups the filter's statistics ruled out (TableOptions::filter), by index; empty: none.
  std::vector<uint8_t> pruned_row_groups;
  // Delta decimal partition columns: the unscaled value (DecimalForm::kUnscaledInt64), by column.
  std::map<std::string, pq::Value> partition_unscaled;

  bool RowGroupPruned(int rg) const {
    return static_cast<size_t>(rg) < pruned_row_groups.size() && pruned_row_groups[static_cast<size_t>(rg)];
  }
};

// A table's columns: its leaves (table_leaves.h), and its partition columns with their types (a Delta table's, or
// the key=value folders of loose Parquet files).
struct TableSchema {
  std::map<std::string, delta::DataTypePtr> types;  // partition columns
  // Delta tables: the leaves of the table's schema, which (not a data file's) defines the columns. Loose Parquet
  // files: the first file's leaves.
  bool is_delta = false;
  delta::ColumnMappingMode mapping = delta::ColumnMappingMode::kNone;
  delta::DataTypePtr schema;  // Delta tables: owns the types the leaves point to
  std::vector<TableLeaf> leaves;
  std::map<std::string, size_t> leaf_index;  // leaves by name (a wide table's columns are looked up per file)

  void SetLeaves(std::vector<TableLeaf> all) {
    leaves = std::move(all);
    for (size_t i = 0; i < leaves.size(); ++i) leaf_index.emplace(leaves[i].name, i);
  }
  bool Has(const std::string& name) const { return types.count(name) > 0; }
  const TableLeaf* Leaf(const std::string& name) const {
    const auto it = leaf_index.find(name);
    return it == leaf_index.end() ? nullptr : &leaves[it->second];
  }
  // The columns `name` stands for: a partition column, a leaf, or every leaf under a struct (or list, map).
  std::vector<std::string> Expand(const std::string& name, const std::string& where) const {
    if (Has(name) || Leaf(name) != nullptr) return {name};
    std::vector<std::string> under;
    for (const TableLeaf& leaf : leaves) {
      if (leaf.name.size() > name.size() && leaf.name.compare(0, name.size(), name) == 0 && leaf.name[name.size()] == '.') {
        under.push_back(leaf.name);
      }
    }
    if (!under.empty()) return under;
    std::string known;
    for (const TableLeaf& leaf : leaves) known += (known.empty() ? "" : ", ") + leaf.name;
    for (const auto& partition : types) known += (known.empty() ? "" : ", ") + partition.first;
    LAKERUN_THROW(InvalidArgument, where, ": no column '", name, "' (columns: ", known, ")");
  }
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
  bool absent = false;     // a Delta column the file lacks (added to the table later): null on every row
  bool is_list = false;
  std::vector<int16_t> list_def_levels;  // lists: per level, the definition level at which that list is present
  LeafForm form;               // how the stored values become the column's elements
};

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The .parquet files under `dir` with their listed size and modification time (FileInfo::name: the whole path).
void ListParquetFiles(FileSystem& fs, const std::string& dir, std::vector<FileInfo>* out) {
  for (FileInfo entry : fs.List(dir)) {
    if (StartsWith(entry.name, "_") || StartsWith(entry.name, ".")) continue;
    const std::string path = JoinPath(dir, entry.name);
    if (entry.is_directory) {
      ListParquetFiles(fs, path, out);
    } else if (entry.name.size() > 8 && entry.name.compare(entry.name.size() - 8, 8, ".parquet") == 0) {
      entry.name = path;
      out->push_back(std::move(entry));
    }
  }
}

// The Parquet files of a table that is not a Delta table, sorted, with their sizes and modification times: every
// .parquet file under the folder `path`, or the file `path`. The folder's listing comes first (one round trip on an
// object store, where a Stat is two); a Stat only when it shows nothing.
std::vector<FileInfo> ListTableFiles(FileSystem& fs, const std::string& path) {
  std::vector<FileInfo> listed;
  try {
    ListParquetFiles(fs, path, &listed);
  } catch (const IoError&) {
    listed.clear();  // not a folder, or not one that lists: the Stat below tells which
  }
  if (listed.empty()) {
    const std::optional<FileInfo> info = fs.Stat(path);
    LAKERUN_CHECK_AS(IoError, info.has_value(), "cannot open table ", path, ": no such file or directory");
    if (info->is_directory) {
      ListParquetFiles(fs, path, &listed);  // again, so that a folder's listing error reaches the caller
    } else {
      listed.push_back(*info);
      listed.back().name = path;
    }
  }
  std::sort(listed.begin(), listed.end(), [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  return listed;
}

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The shape of nested list column `leaf` of `file`: `shape_meta` (its lakerun.shape metadata) when that has a
// dimension per level, else a guess from the first row of the first row group with one (NestedListShape), else zeros
// (no row has an element at every level: every list is null or empty, or a later file tells).
std::vector<int64_t> NestedShape(const pq::ParquetFile& file, const FileLeaf& leaf,
                                 const std::optional<std::vector<int64_t>>& shape_meta) {
  if (shape_meta && shape_meta->size() == leaf.list_def_levels.size()) return *shape_meta;
  for (size_t rg = 0; rg < file.metadata().row_groups.size(); ++rg) {
    if (file.metadata().row_groups[rg].num_rows == 0) continue;
    const pq::ColumnData data = file.ReadColumnChunk(static_cast<int>(rg), leaf.column);
    if (auto shape = NestedListShape(data, leaf.list_def_levels)) return *shape;
  }
  return std::vector<int64_t>(leaf.list_def_levels.size(), 0);
}

// Whether a nested list shape was seen in data (NestedShape's zeros were not).
bool ShapeKnown(const std::vector<int64_t>& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
}

// The loader's view of leaf `leaf` (table column `name`) of `file`, and where its values live. `known`: the
// column as an earlier file described it (nullptr for the first file), whose nested list shape this file takes.
ColumnInfo Describe(const pq::ParquetFile& file, const std::string& name, const FileLeaf& leaf,
                    const delta::DataType* table_type, const ColumnForm& form, const ColumnInfo* known,
                    ColumnLayout* layout) {
  const pq::ColumnDescriptor& d = file.schema().column(leaf.column);
  const std::string where = StrCat(file.path(), " column '", name, "'");
  layout->leaf = leaf.column;
  layout->is_list = leaf.repetition > 0;
  layout->list_def_levels = leaf.list_def_levels;
  layout->form = ChooseLeafForm(d, table_type, form, where);
  ColumnInfo info{name, layout->form.type, layout->form.shape};
  if (layout->form.is_decimal() && layout->form.type == ElementType::kInt64) info.scale = layout->form.target_scale;
  const auto shape_meta = pq::TensorShape(file.metadata(), name);
  if (!layout->is_list) {
    info.nullable = d.max_def_level > 0;
    if (!info.shape.empty() && shape_meta && Product(*shape_meta) == info.shape[0]) info.shape = *shape_meta;
    return info;
  }
  info.is_list = true;
  info.list_levels = leaf.repetition;
  const int16_t outer_def = leaf.list_def_levels.front();
  info.nullable = outer_def > 0 || d.max_def_level > leaf.list_def_levels.back() + 1;
  const bool binary = info.type == ElementType::kBinary && !layout->form.converts();
  LAKERUN_CHECK_AS(NotImplemented, !binary || leaf.repetition == 1, where, " (", d.dotted_path, "): nested lists ",
                   "of strings or bytes (", leaf.repetition, " levels) are not supported by the loader");
  if (binary) return info;  // strings, bytes: shape {}
  LAKERUN_CHECK_AS(NotImplemented, info.type != ElementType::kBinary && info.shape.empty() &&
                   layout->form.source_width > 0, where, ": lists of fixed-length byte arrays or of decimals stored "
                   "as bytes are not supported by the loader");
  if (leaf.repetition > 1) {
    const bool adopt = known != nullptr && known->list_levels == leaf.repetition && ShapeKnown(known->shape);
    info.shape = adopt ? known->shape : NestedShape(file, leaf, shape_meta);
  } else if (shape_meta) {
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

// What partition values alone say of a file: its value of every partition column, nothing of other columns.
format::StatisticsView PartitionStatistics(const std::map<std::string, pq::Value>& values) {
  format::StatisticsView view;
  view.column = [&values](const std::string& column) -> std::optional<format::ColumnStatistics> {
    const auto it = values.find(column);
    if (it == values.end()) return std::nullopt;
    return format::ColumnStatistics::Constant(it->second);
  };
  return view;
}

// The filter's column vector of a decoded chunk of a scalar column.
format::ColumnVector FilterVector(const ColumnChunk& chunk, const ColumnInfo& info, const std::string& where) {
  LAKERUN_CHECK(!info.is_list && info.elements_per_row() == 1, where, ": filter on column '", info.name,
                "', which is not a scalar column (", ToString(info.type), " of ", info.shape.size(),
                "-d shape); filters take scalar columns");
  using T = format::ColumnVector::Type;
  format::ColumnVector v;
  switch (info.type) {
    case ElementType::kBool: v.type = T::kBool; break;
    case ElementType::kUInt8: v.type = T::kUInt8; break;
    case ElementType::kInt8: v.type = T::kInt8; break;
    case ElementType::kInt16: v.type = T::kInt16; break;
    case ElementType::kInt32: v.type = T::kInt32; break;
    case ElementType::kInt64: v.type = T::kInt64; break;
    case ElementType::kFloat32: v.type = T::kFloat; break;
    case ElementType::kFloat64: v.type = T::kDouble; break;
    case ElementType::kBinary: v.type = T::kBytes; break;
  }
  v.values = chunk.data;
  v.offsets = chunk.offsets;
  v.views = chunk.views;
  v.validity = chunk.validity;
  return v;
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
  if (chunk.value_offsets) bytes += static_cast<size_t>(chunk.offsets[rows] - chunk.offsets[0] + 1) * sizeof(int64_t);
  if (chunk.validity) bytes += rows;
  if (chunk.views) bytes += rows * sizeof(std::string_view);
  return bytes;
}

class ParquetTableSource final : public RowSource {
 public:
  ParquetTableSource(std::vector<DataFile> files, const TableOptions& options, TableSchema partitions,
                     std::string where)
      : files_(std::move(files)), options_(options), partitions_(std::move(partitions)), where_(std::move(where)) {
    std::vector<std::string> names;
    for (const std::string& name : options.columns) {
      for (std::string& column : partitions_.Expand(name, where_)) names.push_back(std::move(column));
    }
    if (options.columns.empty()) {
      for (const TableLeaf& leaf : partitions_.leaves) {
        // A void column (Spark's NullType) holds nothing but nulls and has no tensor form: left out by default.
        if (leaf.table_type == nullptr || leaf.table_type->kind != delta::TypeKind::kVoid) names.push_back(leaf.name);
      }
    }
    for (const auto& [column, form] : options.forms) {
      LAKERUN_CHECK(std::find(names.begin(), names.end(), column) != names.end(), where_, ": TableOptions::forms "
                    "names column '", column, "', which is not among the columns read");
    }
    layouts_.resize(files_.size());
    infos_.resize(names.size());
    std::vector<std::optional<size_t>> described_by(names.size());  // the file whose column set infos_[c]
    for (size_t c = 0; c < names.size(); ++c) {
      if (partitions_.Has(names[c])) infos_[c] = DescribePartitionColumn(names[c]);
    }
    for (size_t f = 0; f < files_.size(); ++f) {
      for (size_t c = 0; c < names.size(); ++c) {
        const ColumnLayout layout = DescribeFileColumn(f, names[c], &infos_[c], &described_by[c]);
        layouts_[f].push_back(layout);
      }
    }
    DescribeAbsentColumns(names, described_by);
    if (!options.filter.is_true() && !FilterIsOnPartitionsOnly()) ApplyRowFilter();
    for (size_t f = 0; f < files_.size(); ++f) {
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
        if (rg_deleted.size() == rows || files_[f].RowGroupPruned(rg)) continue;
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
  std::string DescribeUnit(size_t unit) const override { return UnitName(units_.at(unit)); }
  std::string UnitName(const Unit& u) const {
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
  std::string Describe() const override { return where_; }

  std::shared_ptr<const RowSource> WithUnitBytes(uint64_t unit_bytes) const override {
    for (const auto& file : layouts_) {
      for (const ColumnLayout& layout : file) {
        if (layout.is_list) return nullptr;
      }
    }
    TableOptions options = options_;
    options.unit_bytes = unit_bytes;
    options.filter = Filter();  // files_ carry its outcome (pruned row groups, deleted rows): not applied again
    auto sliced = std::make_shared<ParquetTableSource>(files_, options, partitions_, where_);
    sliced->set_fingerprint(fingerprint_);
    return sliced;
  }
  void set_fingerprint(std::string f) { fingerprint_ = std::move(f); }

  std::shared_ptr<const UnitData> ReadUnit(size_t index) const override { return ReadUnitWith(index, {}); }

  // One announcement per file, in the order the files are first needed, so that its row groups' chunks coalesce.
  void Prefetch(const std::vector<size_t>& units) const override {
    std::vector<size_t> file_order;
    std::map<size_t, std::vector<int>> row_groups;  // by file
    for (size_t index : units) {
      const Unit& unit = units_.at(index);
      if (unit.sliced()) continue;
      std::vector<int>& of_file = row_groups[unit.file];
      if (of_file.empty()) file_order.push_back(unit.file);
      of_file.push_back(unit.row_group);
    }
    for (size_t file : file_order) files_[file].file->WillReadRowGroups(row_groups[file], StoredLeaves(file));
  }

  std::shared_ptr<const UnitData> ReadUnitWith(size_t index, const UnitReadOptions& options) const override {
    return Read(units_.at(index), options);
  }

  // The Parquet columns file `file` stores for the projection (not partition values or absent columns).
  std::vector<int> StoredLeaves(size_t file) const {
    std::vector<int> leaves;
    for (const ColumnLayout& layout : layouts_[file]) {
      if (!layout.partition && !layout.absent) leaves.push_back(layout.leaf);
    }
    return leaves;
  }

  // The projected columns of `unit`'s rows (any rows of one row group, not only this source's units).
  std::shared_ptr<const UnitData> Read(const Unit& unit, const UnitReadOptions& options) const {
    const pq::ParquetFile& file = *files_[unit.file].file;
    // The chunk's raw bytes and decompressed pages go to memory earlier decodes (of any thread or loader) used,
    // instead of freshly allocated and page-faulted memory every time (scratch_pool.h).
    const ScratchPool::Lease scratch = scratch_.Borrow();
    auto out = std::make_shared<UnitData>();
    out->rows = unit.rows;
    if (!unit.sliced()) file.WillReadRowGroup(unit.row_group, StoredLeaves(unit.file));
    for (size_t c = 0; c < infos_.size(); ++c) {
      const ColumnInfo& info = infos_[c];
      const ColumnLayout& layout = layouts_[unit.file][c];
      if (layout.partition || layout.absent) {  // the file's value (or null) on each of the unit's rows
        const pq::Value value = layout.absent ? pq::Value::Null() : PartitionTensorValue(files_[unit.file], info.name);
        ColumnChunk chunk = ConstantColumn(info, value, unit.rows);
        out->bytes += ChunkBytes(chunk, unit.rows);
        out->columns.push_back(std::move(chunk));
        continue;
      }
      auto data = std::make_shared<pq::ColumnData>();
      // Byte values (images, FIXED_LEN_BYTE_ARRAY tensors) as views into the decompressed pages: one copy of every
      // value less than the copied form. Units a deletion vector compacts are copied anyway.
      pq::ColumnReadOptions read;
      read.byte_views = options.allow_views && !layout.is_list && unit.deleted.empty() && !layout.form.converts() &&
                        (info.type == ElementType::kBinary || info.type == ElementType::kUInt8);
      if (unit.sliced()) {  // only the pages holding the unit's rows (columns without repetition)
        read.row_begin = static_cast<int64_t>(unit.begin);
        read.row_end = static_cast<int64_t>(unit.begin + unit.rows);
      }
      file.ReadColumnChunk(unit.row_group, layout.leaf, data.get(), scratch.get(), read);  // ResourceError itself
      const std::string where = StrCat(UnitName(unit), " column '", info.name, "'");
      try {
        ShapeColumn(unit, info, layout, std::move(data), where, out.get());
      } catch (const std::bad_alloc&) {
        // Spacing nulls, converting or copying the decoded values: about a copy of what the chunk decodes to.
        const pq::ColumnChunkMeta& meta = file.metadata().row_groups[static_cast<size_t>(unit.row_group)]
                                              .columns[static_cast<size_t>(layout.leaf)];
        const auto bytes = static_cast<unsigned long long>(std::max<int64_t>(0, meta.total_uncompressed_size));
        ThrowAllocationFailure(where, bytes, "the column's decoded values (about the chunk's uncompressed size)");
      }
    }
    // A slice copies its rows out, releasing the page memory of the pages it read (they hold rows of its
    // neighbours too): the cache then holds, and counts, only the slice's own rows.
    if (!unit.deleted.empty() || unit.sliced()) {
      try {
        Compact(unit, out.get());
      } catch (const std::bad_alloc&) {
        ThrowAllocationFailure(UnitName(unit), out->bytes, "the unit's rows");
      }
    }
    return out;
  }

 private:
  // Column `info` of `unit` decoded into `data`: spaced (nulls, lists), converted and cut to the unit's rows, then
  // appended to `out`. `where` names the unit and column.
  void ShapeColumn(const Unit& unit, const ColumnInfo& info, const ColumnLayout& layout,
                   std::shared_ptr<pq::ColumnData> data, const std::string& where, UnitData* out) const {
    // Rows the decoded pages hold (from row `first` of the row group): the unit's rows, or more when sliced.
    const uint64_t first = unit.sliced() ? static_cast<uint64_t>(data->first_row()) : 0;
    const uint64_t rows = unit.sliced() ? static_cast<uint64_t>(data->num_slots()) : unit.rg_rows;
    // Bytes per row as stored (0: BYTE_ARRAY values), before any conversion to the column's element type.
    const size_t stored_row_bytes = !layout.form.converts()
                                        ? (info.type == ElementType::kBinary ? 0 : info.row_bytes())
                                        : layout.form.source_width * static_cast<size_t>(info.elements_per_row());
    ColumnChunk chunk;
    if (layout.is_list && info.type == ElementType::kBinary) {  // strings, bytes: offsets per element
      data->Materialize();
      chunk = SpacedColumn::View(SpaceList(data, rows, layout.list_def_levels, info, where));
    } else if (layout.is_list) {
      const auto length = rows > 0 ? data->FixedListLength() : std::optional<int64_t>(0);
      if (info.list_levels == 1 && length && *length == info.elements_per_row() &&
          static_cast<uint64_t>(data->num_values()) == rows * static_cast<uint64_t>(*length)) {
        chunk = Dense(data, stored_row_bytes);  // the fast path: every row a non-null list of the column's length
      } else {
        chunk = SpacedColumn::View(SpaceList(data, rows, layout.list_def_levels, info, where));
      }
    } else if (static_cast<uint64_t>(data->num_values()) != rows) {
      data->Materialize();
      chunk = SpacedColumn::View(SpaceFlat(data, rows, where));  // nulls
    } else {
      chunk = Dense(data, stored_row_bytes);
      if (stored_row_bytes > 0 && chunk.views == nullptr) {
        LAKERUN_CHECK_AS(CorruptDataError, chunk.size_bytes >= rows * stored_row_bytes, where, ": ",
                         chunk.size_bytes, " value bytes for ", rows, " rows of ", stored_row_bytes, " bytes");
      }
    }
    if (layout.form.converts()) {
      chunk = ConvertChunk(layout.form, chunk, rows, info.elements_per_row(), first, where);
    }
    out->bytes += ChunkBytes(chunk, rows);
    LAKERUN_CHECK_AS(CorruptDataError, first <= unit.begin && unit.begin + unit.rows <= first + rows, where,
                     ": pages read hold rows ", first, "-", first + rows, " of the row group, not the unit's");
    out->columns.push_back(SkipRows(std::move(chunk), unit.begin - first, info));
  }

  // Column `name` of file f: its layout, and its ColumnInfo in *info when no earlier file set it (*described_by),
  // else checked against it.
  ColumnLayout DescribeFileColumn(size_t f, const std::string& name, ColumnInfo* info,
                                  std::optional<size_t>* described_by) const {
    ColumnLayout layout;
    if (partitions_.Has(name)) {
      layout.partition = true;
      return layout;
    }
    const TableLeaf* leaf = nullptr;
    const std::optional<FileLeaf> file_leaf = FindFileLeaf(f, name, &leaf);
    if (!file_leaf) {
      layout.absent = true;
      return layout;
    }
    const auto form = options_.forms.find(name);
    ColumnInfo described = data::Describe(*files_[f].file, name, *file_leaf, leaf->table_type,
                                          form == options_.forms.end() ? ColumnForm{} : form->second,
                                          *described_by ? info : nullptr, &layout);
    if (!*described_by) {
      *info = described;
      *described_by = f;
    } else {
      info->nullable = info->nullable || described.nullable;
      // A nested list column whose earlier files held no complete row takes its shape from this file.
      if (info->list_levels > 1 && !ShapeKnown(info->shape)) info->shape = described.shape;
      // A list's length without lakerun.shape metadata is a guess from each file's first row group: files may
      // guess differently (rows of another length then need a ListPolicy, as within one file).
      const bool same_shape = described.shape == info->shape || (described.is_list && info->is_list);
      LAKERUN_CHECK(described.type == info->type && same_shape && described.list_levels == info->list_levels,
                    files_[f].path, ": column '", name, "' is ", ToString(described.type), " of ",
                    described.shape.size(), "-d shape, but in ", files_[**described_by].path, " it is ",
                    ToString(info->type), " of ", info->shape.size(), "-d shape");
    }
    LAKERUN_CHECK(options_.unit_bytes == 0 || !layout.is_list, files_[f].path, ": column '", name,
                  "' is a list: TableOptions::unit_bytes can only slice row groups of columns without "
                  "repetition; leave it out of the projection or set unit_bytes to 0");
    return layout;
  }

  // Where table column `name` (a leaf) lives in file f; std::nullopt when a Delta table's file lacks it (schema
  // evolution: null). A loose Parquet file that lacks it, or a file holding something else there, is an error.
  std::optional<FileLeaf> FindFileLeaf(size_t f, const std::string& name, const TableLeaf** leaf) const {
    const pq::Schema& schema = files_[f].file->schema();
    *leaf = partitions_.Leaf(name);
    LAKERUN_CHECK(*leaf != nullptr, where_, ": no column '", name, "'");
    std::string mismatch;
    std::optional<FileLeaf> found = ResolveLeaf(schema, **leaf, partitions_.mapping, &mismatch);
    LAKERUN_CHECK_AS(CorruptDataError, mismatch.empty(), files_[f].path, ": column '", name, "': ", mismatch);
    LAKERUN_CHECK(found || partitions_.is_delta, files_[f].path, ": no column '", name, "' (schema: ",
                  schema.ToString(), ")");
    return found;
  }

  // Applies the filter to the rows of the files (ApplyRowFilter, once per table): a row group whose footer
  // statistics rule it out is marked pruned without being read; in the others the page index (where the file has
  // one) rules out pages, and the filter's columns are decoded only for the rows of the pages left: the rows
  // failing the filter join the file's deleted rows, so units drop them as they drop deletion-vector rows. Sources
  // made from files_ (WithUnitBytes) inherit the outcome.
  void ApplyRowFilter() {
    const std::shared_ptr<ParquetTableSource> probe = FilterProbe();
    for (size_t f = 0; f < files_.size(); ++f) {
      DataFile& file = files_[f];
      const pq::FileMetaData& md = file.file->metadata();
      file.pruned_row_groups.assign(md.row_groups.size(), 0);
      std::vector<uint64_t> deleted;
      auto next = file.deleted.begin();
      uint64_t file_row = 0;
      for (int rg = 0; rg < static_cast<int>(md.row_groups.size()); ++rg) {
        const auto rows = static_cast<uint64_t>(md.row_groups[rg].num_rows);
        std::vector<uint64_t> rg_deleted;
        while (next != file.deleted.end() && *next < file_row + rows) rg_deleted.push_back(*next++ - file_row);
        if (rows > 0) {
          if (!format::MayMatch(options_.filter, RowGroupStatistics(f, rg))) {
            file.pruned_row_groups[static_cast<size_t>(rg)] = 1;
          } else if (rg_deleted.size() < rows) {
            const std::vector<pq::RowRange> pages = pq::PagesMayMatch(
                *file.file, rg, options_.filter, [this, f](const std::string& c) { return FilterSource(f, c); });
            if (pages.empty()) {
              file.pruned_row_groups[static_cast<size_t>(rg)] = 1;
            } else {
              rg_deleted = FilterRows(*probe, Unit{f, rg, rows, 0, rows, {}}, pages, std::move(rg_deleted));
            }
          }
        }
        for (uint64_t r : rg_deleted) deleted.push_back(file_row + r);
        file_row += rows;
      }
      file.deleted = std::move(deleted);
    }
  }

  // Delta columns some file lacks are nullable; those no file holds are typed from the table's schema.
  void DescribeAbsentColumns(const std::vector<std::string>& names,
                             const std::vector<std::optional<size_t>>& described_by) {
    for (size_t c = 0; c < names.size(); ++c) {
      if (partitions_.Has(names[c])) continue;
      bool some_file_lacks = false;
      for (const auto& layouts : layouts_) some_file_lacks = some_file_lacks || layouts[c].absent;
      if (!described_by[c]) {
        const TableLeaf* leaf = partitions_.Leaf(names[c]);
        LAKERUN_INTERNAL_ASSERT(leaf != nullptr && leaf->table_type != nullptr,
                                "a column no file holds outside a Delta table");
        infos_[c] = PartitionColumnInfo(names[c], *leaf->table_type, /*nullable=*/true, FormOf(names[c]), where_);
      }
      infos_[c].nullable = infos_[c].nullable || some_file_lacks;
    }
  }

  ColumnForm FormOf(const std::string& column) const {
    const auto it = options_.forms.find(column);
    return it == options_.forms.end() ? ColumnForm{} : it->second;
  }

  bool FilterIsOnPartitionsOnly() const {
    for (const std::string& column : options_.filter.Columns()) {
      if (!partitions_.Has(column)) return false;
    }
    return true;
  }

  // A source over the same files reading the filter's columns of every non-empty row group (one unit each).
  std::shared_ptr<ParquetTableSource> FilterProbe() const {
    TableOptions probe_options;
    probe_options.columns = options_.filter.Columns();
    probe_options.memory_map = options_.memory_map;
    probe_options.verify_page_checksums = options_.verify_page_checksums;
    std::vector<DataFile> files = files_;
    for (DataFile& file : files) file.deleted.clear();
    return std::make_shared<ParquetTableSource>(std::move(files), probe_options, partitions_, where_);
  }

  // Where filter column `column` comes from in file f: a partition value or null (a Delta column the file lacks)
  // on every row, or the file's leaf when the filter compares its values as stored (not converted values, nor list
  // elements); else nothing is known.
  pq::FilterColumnSource FilterSource(size_t f, const std::string& column) const {
    if (partitions_.Has(column)) return {std::nullopt, PartitionStatistics(files_[f].partition_values).column(column)};
    const TableLeaf* leaf = nullptr;
    const std::optional<FileLeaf> file_leaf = FindFileLeaf(f, column, &leaf);
    if (!file_leaf) return {std::nullopt, format::ColumnStatistics::Constant(pq::Value::Null())};
    const pq::ColumnDescriptor& d = files_[f].file->schema().column(file_leaf->column);
    const LeafForm form = ChooseLeafForm(d, leaf->table_type, ColumnForm{}, where_);
    if (file_leaf->repetition > 0 || !form.KeepsValues() || !form.shape.empty()) return {};
    return {file_leaf->column, std::nullopt};
  }

  // What a row group's footer says of the filter's columns.
  format::StatisticsView RowGroupStatistics(size_t f, int rg) const {
    const format::StatisticsView footer = pq::RowGroupStatistics(files_[f].file->metadata(), rg);
    format::StatisticsView view;
    view.num_rows = footer.num_rows;
    view.column = [this, f, footer](const std::string& column) -> std::optional<format::ColumnStatistics> {
      const pq::FilterColumnSource source = FilterSource(f, column);
      if (!source.leaf) return source.fixed;
      return footer.column(files_[f].file->schema().column(*source.leaf).dotted_path);
    };
    return view;
  }

  // The rows of row group `rows` (a whole row group) that fail the filter, merged into `deleted` (sorted positions
  // in the row group): the rows outside `pages` (which the page index rules out) and those in them failing the
  // filter, evaluated on the filter's columns decoded for those rows only.
  std::vector<uint64_t> FilterRows(const ParquetTableSource& probe, const Unit& rows,
                                   const std::vector<pq::RowRange>& pages, std::vector<uint64_t> deleted) const {
    std::vector<uint8_t> keep(rows.rows, 0);
    for (const pq::RowRange& range : pages) {
      const Unit part{rows.file, rows.row_group, rows.rg_rows, static_cast<uint64_t>(range.begin),
                      static_cast<uint64_t>(range.size()), {}};
      const std::shared_ptr<const UnitData> data = probe.Read(part, {});
      std::vector<format::ColumnVector> vectors;
      for (size_t c = 0; c < probe.infos_.size(); ++c) {
        vectors.push_back(FilterVector(data->columns[c], probe.infos_[c], probe.UnitName(part)));
      }
      format::EvaluateRows(options_.filter, range.size(), [&](const std::string& column) {
        const auto it = std::find_if(probe.infos_.begin(), probe.infos_.end(),
                                     [&](const ColumnInfo& info) { return info.name == column; });
        return vectors[static_cast<size_t>(it - probe.infos_.begin())];
      }, keep.data() + range.begin);
    }
    std::vector<uint64_t> out;
    out.reserve(rows.rows);
    auto next = deleted.begin();
    for (uint64_t r = 0; r < rows.rows; ++r) {
      const bool was_deleted = next != deleted.end() && *next == r;
      if (was_deleted) ++next;
      if (was_deleted || !keep[r]) out.push_back(r);
    }
    return out;
  }

  // Decoded bytes of the projected columns of a row group, from the footer.
  uint64_t ProjectedBytes(size_t file, int row_group) const {
    const pq::RowGroupMeta& rg = files_[file].file->metadata().row_groups.at(row_group);
    uint64_t bytes = 0;
    for (size_t c = 0; c < layouts_[file].size(); ++c) {
      const ColumnLayout& layout = layouts_[file][c];
      if (layout.absent) continue;
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
  // offsets, element validity and value offsets aligned).
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
      if (chunk.value_offsets != nullptr) out->value_offsets.push_back(0);
      for (uint64_t r : kept) {
        if (chunk.value_offsets != nullptr) {  // a list of binary values: its elements' bytes and byte offsets
          const int64_t first = chunk.offsets[r], end = chunk.offsets[r + 1];
          const int64_t shift = static_cast<int64_t>(out->data.size()) - chunk.value_offsets[first];
          for (int64_t e = first; e < end; ++e) out->value_offsets.push_back(chunk.value_offsets[e + 1] + shift);
          out->data.insert(out->data.end(), chunk.data + chunk.value_offsets[first],
                           chunk.data + chunk.value_offsets[end]);
          if (chunk.element_validity) {
            out->element_validity.insert(out->element_validity.end(), chunk.element_validity + first,
                                         chunk.element_validity + end);
          }
          out->offsets.push_back(static_cast<int64_t>(out->value_offsets.size() - 1));
          if (chunk.validity) out->validity.push_back(chunk.validity[r]);
          continue;
        }
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
    return PartitionColumnInfo(name, *partitions_.types.at(name), nullable, FormOf(name), where_);
  }

  // A partition column's value in its tensor form (ColumnForm): filters compare decimals as float64 and
  // timestamps in microseconds (DataFile::partition_values).
  pq::Value PartitionTensorValue(const DataFile& file, const std::string& name) const {
    const pq::Value& value = file.partition_values.at(name);
    if (value.is_null()) return value;
    const ColumnForm form = FormOf(name);
    const delta::TypeKind kind = partitions_.types.at(name)->kind;
    if (kind == delta::TypeKind::kDecimal && form.decimal == DecimalForm::kUnscaledInt64) {
      return file.partition_unscaled.at(name);
    }
    const bool timestamp = kind == delta::TypeKind::kTimestamp || kind == delta::TypeKind::kTimestampNtz;
    if (timestamp && form.timestamp == TimestampUnit::kNanos) {
      int64_t nanos = 0;
      LAKERUN_CHECK(!__builtin_mul_overflow(value.as_int(), 1000, &nanos), file.path, ": partition value of '", name,
                    "' is beyond int64 in nanoseconds (years 1677-2262); read it in microseconds");
      return pq::Value::Int(nanos);
    }
    return value;
  }

  TableSchema partitions_;
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
  reader.verify_crc = options.verify_page_checksums;
  return reader;
}

// Runs open(i) for every file: on the calling thread for local tables (opening is cheap there), on up to 8 threads
// for remote ones, where each open waits for a few round trips. Every call ends before it returns; the first
// failure in file order is rethrown.
void ForEachFile(size_t count, bool remote, const std::function<void(size_t)>& open) {
  if (!remote || count < 2) {
    for (size_t i = 0; i < count; ++i) open(i);
    return;
  }
  ThreadPool pool(std::min<size_t>(8, count), "open-files");
  std::vector<std::future<void>> done;
  done.reserve(count);
  for (size_t i = 0; i < count; ++i) done.push_back(pool.Submit([&open, i] { open(i); }));
  std::exception_ptr first;
  for (auto& d : done) {
    try {
      d.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::shared_ptr<RowSource> OpenTableImpl(const std::string& path, const TableOptions& opened_with, FileSystem& fs) {
  TableOptions options = opened_with;  // with drop_null_rows folded into the filter (and bound, for Delta)
  std::vector<Filter> conjuncts{options.filter};
  for (const std::string& column : options.drop_null_rows) conjuncts.push_back(Filter::IsNotNull(column));
  options.filter = Filter::And(std::move(conjuncts));
  options.drop_null_rows.clear();
  std::vector<DataFile> files;
  std::vector<const delta::AddFile*> adds;       // of files[i], for a Delta table
  std::optional<delta::Snapshot> kept_snapshot;  // owns them
  TableSchema partitions;
  std::string where = path;
  const bool is_delta = delta::IsDeltaTable(path, fs);
  if (is_delta) {
    delta::DeltaTable table(path, fs);
    const delta::Snapshot& snapshot = kept_snapshot.emplace(
        options.delta_version        ? table.AtVersion(*options.delta_version)
        : options.delta_timestamp_ms ? table.AtTimestamp(*options.delta_timestamp_ms)
                                     : table.Latest());
    where = snapshot.Describe();
    partitions.is_delta = true;
    partitions.mapping = snapshot.column_mapping_mode();
    partitions.schema = snapshot.metadata.schema;
    partitions.SetLeaves(DeltaLeaves(*partitions.schema, partitions.mapping));
    for (const std::string& name : snapshot.metadata.partition_columns) {
      const delta::StructField* field = snapshot.metadata.schema->FindField(name);
      LAKERUN_CHECK_AS(CorruptDataError, field != nullptr, where, ": partition column '", name,
                       "' is not in the table's schema");
      partitions.types[name] = field->type;
    }
    options.filter = delta::BindFilter(snapshot, options.filter);
    const delta::FilePruner pruner(snapshot, options.filter);
    for (const delta::AddFile& add : snapshot.files) {
      if (!pruner.MayMatch(add)) continue;  // partition values and stats
      DataFile file;
      file.path = snapshot.DataFilePath(add);
      file.size = static_cast<uint64_t>(std::max<int64_t>(add.size, 0));
      file.mtime_ms = add.modification_time;
      for (const auto& [name, type] : partitions.types) {
        // Decimals as their numeric value (filters compare them as numbers); the unscaled one kept beside it.
        const pq::Value value = delta::PartitionValue(snapshot, add, *snapshot.metadata.schema->FindField(name));
        file.partition_values[name] = delta::FilterValue(value, *type);
        if (type->kind == delta::TypeKind::kDecimal) file.partition_unscaled[name] = value;
      }
      files.push_back(std::move(file));
      adds.push_back(&add);
    }
  } else {
    const std::vector<FileInfo> listed = ListTableFiles(fs, path);
    std::vector<std::string> paths;
    for (const FileInfo& f : listed) paths.push_back(f.name);
    // Hive-style key=value folders are partition columns, as in a Delta table (a column the files hold wins).
    HivePartitions hive = ParseHivePartitions(path, paths);
    // Without key=value folders a filter keeps every file, so they all open at once (in parallel on an object
    // store); with them, the first file's columns decide which keys are partition columns, and so which files the
    // filter keeps, before the others open.
    std::vector<std::shared_ptr<const pq::ParquetFile>> opened(paths.size());
    ForEachFile(hive.keys.empty() ? paths.size() : std::min<size_t>(1, paths.size()), IsObjectStorePath(path),
                [&](size_t i) {
                  opened[i] = pq::ParquetFile::Open(fs, paths[i], ReaderOptionsFor(options, is_delta), listed[i].size);
                });
    if (!paths.empty()) {
      const std::shared_ptr<const pq::ParquetFile>& first = opened.front();
      partitions.SetLeaves(ParquetLeaves(first->schema()));
      for (const std::string& key : hive.keys) {
        if (first->schema().FindNode(key) == nullptr) partitions.types[key] = hive.types.at(key);
      }
    }
    const std::vector<std::string> filter_columns = options.filter.Columns();
    const bool on_keys_only = std::all_of(filter_columns.begin(), filter_columns.end(),
                                          [&](const std::string& c) { return partitions.Has(c); });
    for (size_t i = 0; i < paths.size(); ++i) {
      std::map<std::string, pq::Value> values;
      for (const auto& [name, type] : partitions.types) values[name] = hive.values[i].at(name);
      // A filter on folder keys alone is decided per file, exactly (a constant it cannot compare with is an error).
      const bool keep = on_keys_only ? format::Matches(options.filter, [&](const std::string& c) { return values.at(c); })
                                     : format::MayMatch(options.filter, PartitionStatistics(values));
      if (!keep) continue;
      DataFile file;
      file.path = std::move(paths[i]);
      file.size = listed[i].size;
      file.mtime_ms = listed[i].mtime_ms;
      file.file = opened[i];
      for (const auto& [name, type] : partitions.types) file.partition_values[name] = hive.values[i].at(name);
      files.push_back(std::move(file));
    }
  }
  adds.resize(files.size(), nullptr);  // files of a folder have no add action
  ForEachFile(files.size(), IsObjectStorePath(path), [&](size_t i) {
    DataFile& file = files[i];
    const std::optional<uint64_t> size = file.size > 0 ? std::optional<uint64_t>(file.size) : std::nullopt;
    if (!file.file) file.file = pq::ParquetFile::Open(fs, file.path, ReaderOptionsFor(options, is_delta), size);
    file.size = file.file->file_size();
    const delta::AddFile* add = adds[i];
    if (add != nullptr && add->deletion_vector) {
      file.deleted = delta::LoadDeletionVector(fs, kept_snapshot->table_path, *add->deletion_vector,
                                               kept_snapshot->Describe());
      std::sort(file.deleted.begin(), file.deleted.end());
    }
  });
  std::string fingerprint = StrCat("table ", path, "\n");
  for (const std::string& c : options.columns) fingerprint += StrCat("column ", c, "\n");
  for (const auto& [c, form] : options.forms) {
    fingerprint += StrCat("form ", c, " ", static_cast<int>(form.decimal), " ", static_cast<int>(form.timestamp), "\n");
  }
  fingerprint += StrCat("filter ", options.filter.ToString(), "\n");
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
