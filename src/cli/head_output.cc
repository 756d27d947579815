#include "cli/head_output.h"

#include <algorithm>

#include "cli/value_text.h"
#include "lakerun/base/error.h"

namespace lakerun::cli {
namespace {

using parquet::Value;

constexpr size_t kMaxCellWidth = 48;

const Value& FieldOf(const Value& row, const std::string& name) {
  static const Value kNull;
  const Value* v = row.Field(name);
  return v ? *v : kNull;
}

// One table cell: the value's text on one line, cut to kMaxCellWidth bytes.
std::string Cell(const Value& v, const DisplayType& type) {
  std::string s = CellText(v, type);
  for (char& c : s) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  if (s.size() > kMaxCellWidth) s = s.substr(0, kMaxCellWidth - 3) + "...";
  return s;
}

void PrintText(const HeadTable& table, FILE* out) {
  const size_t n = table.names.size();
  std::vector<std::vector<std::string>> cells;
  for (const Value& row : table.rows) {
    std::vector<std::string> line;
    for (size_t c = 0; c < n; ++c) line.push_back(Cell(FieldOf(row, table.names[c]), table.types[c]));
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; ++c) {
    width[c] = std::min(kMaxCellWidth, table.names[c].size());
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) {
      text += (c ? " | " : "") + line[c] + std::string(width[c] - std::min(width[c], line[c].size()), ' ');
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    std::fprintf(out, "%s\n", text.c_str());
  };
  print_line(table.names);
  std::string rule;
  for (size_t c = 0; c < n; ++c) rule += (c ? "-+-" : "") + std::string(width[c], '-');
  std::fprintf(out, "%s\n", rule.c_str());
  for (const auto& line : cells) print_line(line);
  if (table.total_rows) {
    std::fprintf(out, "(%zu of %lld rows)\n", table.rows.size(), static_cast<long long>(*table.total_rows));
  } else {
    std::fprintf(out, "(%zu rows)\n", table.rows.size());
  }
}

void PrintJsonLines(const HeadTable& table, FILE* out) {
  for (const Value& row : table.rows) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (size_t c = 0; c < table.names.size(); ++c) {
      j[table.names[c]] = JsonOf(FieldOf(row, table.names[c]), table.types[c]);
    }
    const std::string line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::fprintf(out, "%s\n", line.c_str());
  }
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

void PrintCsv(const HeadTable& table, FILE* out) {
  auto print_line = [&](const std::vector<std::string>& fields) {
    std::string line;
    for (size_t c = 0; c < fields.size(); ++c) line += (c ? "," : "") + CsvField(fields[c]);
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), out);
  };
  print_line(table.names);
  for (const Value& row : table.rows) {
    std::vector<std::string> fields;
    for (size_t c = 0; c < table.names.size(); ++c) {
      fields.push_back(CsvText(FieldOf(row, table.names[c]), table.types[c]));
    }
    print_line(fields);
  }
}

}  // namespace

HeadFormat ParseHeadFormat(const std::string& name) {
  if (name == "text") return HeadFormat::kText;
  if (name == "jsonl") return HeadFormat::kJsonLines;
  if (name == "csv") return HeadFormat::kCsv;
  LAKERUN_THROW(InvalidArgument, "--format '", name, "': expected text, jsonl or csv");
}

void PrintHead(const HeadTable& table, HeadFormat format, FILE* out) {
  LAKERUN_INTERNAL_ASSERT(table.names.size() == table.types.size());
  switch (format) {
    case HeadFormat::kText: PrintText(table, out); break;
    case HeadFormat::kJsonLines: PrintJsonLines(table, out); break;
    case HeadFormat::kCsv: PrintCsv(table, out); break;
  }
}

}  // namespace lakerun::cli
