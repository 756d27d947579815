// `lakerun table head PATH [-n N] [--columns a,b]`: the first rows of a Parquet file as a text table; nested values
// are rendered JSON-like.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/parquet.h"

namespace lakerun::cli {
namespace {

using namespace lakerun::parquet;

constexpr size_t kMaxCellWidth = 48;

// Top-level strings print bare; everything else as Value::ToString renders it.
std::string Cell(const Value& v) {
  std::string s = v.kind() == Value::Kind::kString ? v.as_string() : v.ToString();
  for (char& c : s) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  if (s.size() > kMaxCellWidth) s = s.substr(0, kMaxCellWidth - 3) + "...";
  return s;
}

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

int RunTableHead(int argc, char** argv) {
  CLI::App app("print the first rows of a table", argv[0]);
  std::string path, columns;
  int64_t n = 10;
  app.add_option("PATH", path, "a Parquet file")->required();
  app.add_option("-n,--rows", n, "number of rows (default 10)")->check(CLI::NonNegativeNumber);
  app.add_option("--columns", columns, "comma-separated top-level fields or dotted paths (default: all)");
  CLI11_PARSE(app, argc, argv);

  auto file = ParquetFile::Open(LocalFileSystem(), path);
  TableReadOptions options;
  options.columns = SplitColumns(columns);
  TableReader reader(*file, options);
  std::vector<Value> rows = reader.ReadRows(n);

  std::vector<std::string> header;
  for (int f : reader.top_level_fields()) header.push_back(file->schema().root().children[static_cast<size_t>(f)].name);
  std::vector<std::vector<std::string>> cells;
  for (const Value& row : rows) {
    std::vector<std::string> line;
    for (const std::string& name : header) {
      const Value* v = row.Field(name);
      line.push_back(v ? Cell(*v) : "");
    }
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = std::min(kMaxCellWidth, header[c].size());
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string out;
    for (size_t c = 0; c < line.size(); ++c) {
      out += (c ? " | " : "") + line[c] + std::string(width[c] - std::min(width[c], line[c].size()), ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::printf("%s\n", out.c_str());
  };
  print_line(header);
  std::string rule;
  for (size_t c = 0; c < header.size(); ++c) rule += (c ? "-+-" : "") + std::string(width[c], '-');
  std::printf("%s\n", rule.c_str());
  for (const auto& line : cells) print_line(line);
  std::printf("(%zu of %lld rows)\n", rows.size(), static_cast<long long>(file->num_rows()));
  return 0;
}

}  // namespace
}  // namespace lakerun::cli

LAKERUN_REGISTER_COMMAND("table head", "print the first rows of a table", lakerun::cli::RunTableHead);
