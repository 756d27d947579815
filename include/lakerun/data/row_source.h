// What the loader reads from: a table of N rows whose projected columns come in I/O units (row groups).
//
// Torch-free. A RowSource knows its row count and its units up front (footers only, no data), so every rank can plan
// an epoch before any read. The loader reads whole units through ReadUnit (from several threads at once) and caches
// them; implementations do no caching of their own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::data {

/// Element type of a column as the loader sees it.
enum class ElementType { kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat32, kFloat64, kBinary };

/// Bytes of one element; 0 for kBinary (variable-length values).
size_t ElementSize(ElementType type);
const char* ToString(ElementType type);

/// A projected column. Each row holds prod(shape) elements of `type` (shape {} is a scalar), except kBinary columns,
/// whose rows are variable-length byte strings (e.g. encoded images).
struct ColumnInfo {
  std::string name;
  ElementType type = ElementType::kFloat32;
  std::vector<int64_t> shape;
  /// Rows (or list elements) may be null: chunks may then carry `validity` / `element_validity`.
  bool nullable = false;
  /// A list column. `shape` is its expected fixed length (from lakerun.shape metadata, or the first row group), but
  /// chunks whose lists differ in length carry element `offsets` (see ColumnChunk). A list of binary values (kBinary
  /// and is_list: array<string>, a map's string keys) has shape {} and chunks that always carry `offsets` and
  /// `value_offsets`.
  bool is_list = false;
  /// Levels of lists of a list column: 1 for array<T>, 2 for array<array<T>>, ... A nested column's `shape` has one
  /// dimension per level, and its offsets count values: row i is a [length / inner, shape[1], ...] tensor, where
  /// inner is the product of the dimensions after the first (inner lists all hold their dimension's count).
  int32_t list_levels = 0;
  /// Decimal columns read as unscaled integers (DecimalForm::kUnscaledInt64): value = element / 10^scale.
  int32_t scale = 0;

  /// Elements per row (1 for scalars).
  int64_t elements_per_row() const;
  /// Values per element of the outermost list: the product of shape[1:] for nested lists, else 1.
  int64_t values_per_item() const;
  /// Bytes per row of fixed-width columns.
  size_t row_bytes() const { return ElementSize(type) * static_cast<size_t>(elements_per_row()); }
};

/// One column of one unit, decoded. Fixed-width: `rows * row_bytes` contiguous bytes at `data`. kBinary: row i is
/// bytes [offsets[i], offsets[i+1]) of `data`. `data` stays valid while `owner` lives (zero-copy views of decoder
/// buffers are fine).
///
/// Nulls and variable-length lists (all pointers below stay valid while `owner` lives; nullptr = absent):
///   - validity: rows entries, 0 where the row is null. Fixed-width rows keep their slot in `data` (contents
///     unspecified); a null binary value or list is empty.
///   - offsets on a non-binary column (ColumnInfo::is_list): row i holds elements [offsets[i], offsets[i+1]) of
///     `data` (in elements, not bytes), for units whose lists are not all of the column's fixed length.
///   - element_validity: one entry per element of `data` (list columns), 0 where the element is null (its bytes
///     unspecified).
///   - value_offsets on a list of binary values (kBinary and ColumnInfo::is_list): element e's bytes are
///     data[value_offsets[e], value_offsets[e+1]), while `offsets` (always present) give each row's elements as
///     above: row i holds elements [offsets[i], offsets[i+1]). A null element (element_validity 0) or a null list's
///     row is empty.
///
/// Views (zero-copy rows of scalar binary and fixed-width byte columns, no nulls): when `views` is set, row i is
/// views[i] (row_bytes long for fixed-width columns) and `data` / `offsets` are unused. Sources produce them only
/// through RowSource::ReadUnitWith with UnitReadOptions::allow_views (never from ReadUnit), to avoid copying decoded
/// pages; RowView() reads either layout.
struct ColumnChunk {
  const uint8_t* data = nullptr;
  size_t size_bytes = 0;
  const int64_t* offsets = nullptr;  // kBinary: rows + 1 entries; lists: see above
  std::shared_ptr<const void> owner;
  const uint8_t* validity = nullptr;
  const uint8_t* element_validity = nullptr;
  const std::string_view* views = nullptr;  // rows entries, or nullptr
  const int64_t* value_offsets = nullptr;   // lists of binary values: elements + 1 byte offsets into `data`

  /// Row i's bytes of a column without list offsets: views[i], data[offsets[i], offsets[i+1]) for binary values,
  /// or `row_bytes` bytes at data + i * row_bytes.
  std::string_view RowView(uint64_t i, size_t row_bytes) const {
    if (views != nullptr) return views[i];
    if (offsets != nullptr) {
      return {reinterpret_cast<const char*>(data) + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i])};
    }
    return {reinterpret_cast<const char*>(data) + i * row_bytes, row_bytes};
  }
};

