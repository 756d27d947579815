// lakerun.Table: a table's schema, row count, Delta version and first rows, over data::OpenTable.
#include <ATen/ATen.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>  // at::Tensor <-> torch.Tensor without a copy

#include <algorithm>
#include <memory>
#include <utility>

#include "lakerun/data/loader.h"
#include "lakerun/format/delta/table.h"
#include "python/bindings.h"
#include "python/table.h"

namespace lakerun::python {
namespace {

// "int64", "uint8[28, 28]", "list<float32>": the element type, the fixed shape, and whether rows are lists.
std::string TypeName(const data::ColumnInfo& c) {
  std::string name = data::ToString(c.type);
  if (!c.shape.empty()) {
    name += "[";
    for (size_t i = 0; i < c.shape.size(); ++i) name += (i ? ", " : "") + std::to_string(c.shape[i]);
    name += "]";
  }
  return c.is_list ? "list<" + name + ">" : name;
}

at::ScalarType ScalarTypeOf(data::ElementType type) {
  switch (type) {
    case data::ElementType::kBool: return at::kBool;
    case data::ElementType::kUInt8: return at::kByte;
    case data::ElementType::kInt8: return at::kChar;
    case data::ElementType::kInt16: return at::kShort;
    case data::ElementType::kInt32: return at::kInt;
    case data::ElementType::kInt64: return at::kLong;
    case data::ElementType::kFloat32: return at::kFloat;
    case data::ElementType::kFloat64: return at::kDouble;
    case data::ElementType::kBinary: break;
  }
  return at::kByte;
}

// A binary column's values in a batch: bytes per row, or a list of bytes per row for lists of binary values.
py::list BinaryValues(const data::Batch& batch, const data::ColumnInfo& c) {
  py::list values;
  if (c.is_list) {
    for (const auto& row : batch.list_bytes(c.name)) {
      py::list items;
      for (std::string_view item : row) items.append(py::bytes(item.data(), item.size()));
      values.append(items);
    }
  } else {
    for (int64_t i = 0; i < batch.size(); ++i) {
      std::string_view v = batch.bytes(c.name, i);
      values.append(py::bytes(v.data(), v.size()));
    }
  }
  return values;
}

// A result of no rows: an empty tensor per fixed-width column; per binary column an empty list, or (raw bytes)
// uint8 [0] with its offsets int64 [1].
py::dict NoRows(const data::RowSource& source, bool binary_as_raw_bytes) {
  py::dict out;
  for (const auto& c : source.columns()) {
    if (c.type == data::ElementType::kBinary) {
      if (!binary_as_raw_bytes) {
        out[py::str(c.name)] = py::list();
        continue;
      }
      out[py::str(c.name)] = at::empty({0}, at::TensorOptions().dtype(at::kByte));
      out[py::str(c.name + data::kOffsetsSuffix)] = at::zeros({1}, at::TensorOptions().dtype(at::kLong));
      continue;
    }
    std::vector<int64_t> shape{0};
    shape.insert(shape.end(), c.shape.begin(), c.shape.end());
    out[py::str(c.name)] = at::empty(shape, at::TensorOptions().dtype(ScalarTypeOf(c.type)));
  }
  return out;
}

// The first `rows` (> 0) rows of `source` in table order as one batch, binary columns as raw bytes; `o` gives the
// other options (null and list policies, threads).
data::Batch FirstRows(const std::shared_ptr<const data::RowSource>& source, int64_t rows, data::LoaderOptions o) {
  o.batch_size = rows;
  o.rank = 0;
  o.world_size = 1;
  o.shuffle.enabled = false;
  for (const auto& c : source->columns()) {
    if (c.type == data::ElementType::kBinary) o.raw_bytes.push_back(c.name);
  }
  py::gil_scoped_release release;
  data::Loader loader(source, std::move(o));
  return *loader.Next();
}

}  // namespace

Table::Table(std::string path, std::optional<int64_t> version, std::optional<int64_t> timestamp_ms)
    : path_(std::move(path)) {
  py::gil_scoped_release release;
  data::TableOptions options = Projection{}.ToTableOptions(version, timestamp_ms);
  if (delta::IsDeltaTable(path_)) {
    // Resolved before opening, so the version reported is the one read (a commit may land in between).
    delta::DeltaTable table(path_);
    if (version) {
      version_ = version;
    } else if (timestamp_ms) {
      version_ = table.AtTimestamp(*timestamp_ms).version;
    } else {
      version_ = table.LatestVersion();
    }
    options.delta_version = version_;
    options.delta_timestamp_ms.reset();
  }
  source_ = data::OpenTable(path_, options);
}

uint64_t Table::num_rows() const { return source_->num_rows(); }

py::list Table::schema() const {
  py::list out;
  for (const auto& c : source_->columns()) out.append(py::make_tuple(c.name, TypeName(c)));
  return out;
}

py::dict Table::Head(int64_t n) const {
  const int64_t rows = std::min<int64_t>(std::max<int64_t>(n, 0), static_cast<int64_t>(num_rows()));
  if (rows == 0) return NoRows(*source_, /*binary_as_raw_bytes=*/false);
  data::LoaderOptions o;
  o.num_threads = 0;
  const data::Batch batch = FirstRows(source_, rows, o);
  py::dict out;
  for (const auto& c : source_->columns()) {
    if (c.type == data::ElementType::kBinary) {
      out[py::str(c.name)] = BinaryValues(batch, c);
    } else {
      out[py::str(c.name)] = batch.at(c.name);
    }
  }
  return out;
}

py::dict Table::Scan(const ColumnChoices& choices) {
  std::shared_ptr<const data::RowSource> source;
  {
    py::gil_scoped_release release;
    source = SourceFor(choices.projection);
  }
  if (source->num_rows() == 0) return NoRows(*source, /*binary_as_raw_bytes=*/true);
  data::LoaderOptions o;
  o.nulls = choices.nulls;
  o.lists = choices.lists;
  const data::Batch batch = FirstRows(source, static_cast<int64_t>(source->num_rows()), o);
  py::dict out;
  for (const auto& [name, tensor] : batch.tensors) out[py::str(name)] = tensor;
  return out;
}

std::shared_ptr<const data::RowSource> Table::SourceFor(const Projection& projection) {
  const std::string key = projection.Key();
  if (key == Projection{}.Key()) return source_;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = projections_.find(key); it != projections_.end()) return it->second;
  auto source = data::OpenTable(path_, projection.ToTableOptions(version_, std::nullopt));
  if (projection_order_.size() == kMaxProjections) {
    projections_.erase(projection_order_.front());
    projection_order_.erase(projection_order_.begin());
  }
  projection_order_.push_back(key);
  projections_.emplace(key, source);
  return source;
}

