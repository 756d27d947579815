// lakerun.Table (table_binding.cc): a table opened once, at one Delta version, whose sources loaders share.
// Private to src/python.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/data/row_source.h"
#include "lakerun/data/table_source.h"
#include "python/bindings.h"

namespace lakerun::python {

class Table {
 public:
  /// Opens `path`; a Delta table at `version`, at the newest version committed at or before `timestamp_ms`, or at
  /// its latest version, resolved once here: every source this table lends reads that version.
  Table(std::string path, std::optional<int64_t> version, std::optional<int64_t> timestamp_ms);

  const std::string& path() const { return path_; }
  std::optional<int64_t> version() const { return version_; }
  uint64_t num_rows() const;
  py::list schema() const;
  /// The first n rows in table order: a tensor per fixed-width column, a list of bytes per binary column.
  py::dict Head(int64_t n) const;

  /// Every row of `projection` in table order, as one batch of tensors (binary columns as raw bytes).
  py::dict Scan(const ColumnChoices& choices);

  /// The source of `projection` (its columns, filter, forms and rows dropped for nulls). Loaders with the same
  /// projection share one source, so a new loader's first epoch decodes into memory an earlier loader already
  /// faulted in, and every loader reads the same snapshot. Sources of other projections are opened at the table's
  /// version and kept (the last kMaxProjections). Thread-safe; call without the GIL.
  std::shared_ptr<const data::RowSource> SourceFor(const Projection& projection);

 private:
  static constexpr size_t kMaxProjections = 8;

  std::string path_;
  std::shared_ptr<const data::RowSource> source_;
  std::optional<int64_t> version_;
  std::mutex mu_;
  // Sources of other projections, by key (columns and filter), oldest first in projection_order_. Guarded by mu_.
  std::map<std::string, std::shared_ptr<const data::RowSource>> projections_;
  std::vector<std::string> projection_order_;
};

}  // namespace lakerun::python
