// lakerun.import_* and lakerun.convert (python/lakerun/tables.py documents them): lakerun::importer and the
// converter (data/converter.h), as `lakerun table import` and `lakerun table convert` offer them. The GIL is
// released while they read and write.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/converter.h"
#include "lakerun/format/import/import.h"
#include "python/bindings.h"

namespace lakerun::python {
namespace {

importer::ImportOptions ImportOptionsFrom(const std::string& format, const std::string& codec,
                                          int64_t row_group_rows, int64_t row_group_bytes, int64_t rows_per_file,
                                          int files_multiple_of, const std::string& layout, bool progress) {
  importer::ImportOptions o;
  LAKERUN_CHECK(format == "delta" || format == "parquet", "format: '", format, "' is not 'delta' or 'parquet'");
  LAKERUN_CHECK(layout == "bytes" || layout == "fixed-list", "layout: '", layout,
                "' is not 'bytes' or 'fixed-list'");
  LAKERUN_CHECK_AS(ConfigError, row_group_rows >= 0 && row_group_bytes > 0 && rows_per_file >= 0 &&
                                    files_multiple_of > 0,
                   "row_group_rows and rows_per_file must be >= 0, row_group_bytes and files_multiple_of > 0");
  o.format = format == "parquet" ? importer::OutputFormat::kParquet : importer::OutputFormat::kDelta;
  o.codec = parquet::ParseCodec(codec);
  o.row_group_rows = row_group_rows;
  o.row_group_bytes = row_group_bytes;
  o.rows_per_file = rows_per_file;
  o.files_multiple_of = files_multiple_of;
  o.image_layout = layout == "fixed-list" ? importer::ImageLayout::kFixedList : importer::ImageLayout::kBytes;
  o.progress = progress;
  return o;
}

py::dict ResultDict(const importer::ImportResult& r) {
  py::dict d;
  d["path"] = r.path;
  d["rows"] = r.rows;
  d["files"] = r.files;
  d["bytes"] = r.bytes;
  d["seconds"] = r.seconds;
  return d;
}

py::dict ConvertedDict(const data::ConvertedDataset& c) {
  py::dict d;
  d["path"] = c.path;
  d["key"] = c.key;
  d["reused"] = c.reused;
  d["rows"] = c.rows;
  d["files"] = c.files;
  return d;
}

// kind "mnist" / "images" / "csv" / "table" -> what to convert.
data::ConvertedDataset ConvertSource(const std::string& kind, const std::string& source, const Projection& projection,
                                     std::optional<int64_t> version, const std::string& split,
                                     const data::ConverterOptions& options) {
  if (kind == "table") return data::ConvertTable(source, projection.ToTableOptions(version, std::nullopt), options);
  LAKERUN_CHECK(!projection.columns && !projection.filter && !version, "convert: columns, filter and version apply "
                "to kind='table' only, not '", kind, "'");
  if (kind == "mnist") return data::ConvertFiles({data::FileSourceKind::kMnist, source, split}, options);
  if (kind == "images") return data::ConvertFiles({data::FileSourceKind::kImageFolder, source}, options);
  if (kind == "csv") return data::ConvertFiles({data::FileSourceKind::kCsv, source}, options);
  LAKERUN_THROW(InvalidArgument, "convert: kind '", kind, "' is not one of 'table', 'mnist', 'images', 'csv'");
}

}  // namespace

void RegisterImport(py::module_& m) {
  m.def(
      "_import",
      [](const std::string& kind, const std::string& source, const std::string& out,
         const std::vector<std::string>& splits, const std::string& format, const std::string& codec,
         int64_t row_group_rows, int64_t row_group_bytes, int64_t rows_per_file, int files_multiple_of,
         const std::string& layout, bool progress) {
        const importer::ImportOptions o = ImportOptionsFrom(format, codec, row_group_rows, row_group_bytes,
                                                            rows_per_file, files_multiple_of, layout, progress);
        std::vector<importer::ImportResult> results;
        {
          py::gil_scoped_release release;
          if (kind == "mnist") {
            results = importer::ImportMnist(source, out, o, splits);
          } else if (kind == "images") {
            results.push_back(importer::ImportImageFolder(source, out, o));
          } else if (kind == "csv") {
            results.push_back(importer::ImportCsv(source, out, o));
          } else {
            LAKERUN_THROW(InvalidArgument, "import: kind '", kind, "' is not one of 'mnist', 'images', 'csv'");
          }
        }
        py::list out_list;
        for (const auto& r : results) out_list.append(ResultDict(r));
        return out_list;
      },
      py::arg("kind"), py::arg("source"), py::arg("out"), py::arg("splits"), py::arg("format"), py::arg("codec"),
      py::arg("row_group_rows"), py::arg("row_group_bytes"), py::arg("rows_per_file"), py::arg("files_multiple_of"),
      py::arg("layout"), py::arg("progress"), "lakerun::importer (lakerun.import_* document it).");
  m.def(
      "_convert",
      [](const std::string& kind, const std::string& source, const std::string& cache_dir,
         std::optional<std::vector<std::string>> columns, std::optional<std::string> filter,
         std::optional<int64_t> version, const std::string& split, int64_t world_size, int64_t row_group_rows,
         int64_t rows_per_file) {
        LAKERUN_CHECK_AS(ConfigError, world_size > 0 && row_group_rows > 0 && rows_per_file > 0,
                         "world_size, row_group_rows and rows_per_file must be positive");
        Projection projection;
        projection.columns = std::move(columns);
        projection.filter = std::move(filter);
        data::ConverterOptions o;
        o.cache_dir = cache_dir;
        o.world_size = world_size;
        o.row_group_rows = row_group_rows;
        o.rows_per_file = rows_per_file;
        data::ConvertedDataset converted;
        {
          py::gil_scoped_release release;
          converted = ConvertSource(kind, source, projection, version, split, o);
        }
        return ConvertedDict(converted);
      },
      py::arg("kind"), py::arg("source"), py::arg("cache_dir"), py::arg("columns"), py::arg("filter"),
      py::arg("version"), py::arg("split"), py::arg("world_size"), py::arg("row_group_rows"),
      py::arg("rows_per_file"), "The converter (lakerun.convert documents it).");
  m.def(
      "_clear_cache",
      [](const std::string& cache_dir, const std::string& key) {
        py::gil_scoped_release release;
        data::ClearConverterCache(cache_dir, key);
      },
      py::arg("cache_dir"), py::arg("key"), "Removes one entry of the converter's cache, or all of them.");
}

}  // namespace lakerun::python
