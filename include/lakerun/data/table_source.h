// RowSources over lakehouse tables: one Parquet file, a folder of Parquet files, or a Delta table at a version or
// timestamp. Torch-free; no Parquet internals in this header.
//
//   TableOptions t;
//   t.columns = {"image", "label"};
//   t.filter = Filter::Parse("split = 'train' and label < 5");
//   t.delta_version = 12;
//   std::shared_ptr<RowSource> source = OpenTable("/data/fashion_mnist", t);
//
// Without a filter on data columns only footers (and the Delta log, and deletion vectors) are read at open: the row
// count and the units (row groups) are known before any data page is touched. A filter (format/filter.h) is applied
// at three levels: partition values and a Delta add's stats drop whole files, Parquet row-group statistics drop row
// groups, and the rows of the row groups left are filtered exactly. That last step reads the filter's columns of
// those row groups once, at open, so that num_rows() counts the matching rows: every rank plans the same epoch, and
// sharding (equal samples per rank) counts rows after filtering.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/data/row_source.h"
#include "lakerun/format/filter.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::data {

/// lakerun's one filter expression (format/filter.h): comparisons, IN, IS NULL, AND / OR / NOT.
using format::Filter;

/// The tensor form of a decimal column (TableOptions::forms).
enum class DecimalForm {
  /// float64: the value rounded to the nearest float64, which holds 15 significant digits exactly (a column of
  /// more digits is logged as a warning when opened).
  kFloat64,
  /// int64: the unscaled integer, value = tensor / 10^ColumnInfo::scale (the table's scale). A value beyond int64
  /// is an error naming the column, the file and the row.
  kUnscaledInt64,
};

/// The unit of a timestamp column's int64 values (TableOptions::forms).
enum class TimestampUnit {
  kMicros,  ///< microseconds since 1970-01-01 00:00:00 (Delta's own unit)
  kNanos,   ///< nanoseconds since then: years 1677-2262 only, a value outside is an error
};

/// How one column's values become tensor elements, where there is a choice.
struct ColumnForm {
  DecimalForm decimal = DecimalForm::kFloat64;
  TimestampUnit timestamp = TimestampUnit::kMicros;
};

struct TableOptions {
  /// Columns to read, in this order; empty = every column of the table (a Delta table's schema, or the first
  /// Parquet file's). Columns are primitive leaves named by their path: a struct's fields as "a.b" (naming "a"
  /// reads all of its leaves), a list's elements under the list's name (a list column), a map's keys and values as
  /// "m.key" and "m.value" (list columns). A partition column may be named (a Delta table's, or a key=value folder
  /// of loose Parquet files): its file's value on every row.
  std::vector<std::string> columns{};
  /// Tensor forms by column (see ColumnForm); columns not named get the defaults (decimals float64, timestamps
  /// microseconds).
  std::map<std::string, ColumnForm> forms{};
  /// The rows to read (see above): every row when unset. Columns are the table's (logical) names of scalar columns
  /// (partition columns too); a Delta table's date and timestamp columns also compare with 'YYYY-MM-DD' and ISO-8601
  /// strings, decimals as numbers. Unknown columns and constants of the wrong kind are InvalidArgument.
  Filter filter{};
  /// Drops the rows where any of these columns is null (the "drop_row" null policy): the same as AND-ing
  /// "`column` IS NOT NULL" to `filter`, so dropped rows are not counted and every rank still gets equal samples.
  std::vector<std::string> drop_null_rows{};
  /// Delta tables: the version to read, or the newest version committed at or before timestamp_ms; latest if unset.
  std::optional<int64_t> delta_version{};
  std::optional<int64_t> delta_timestamp_ms{};
  /// This process's rank, only to name it in error messages (-1: not named).
  int64_t rank = -1;
  /// Map local Parquet files (FileSystem::LocalPath) into memory and decode column chunks straight from the mapping,
  /// instead of reading (copying) every chunk into a buffer first: about a fifth less decoding time on the
  /// Fashion-MNIST table. The mapped pages are page cache: they count in the process's RSS once read, and the
  /// system reclaims them like any cached file. A file that shrinks while the source is open makes a later read of
  /// the lost pages raise SIGBUS instead of an IoError, so unset (the default) maps only a Delta table's data files,
  /// which the protocol never rewrites, and reads loose Parquet files, which writers such as pandas truncate and
  /// rewrite in place; true maps those too. Other file systems are read as usual.
  std::optional<bool> memory_map{};
  /// Check the CRC-32 of every Parquet page read whose header stores one (lakerun's writer stores them by default):
  /// a damaged page is a CorruptDataError naming the file, row group, column, page and offset, which the loader
  /// raises from Next() instead of yielding any sample of that page. false reads pages unchecked.
  bool verify_page_checksums = true;
  /// Cut every row group into units (the loader's unit of decoding and caching) of about this many decoded bytes of
  /// the projected columns: equal row slices, each read by decoding only the pages that hold its rows. 0 (the
  /// default) keeps whole row groups, which decode fastest when the loader's cache holds the row groups one shuffle
  /// window reads. Set it when it cannot (LoaderOptions::cache_bytes below the window's row groups, which the loader
  /// warns about), e.g. to a quarter of cache_bytes / (window_blocks + 1): then a window's slices fit, instead of
  /// every batch decoding whole row groups again. A page that straddles two slices is decoded by both, so slices
  /// much smaller than the file's pages (commonly 1 MiB) cost decoding time. Columns with repetition (lists) cannot
  /// be sliced: projecting one with unit_bytes set is an InvalidArgument.
  uint64_t unit_bytes = 0;
};

/// Opens `path`: a Delta table (a folder with _delta_log/), a folder of *.parquet files (recursively, in name
/// order, skipping names starting with '_' or '.'), or one Parquet file. Column types map as docs/data.md
/// ("Column types") lists: booleans -> bool; byte, short, int, long -> int8, int16, int32, int64 (unsigned
/// integers to the next wider signed type, uint8 to uint8, uint64 beyond int64 refused); float, double ->
/// float32, float64 (float16 -> float32); decimal -> ColumnForm::decimal; date -> int32 days since 1970-01-01;
/// timestamps (INT96, millis, micros, nanos) and times -> int64 in ColumnForm::timestamp's unit (a value that unit
/// cannot hold exactly is refused); string, binary -> binary; FIXED_LEN_BYTE_ARRAY(w) -> uint8 [w]; fixed-size
/// lists -> [D] (or the shape stored under "lakerun.shape.<column>", which also reshapes fixed-width binary
/// columns); nested lists -> one dimension per level (ColumnInfo::list_levels), inner lists of equal length. A
/// Delta table's schema decides the type of every column, so files written before a type was widened
/// (int -> long, float -> double, date -> timestamp_ntz, ...) read as the wider type. Throws IoError /
/// CorruptDataError naming the file, and InvalidArgument / NotImplemented naming the column (unknown column,
/// nested lists of strings, inner lists of unequal length, files that disagree).
std::shared_ptr<RowSource> OpenTable(const std::string& path, const TableOptions& options = {},
                                     FileSystem& fs = UriFileSystem());

}  // namespace lakerun::data
