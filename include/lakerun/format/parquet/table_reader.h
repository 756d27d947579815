// Reading a table from one Parquet file: column projection, row-group pruning from statistics, parallel decode,
// and record assembly into Values.
//
//   TableReadOptions opts;
//   opts.columns = {"id", "features"};                       // top-level fields or dotted leaf paths
//   opts.predicates = {{"id", Predicate::Op::kGe, Value::Int(1000)}};  // prunes row groups by min/max only
//   TableReader reader(*file, opts, &pool);
//   while (auto rg = reader.Next()) { rg->columns[0] ... }   // RowGroupData, one ColumnData per selected leaf
//   std::vector<Value> rows = reader.ReadRows(10);           // assembled records of the selected fields
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/thread_pool.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

/// A simple comparison of a leaf column against a constant, used only to skip row groups whose statistics prove
/// that no row can match. Rows of a kept row group are not filtered.
struct Predicate {
  enum class Op : int8_t { kEq, kLt, kLe, kGt, kGe, kIsNull, kIsNotNull };
  std::string column;  ///< dotted leaf path, or a top-level field that is a single leaf
  Op op = Op::kEq;
  Value value;  ///< same Value kind as the column's leaves (kInt for INT32/INT64, kString for strings...)
};

struct TableReadOptions {
  /// Top-level field names or dotted paths of any node; empty selects every column.
  std::vector<std::string> columns;
  /// Conjunction; a row group is skipped when any predicate is provably false for all its rows.
  std::vector<Predicate> predicates;
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
  /// fields; a field is assembled from its selected leaves only. Use either Next() or ReadRows() on one reader.
  std::vector<Value> ReadRows(int64_t limit);

 private:
  const ParquetFile& file_;
  TableReadOptions options_;
  ThreadPool* pool_;
  std::vector<int> row_groups_;
  std::vector<int> columns_;
  std::vector<int> fields_;
  size_t next_ = 0;
};

/// Whether the statistics of `row_group` prove that no row satisfies `predicate` (row-group pruning).
bool RowGroupCannotMatch(const FileMetaData& metadata, int row_group, const Predicate& predicate);

/// Dremel record assembly: turns decoded leaf columns of one row group into one struct Value per row, holding the
/// top-level fields `fields` (indexes into schema.root().children). `columns[i]` is the data of schema column
/// `column_indexes[i]`; every leaf under the requested fields that is present in `column_indexes` is used, the
/// others are left out of the assembled structs. Throws CorruptDataError when the levels are inconsistent.
std::vector<Value> AssembleRecords(const Schema& schema, const std::vector<int>& fields,
                                   const std::vector<int>& column_indexes, const std::vector<ColumnData>& columns,
                                   int64_t num_rows);

}  // namespace lakerun::parquet