/// The projected columns of one unit, in RowSource::columns() order.
struct UnitData {
  uint64_t rows = 0;
  std::vector<ColumnChunk> columns;
  /// Memory held, for the loader's cache budget.
  size_t bytes = 0;
};

/// How a consumer that understands every ColumnChunk layout reads a unit (RowSource::ReadUnitWith).
struct UnitReadOptions {
  /// Byte columns may come as ColumnChunk::views instead of contiguous `data` (zero-copy).
  bool allow_views = false;
};

class RowSource {
 public:
  virtual ~RowSource() = default;

  /// Projected columns, in the order ReadUnit returns them.
  virtual const std::vector<ColumnInfo>& columns() const = 0;
  /// Rows, over all units (after pruning).
  virtual uint64_t num_rows() const = 0;
  /// Number of I/O units; unit i covers rows [unit_start(i), unit_start(i + 1)).
  virtual size_t num_units() const = 0;
  /// First row of unit i; unit_start(num_units()) == num_rows().
  virtual uint64_t unit_start(size_t unit) const = 0;
  /// Decodes unit i. Thread-safe. Throws a lakerun::Error naming the file (and row group, column) on bad data.
  virtual std::shared_ptr<const UnitData> ReadUnit(size_t unit) const = 0;
  /// A hint that these units will be read soon, most urgent first: a source on remote storage starts fetching their
  /// bytes (neighbouring units of one file in one request) so that ReadUnit finds them arriving. Returns at once;
  /// thread-safe; the default does nothing.
  virtual void Prefetch(const std::vector<size_t>& units) const { (void)units; }
  /// ReadUnit for consumers that accept more layouts (the loader's cache); the default ignores the options.
  virtual std::shared_ptr<const UnitData> ReadUnitWith(size_t unit, const UnitReadOptions& options) const {
    return ReadUnit(unit);
  }
  /// Names unit i for messages, e.g. "part-0.parquet row group 3".
  virtual std::string DescribeUnit(size_t unit) const = 0;
  /// Names the whole source for messages: the table's path (a Delta table's with its version), or a memory source's
  /// name; empty when unknown.
  virtual std::string Describe() const { return ""; }
  /// Estimated decoded bytes of unit i (from metadata, without reading); 0 when unknown. Used to check the loader's
  /// cache budget against the shuffle's working set.
  virtual uint64_t UnitBytesHint(size_t unit) const { return 0; }
  /// A summary of the source's content that changes when the data changes (file paths, sizes, modification times,
  /// versions, projection, filters); empty when unknown. Keys converter caches.
  virtual std::string Fingerprint() const { return ""; }
  /// The same rows, in the same order, in units of about `unit_bytes` decoded bytes (row slices of the units; see
  /// TableOptions::unit_bytes), or nullptr when this source cannot cut its units (the default; Parquet sources with a
  /// list column). The loader uses it when its cache cannot hold the units one shuffle window reads.
  virtual std::shared_ptr<const RowSource> WithUnitBytes(uint64_t unit_bytes) const { return nullptr; }
};

/// An in-memory RowSource, for tests and for data already in memory. Columns are given whole; `unit_rows` cuts the
/// rows into units.
class MemoryRowSource final : public RowSource {
 public:
  struct Column {
    ColumnInfo info;
    std::vector<uint8_t> bytes;       // fixed-width: rows * row_bytes; kBinary: concatenated values; variable-length
                                      // lists: concatenated elements
    std::vector<int64_t> offsets;     // kBinary: rows + 1 (bytes); lists (info.is_list) of varying length: rows + 1
                                      // (elements); else empty
    std::vector<uint8_t> validity{};  // rows entries, 0 = null (ColumnChunk::validity); empty = no nulls
    std::vector<int64_t> value_offsets{};  // lists of binary values: elements + 1 (bytes); else empty
  };
  /// Throws InvalidArgument when the columns disagree on the row count or unit_rows is 0.
  MemoryRowSource(std::vector<Column> columns, uint64_t unit_rows, std::string name = "memory");

  const std::vector<ColumnInfo>& columns() const override { return infos_; }
  uint64_t num_rows() const override { return rows_; }
  size_t num_units() const override { return static_cast<size_t>((rows_ + unit_rows_ - 1) / unit_rows_); }
  uint64_t unit_start(size_t unit) const override;
  std::shared_ptr<const UnitData> ReadUnit(size_t unit) const override;
  std::string DescribeUnit(size_t unit) const override;
  std::string Describe() const override { return name_; }
  uint64_t UnitBytesHint(size_t unit) const override;

  /// Makes ReadUnit(unit) throw CorruptDataError (for tests of the error path).
  void FailUnit(size_t unit) { failing_unit_ = static_cast<int64_t>(unit); }

 private:
  std::shared_ptr<const std::vector<Column>> data_;
  std::vector<ColumnInfo> infos_;
  uint64_t rows_ = 0;
  uint64_t unit_rows_;
  std::string name_;
  int64_t failing_unit_ = -1;
};

}  // namespace lakerun::data
