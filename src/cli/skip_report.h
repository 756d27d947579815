// What a filter lets a reader skip, level by level (files, row groups, pages), counted by the pruning functions of
// lakerun::format (delta::FilePruner, parquet::RowGroupStatistics + format::MayMatch, parquet::PagesMayMatch):
// the numbers `lakerun table inspect --filter` prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "lakerun/format/filter.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/filter_columns.h"

namespace lakerun::cli {

/// Units of one level, and their compressed bytes: all of them, and those the filter skips.
struct LevelCount {
  int64_t total = 0;
  int64_t skipped = 0;
  int64_t total_bytes = 0;
  int64_t skipped_bytes = 0;

  void Add(int64_t bytes, bool skip);
};

struct SkipReport {
  std::string filter;     ///< the filter as parsed (Filter::ToString)
  LevelCount files;       ///< every file of the table; bytes: file sizes
  LevelCount row_groups;  ///< row groups of the files kept; bytes: their column chunks
  LevelCount pages;       ///< data pages of the row groups kept (chunks with an offset index); bytes: header + body
  int64_t chunks_without_page_index = 0;  ///< column chunks of kept row groups without an offset index
  int64_t rows_total = 0;                 ///< rows of the files kept
  int64_t rows_in_kept_row_groups = 0;
  int64_t rows_in_kept_pages = 0;         ///< rows in the ranges PagesMayMatch keeps

  /// Counts the row groups and pages of a kept file; `resolve` maps the filter's columns onto it.
  void AddParquetFile(const parquet::ParquetFile& file, const format::Filter& filter,
                      const parquet::FilterColumnResolver& resolve);

  nlohmann::ordered_json Json() const;
  void PrintText(std::ostream& out) const;
};

}  // namespace lakerun::cli
