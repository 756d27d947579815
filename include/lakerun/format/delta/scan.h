// Reading a Delta table's rows: file pruning by partition values and statistics, then each data file through
// lakerun::parquet with deletion vectors applied (by row position), partition columns materialised from the log,
// column mapping resolved (physical names in name mode, Parquet field ids in id mode) and columns missing from a
// file read as null (schema evolution).
//
//   DeltaTable table("/data/t");
//   Snapshot snap = table.Latest();
//   ScanOptions opts;
//   opts.columns = {"image", "label"};
//   opts.filter = Filter::Parse("split = 'train' and label < 5");
//   TableScan scan(table, snap, opts);
//   while (auto batch = scan.Next()) { for (const auto& row : batch->rows) ... }
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/filter.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::delta {

/// Filters are lakerun's one filter expression (format/filter.h). Against a table, a filter's columns are logical
/// names (top-level, or dotted paths of struct leaves); string constants on date and timestamp columns are parsed
/// as dates / ISO-8601 timestamps, and decimal columns compare as numbers.
using Filter = format::Filter;

struct ScanOptions {
  /// Top-level columns (logical names) to return, in this order; empty: every column in schema order.
  std::vector<std::string> columns;
  /// Rows to return: prunes files (partition values exactly, data columns by the add's min/max/nullCount stats)
  /// and filters the rows read.
  Filter filter;
  /// Rows read per Parquet read call.
  int64_t batch_rows = 65536;
};

/// The field a filter column names: a top-level field, or a dotted path through struct fields; nullptr if none.
const StructField* FindFilterColumn(const Snapshot& snapshot, const std::string& column);
/// The physical path (data files' and stats' names: physical names under column mapping) of a filter column's
/// logical path; empty when no field has that path.
std::vector<std::string> PhysicalColumnPath(const Snapshot& snapshot, const std::string& column);
/// `filter` with its constants in the form the snapshot's column types compare with (see Filter above). Throws
/// InvalidArgument naming the table and column for an unknown column or a constant of the wrong kind.
Filter BindFilter(const Snapshot& snapshot, const Filter& filter);
/// A value of a column of `type` as a bound filter compares it (decimals as numbers; other values unchanged).
parquet::Value FilterValue(const parquet::Value& value, const DataType& type);
/// The typed partition value of `field` (a partition column) in `file`.
parquet::Value PartitionValue(const Snapshot& snapshot, const AddFile& file, const StructField& field);
/// Whether the file may hold rows matching a bound filter (false only when its partition values or stats prove it
/// cannot). A file's stats are parsed only when a data column's statistics are asked for.
bool FileMayMatch(const Snapshot& snapshot, const AddFile& file, const Filter& bound_filter);
/// FileMayMatch for many files: the filter's columns are resolved once, and each file's stats are parsed only for
/// those columns (delta/file_stats.h), only when a data column is asked about. `snapshot` must outlive it.
class FilePruner {
 public:
  FilePruner(const Snapshot& snapshot, const Filter& bound_filter);
  bool MayMatch(const AddFile& file) const;

 private:
  struct Column {
    const StructField* field = nullptr;
    bool partition = false;
    std::string stats_key;  // dotted physical path in the stats; empty when stats cannot hold it
  };
  const Snapshot& snapshot_;
  Filter filter_;
  std::map<std::string, Column> columns_;                    // by filter column
  std::map<std::string, const DataType*> stats_columns_;     // stats key -> type, for ParseFileStats
};

/// The live files that may hold rows matching `filter` (bound here), in snapshot order.
std::vector<AddFile> PruneFiles(const Snapshot& snapshot, const Filter& filter);

/// The rows of one data file.
struct FileBatch {
  const AddFile* file = nullptr;
  std::string path;                   ///< file-system path of the data file
  int64_t rows_in_file = 0;           ///< physical rows in the Parquet file
  int64_t deleted = 0;                ///< rows dropped by the deletion vector
  std::vector<parquet::Value> rows;   ///< struct Values of the selected columns (logical names)
};

/// One data file of a scan, resolved for bulk readers that decode parquet::ColumnData themselves (the data loader):
/// which file columns to read, the typed partition values and the rows the deletion vector removes.
struct FileScanTask {
  AddFile file;
  std::string path;  ///< file-system path of the data file
  /// Per requested column (logical name, in order): the data file's top-level field that holds it, or nullopt for
  /// a partition column (see partition_values) or a column to read as null. Without id column mapping the field is
  /// the expected name and may still be absent from an older file (schema evolution): treat absent as null.
  std::vector<std::pair<std::string, std::optional<std::string>>> columns;
  std::map<std::string, parquet::Value> partition_values;  ///< typed, by logical name
  std::vector<uint64_t> deleted_rows;                      ///< sorted row positions to skip
};

/// Plans a scan without reading data: pruned files with resolved columns and loaded deletion vectors.
std::vector<FileScanTask> PlanScan(const DeltaTable& table, const Snapshot& snapshot, const ScanOptions& options = {});

class TableScan {
 public:
  /// `table` and `snapshot` must outlive the scan. Throws InvalidArgument for unknown columns or bad filters.
  TableScan(const DeltaTable& table, const Snapshot& snapshot, ScanOptions options = {});

  /// Files the scan will read (after pruning).
  const std::vector<AddFile>& files() const { return files_; }
  /// Reads the next file; std::nullopt after the last. Errors name the table, version and data file.
  std::optional<FileBatch> Next();
  /// Every remaining row.
  std::vector<parquet::Value> ReadAll();

 private:
  FileBatch ReadFile(const AddFile& file);

  const DeltaTable& table_;
  const Snapshot& snapshot_;
  ScanOptions options_;
  std::vector<const StructField*> columns_;
  std::vector<AddFile> files_;
  size_t next_ = 0;
};

}  // namespace lakerun::delta
