// Reading a table from one Parquet file: column projection, row-group pruning from statistics, parallel decode,
// and record assembly into Values.
//
//   TableReadOptions opts;
//   opts.columns = {"id", "features"};                       // top-level fields or dotted leaf paths
//   opts.filter = Filter::Parse("id >= 1000");             // prunes row groups by min/max only
//   TableReader reader(*file, opts, &pool);
//   while (auto rg = reader.Next()) { rg->columns[0] ... }   // RowGroupData, one ColumnData per selected leaf
//   std::vector<Value> rows = reader.ReadRows(10);           // assembled records of the selected fields
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/thread_pool.h"
#include "lakerun/format/filter.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/filter_columns.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

using format::Filter;
using format::StatisticsView;

struct TableReadOptions {
  /// Top-level field names or dotted paths of any node; empty selects every column.
  std::vector<std::string> columns;
  /// Prunes row groups: one is skipped when its statistics prove that no row satisfies the filter. Rows of a kept
  /// row group are not filtered (exact row filtering is the caller's: format::EvaluateRows). Its columns are leaf
  /// paths (or top-level fields that are one leaf); constants must be numbers for numeric columns and strings for
  /// byte columns (InvalidArgument otherwise).
  Filter filter;
  /// Row groups to consider (in this order); empty means all.
  std::vector<int> row_groups;
};

struct RowGroupData {
  int row_group = 0;
  int64_t num_rows = 0;
  std::vector<int> columns;               ///< schema column indexes, parallel to `data`
  std::vector<ColumnData> data;
};

class TableReader {
 public:
  /// `pool` (optional, must outlive the reader) decodes the selected column chunks of a row group in parallel.
  /// Throws InvalidArgument for unknown columns, bad predicates or row-group indexes.
  TableReader(const ParquetFile& file, TableReadOptions options, ThreadPool* pool = nullptr);

  /// Row groups that survive pruning, in reading order.
  const std::vector<int>& row_groups() const { return row_groups_; }
  /// Selected schema columns (leaves), in schema order.
  const std::vector<int>& columns() const { return columns_; }
  /// Top-level fields covered by the selected columns, in schema order (indexes into root().children).
  const std::vector<int>& top_level_fields() const { return fields_; }

  /// Decodes one row group's selected columns (parallel over columns when a pool was given).
  RowGroupData ReadRowGroup(int row_group) const;
  /// The next surviving row group, or std::nullopt at the end.
  std::optional<RowGroupData> Next();

  /// Assembles up to `limit` rows (from the next row groups) into struct Values holding the selected top-level
  /// fields; a field is assembled from its selected leaves only. Rows of a row group beyond `limit` are kept for the
  /// next call. Returns fewer than `limit` rows only at the end. Use either Next() or ReadRows() on one reader.
  std::vector<Value> ReadRows(int64_t limit);

 private:
  const ParquetFile& file_;
  TableReadOptions options_;
  ThreadPool* pool_;
  std::vector<int> row_groups_;
  std::vector<int> columns_;
  std::vector<int> fields_;
  size_t next_ = 0;
  std::vector<Value> pending_;  // ReadRows: the assembled rows of the last row group read
  size_t pending_next_ = 0;     // the first of pending_ not returned yet
};

/// What the footer's statistics say of `row_group` (bounds and null counts of its flat leaf columns; nothing for
/// columns with repetition or unsigned 64-bit ones). The view refers to `metadata`, which must outlive it.
StatisticsView RowGroupStatistics(const FileMetaData& metadata, int row_group);
/// The same, for a filter whose columns `resolve` maps onto the file (filter_columns.h): a table's logical names,
/// partition values, columns the file lacks.
StatisticsView RowGroupStatistics(const FileMetaData& metadata, int row_group, FilterColumnResolver resolve);
/// False when the statistics of `row_group` prove that no row satisfies `filter` (row-group pruning).
bool RowGroupMayMatch(const FileMetaData& metadata, int row_group, const Filter& filter);

/// Dremel record assembly: turns decoded leaf columns of one row group into one struct Value per row, holding the
/// top-level fields `fields` (indexes into schema.root().children). `columns[i]` is the data of schema column
/// `column_indexes[i]`; every leaf under the requested fields that is present in `column_indexes` is used, the
/// others are left out of the assembled structs. Throws CorruptDataError when the levels are inconsistent.
std::vector<Value> AssembleRecords(const Schema& schema, const std::vector<int>& fields,
                                   const std::vector<int>& column_indexes, const std::vector<ColumnData>& columns,
                                   int64_t num_rows);

}  // namespace lakerun::parquet
