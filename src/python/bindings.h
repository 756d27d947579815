// The pieces of the `_lakerun` extension module (python/CMakeLists.txt); module.cc calls each Register* once.
// Private to src/python: the Python package (python/lakerun) is the public face, docs/python.md its manual.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/data/column_policy.h"
#include "lakerun/data/image_options.h"
#include "lakerun/data/table_source.h"

namespace lakerun::python {

namespace py = pybind11;

/// lakerun.Error and its subclasses, and the translation of lakerun::Error exceptions into them.
void RegisterErrors(py::module_& m);
/// lakerun._Loader over data::Loader.
void RegisterLoader(py::module_& m);
/// lakerun.Table over data::OpenTable (and delta::DeltaTable for the version).
void RegisterTable(py::module_& m);
/// lakerun._import, _convert and _clear_cache over lakerun::importer and data/converter.h.
void RegisterImport(py::module_& m);
/// lakerun._launch and lakerun._StoreClient over launch::Launch and the store, for lakerun.distributed.
void RegisterLaunch(py::module_& m);

/// What a loader asks of its table's source, beyond the version: the TableOptions its Python arguments set.
/// Loaders over one lakerun.Table with equal projections share a source (Table::SourceFor).
struct Projection {
  std::optional<std::vector<std::string>> columns;  ///< None: every column
  std::optional<std::string> filter;                ///< format/filter.h's text form
  std::map<std::string, data::ColumnForm> forms;
  std::vector<std::string> drop_null_rows;  ///< nulls={"c": "drop_row"}

  /// Equal for equal projections (a map key).
  std::string Key() const;
  /// The TableOptions of this projection at a Delta version or timestamp (latest when both are unset).
  data::TableOptions ToTableOptions(std::optional<int64_t> version, std::optional<int64_t> timestamp_ms) const;
};

/// One column's images= settings ({"channels": 1, "resize": 32, "crop": 28, ...}) as ImageOptions. Throws
/// InvalidArgument naming the column and the key for an unknown key or a value of the wrong type.
data::ImageOptions ImageOptionsFrom(const std::string& column, const py::dict& settings);
/// One column's nulls= settings ({"fill_value": 0.0, "emit_mask": True}) as a NullPolicy; errors as above.
data::NullPolicy NullPolicyFrom(const std::string& column, const py::dict& settings);
/// One column's lists= settings ({"layout": "padded" | "flat", "pad_to": 0, "truncate": False, "pad_value": 0.0})
/// as a ListPolicy; errors as above, and a layout outside the two names.
data::ListPolicy ListPolicyFrom(const std::string& column, const py::dict& settings);
/// One column's forms= settings ({"decimal": "float64" | "unscaled_int64", "timestamp": "us" | "ns"}) as a
/// ColumnForm; errors as above.
data::ColumnForm ColumnFormFrom(const std::string& column, const py::dict& settings);

/// The column arguments lakerun.Loader and Table.scan share, parsed: what the table's source reads (columns,
/// filter, forms, and nulls={c: "drop_row"}) and what the loader makes of nulls and lists.
struct ColumnChoices {
  Projection projection;
  std::map<std::string, data::NullPolicy> nulls;
  std::map<std::string, data::ListPolicy> lists;
};
/// columns, filter, nulls ({column: {settings} | "drop_row"}), lists and forms as Python passes them; errors as
/// above, and a null policy that is neither a dict nor "drop_row" names its column.
ColumnChoices ColumnChoicesFrom(std::optional<std::vector<std::string>> columns, std::optional<std::string> filter,
                                const std::optional<std::map<std::string, py::object>>& nulls,
                                const std::optional<std::map<std::string, py::dict>>& lists,
                                const std::optional<std::map<std::string, py::dict>>& forms);

}  // namespace lakerun::python