std::string Projection::Key() const {
  // Fields are separated by control characters, which column names and filters do not hold.
  std::string key = filter ? "filter " + *filter : "no filter";
  if (columns) {
    key += "\x1d";
    for (const auto& c : *columns) key += "\x1f" + c;
  }
  for (const auto& [column, form] : forms) {
    key += "\x1e" + column + "\x1f" + std::to_string(static_cast<int>(form.decimal)) + "\x1f" +
           std::to_string(static_cast<int>(form.timestamp));
  }
  for (const auto& column : drop_null_rows) key += "\x1c" + column;
  return key;
}

data::TableOptions Projection::ToTableOptions(std::optional<int64_t> version,
                                              std::optional<int64_t> timestamp_ms) const {
  data::TableOptions t;
  if (columns) t.columns = *columns;
  if (filter) t.filter = data::Filter::Parse(*filter);
  t.forms = forms;
  t.drop_null_rows = drop_null_rows;
  t.delta_version = version;
  t.delta_timestamp_ms = timestamp_ms;
  return t;
}

void RegisterTable(py::module_& m) {
  py::class_<Table>(m, "Table",
                    "A Parquet file, a folder of Parquet files or a Delta table, opened once, at one version: loaders "
                    "over it (lakerun.Loader(table, ...)) read that snapshot and share its decode memory.")
      .def(py::init<std::string, std::optional<int64_t>, std::optional<int64_t>>(), py::arg("path"),
           py::arg("version") = py::none(), py::arg("timestamp") = py::none(),
           "Opens `path` (a Delta table at `version`, or at the newest version committed at or before `timestamp`"
           " ms since 1970; the latest when both are None).")
      .def_property_readonly("path", &Table::path, "The path the table was opened from.")
      .def_property_readonly("version", &Table::version, "The Delta version read; None for Parquet files.")
      .def_property_readonly("num_rows", &Table::num_rows, "Rows of the table (after deletion vectors).")
      .def_property_readonly("schema", &Table::schema,
                             "[(name, type)] of every column, as the loader reads it: 'int64', 'uint8[784]', "
                             "'binary' (strings and bytes), 'list<float32>'.")
      .def(
          "scan",
          [](Table& t, std::optional<std::vector<std::string>> columns, std::optional<std::string> filter,
             const std::optional<std::map<std::string, py::object>>& nulls,
             const std::optional<std::map<std::string, py::dict>>& lists,
             const std::optional<std::map<std::string, py::dict>>& forms) {
            return t.Scan(ColumnChoicesFrom(std::move(columns), std::move(filter), nulls, lists, forms));
          },
          py::arg("columns") = py::none(), py::arg("filter") = py::none(), py::arg("nulls") = py::none(),
          py::arg("lists") = py::none(), py::arg("forms") = py::none(),
          "Every row of `columns` (None: all) that passes `filter`, in table order, as {column: tensor}: binary "
          "and string columns as raw bytes (uint8 [total bytes] and column + '.offsets', int64 [rows + 1]). "
          "nulls, lists and forms as lakerun.Loader takes them. Holds the whole result in memory.")
      .def("head", &Table::Head, py::arg("n") = 5,
           "The first n rows in table order: {column: tensor} for fixed-width columns, {column: [bytes]} for "
           "binary and string columns. A null value raises lakerun.InvalidArgument naming the column.");
}

}  // namespace lakerun::python
