// Private: writes an importer's columns as Parquet data files (split evenly into a planned number of files, each in
// row groups) and, for Delta output, creates the table and commits every file in one commit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/import/progress.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/import/import.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/schema.h"

namespace lakerun::importer::internal {

struct SinkColumn {
  std::string name;
  delta::DataTypePtr delta_type;  ///< the column's type in the Delta schema
  parquet::SchemaNode node;       ///< the column's top-level node in the data files (named `name`)
};

class TableSink {
 public:
  /// Plans the files for `total_rows` rows of about `row_bytes` bytes each. Throws InvalidArgument if `out`
  /// exists and is not empty.
  TableSink(std::string out, const ImportOptions& options, std::vector<SinkColumn> columns, int64_t total_rows,
            int64_t row_bytes, std::string label, std::map<std::string, std::vector<int64_t>> shapes = {});

  /// Row ranges [begin, end) of the planned files.
  const std::vector<std::pair<int64_t, int64_t>>& files() const { return files_; }
  /// Writes file `index`: `make(begin, end)` returns one ColumnData per leaf column of the file schema for those
  /// rows (called once per row group).
  void WriteFile(size_t index, const std::function<std::vector<parquet::ColumnData>(int64_t, int64_t)>& make);
  /// Commits (Delta) and returns what was written.
  ImportResult Finish();

 private:
  std::string out_;
  ImportOptions options_;
  FileSystem& fs_;
  std::vector<SinkColumn> columns_;
  parquet::Schema schema_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  int64_t total_rows_;
  int64_t row_group_rows_;
  std::vector<std::pair<int64_t, int64_t>> files_;
  std::vector<std::string> written_;       // relative paths
  std::vector<std::string> stats_;         // per written file (Delta stats JSON)
  std::vector<int64_t> sizes_;
  Progress progress_;
  std::chrono::steady_clock::time_point start_;
};

/// ColumnData helpers for flat columns.
parquet::ColumnData OptionalByteArrays(const std::vector<std::optional<std::string>>& values);
parquet::ColumnData OptionalInt64s(const std::vector<std::optional<int64_t>>& values);
parquet::ColumnData OptionalDoubles(const std::vector<std::optional<double>>& values);

}  // namespace lakerun::importer::internal
