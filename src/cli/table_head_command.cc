// `lakerun table head PATH [-n N] [--columns a,b] [--format text|jsonl|csv] [--version V | --timestamp T]`: the
// first rows of a Parquet file, a folder of Parquet files or a Delta table.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/display_type.h"
#include "cli/head_output.h"
#include "cli/table_source.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/parquet/parquet.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::cli {
namespace {

constexpr const char* kDescription =
    "print the first rows of a table: a Parquet file, a folder of Parquet files (read in path order) or a Delta "
    "table (a directory holding _delta_log/, read as of its latest version, --version or --timestamp).\n\n"
    "Values print by their logical type: dates as 2026-11-26, timestamps as ISO-8601 (2026-11-26T10:00:00.123456Z; "
    "Z when adjusted to UTC; INT96 too; years outside 0000-9999 as +12345 or -0001), decimals exactly "
    "(123.45, any width), UUIDs in their 8-4-4-4-12 form.\n\n"
    "--format text (default): a table whose cells are cut at 48 bytes, nested values JSON-like "
    "([1, 2], {\"a\": 1}, {\"key\" => 1} for maps).\n"
    "--format jsonl: one JSON object per row, keys the column names in order, full values: numbers as numbers "
    "(NaN and infinities as the strings \"NaN\", \"Infinity\", \"-Infinity\"), decimals, dates, timestamps and "
    "UUIDs as strings, binary as base64 strings, lists as arrays, structs as objects, maps as objects keyed by "
    "the key's text.\n"
    "--format csv: RFC 4180 (a header line; fields with commas, quotes or line breaks quoted, quotes doubled; "
    "lines end with \\n), full values, null as an empty field, binary as base64, nested values as JSON.\n\n"
    "Parquet: only the pages holding the rows printed are read from columns without repetition; columns with "
    "repetition (lists, maps) are read a whole column chunk at a time. Delta tables are read through the table "
    "scan (column mapping, partition values, deletion vectors), a whole data file at a time.";

std::vector<std::string> SplitColumns(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string part = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The first `n` rows of Parquet files read in order; the columns shown are those the first file selects.
HeadTable HeadOfParquetFiles(const std::vector<std::string>& paths, const std::vector<std::string>& columns,
                             int64_t n) {
  HeadTable table;
  std::vector<std::unique_ptr<parquet::ParquetFile>> files;
  int64_t total = 0;
  for (const auto& path : paths) {
    files.push_back(parquet::ParquetFile::Open(UriFileSystem(), path));
    total += files.back()->num_rows();
  }
  table.total_rows = total;
  const parquet::Schema& first = files.front()->schema();
  for (int f : parquet::SelectColumns(first, columns, paths.front()).fields) {
    const parquet::SchemaNode& node = first.root().children[static_cast<size_t>(f)];
    table.names.push_back(node.name);
    table.types.push_back(DisplayTypeOf(node));
  }
  for (const auto& file : files) {
    const int64_t left = n - static_cast<int64_t>(table.rows.size());
    if (left <= 0) break;
    const parquet::ColumnSelection selection = parquet::SelectColumns(file->schema(), columns, file->path());
    std::vector<parquet::Value> rows = parquet::ReadLeadingRows(*file, selection, left);
    std::move(rows.begin(), rows.end(), std::back_inserter(table.rows));
  }
  return table;
}

// The first `n` rows of a Delta table's snapshot, through delta::TableScan (column mapping, schema evolution,
// partition values and deletion vectors resolved there).
HeadTable HeadOfDeltaTable(const std::string& path, const std::vector<std::string>& columns, int64_t n,
                           const TimeTravel& travel) {
  delta::DeltaTable table(path);
  const delta::Snapshot snapshot = LoadSnapshot(table, travel);
  delta::ScanOptions options;
  options.columns = columns;
  delta::TableScan scan(table, snapshot, options);  // checks the column names
  HeadTable out;
  out.total_rows = snapshot.NumRecords();
  const delta::DataType& schema = *snapshot.metadata.schema;
  if (columns.empty()) {
    for (const auto& f : schema.fields) out.names.push_back(f.name);
  } else {
    out.names = columns;
  }
  for (const auto& name : out.names) {
    const delta::StructField* field = schema.FindField(name);
    out.types.push_back(field ? DisplayTypeOf(*field->type) : DisplayType{});
  }
  while (static_cast<int64_t>(out.rows.size()) < n) {
    auto batch = scan.Next();
    if (!batch) break;
    const size_t take = std::min(batch->rows.size(), static_cast<size_t>(n) - out.rows.size());
    std::move(batch->rows.begin(), batch->rows.begin() + static_cast<std::ptrdiff_t>(take),
              std::back_inserter(out.rows));
  }
  return out;
}

int RunTableHead(int argc, char** argv) {
  CLI::App app(kDescription, argv[0]);
  std::string path, columns, format = "text";
  int64_t n = 10;
  TimeTravel travel;
  app.add_option("PATH", path, "a Parquet file, a folder of Parquet files or a Delta table")->required();
  app.add_option("-n,--rows", n, "number of rows (default 10)")->check(CLI::NonNegativeNumber);
  app.add_option("--columns", columns,
                 "comma-separated columns, printed in this order (default: all). A name equal to a top-level "
                 "field's name selects it even when it holds a '.'; otherwise a.b is a path into field a "
                 "(Parquet only)");
  app.add_option("--format", format, "text (default), jsonl or csv; see above");
  AddTimeTravelOptions(app, &travel);
  CLI11_PARSE(app, argc, argv);

  const HeadFormat head_format = ParseHeadFormat(format);
  const std::vector<std::string> names = SplitColumns(columns);
  HeadTable table;
  switch (DetectTableKind(path)) {
    case TableKind::kParquetFile:
      RefuseTimeTravel(travel, path);
      table = HeadOfParquetFiles({path}, names, n);
      break;
    case TableKind::kParquetFolder:
      RefuseTimeTravel(travel, path);
      table = HeadOfParquetFiles(ListParquetFiles(path), names, n);
      break;
    case TableKind::kDeltaTable:
      table = HeadOfDeltaTable(path, names, n, travel);
      break;
  }
  PrintHead(table, head_format, stdout);
  return 0;
}

}  // namespace
}  // namespace lakerun::cli

LAKERUN_REGISTER_COMMAND("table head", "print the first rows of a table", lakerun::cli::RunTableHead);
