// `lakerun table inspect PATH [--json] [--version V | --timestamp T] [--filter EXPR]`: schema, row groups, column
// chunks (codecs, encodings, sizes, statistics, how many pages carry a CRC) and key-value metadata of a table file;
// with --filter, what the
// filter skips instead (cli/table_inspect_filter.h). The kind of table is decided in one place, DetectTableKind
// (cli/table_source.h); each kind has its own Inspect* function.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "cli/table_inspect_delta.h"
#include "cli/table_inspect_filter.h"
#include "cli/table_source.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/parquet.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::cli {
namespace {

using namespace lakerun::parquet;
using nlohmann::ordered_json;

std::string Truncate(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

std::string TypeName(const ColumnDescriptor& c) {
  std::string t = ToString(c.physical_type);
  if (c.physical_type == PhysicalType::kFixedLenByteArray) t += "(" + std::to_string(c.type_length) + ")";
  return t;
}

std::string Annotation(const LogicalType& l, ConvertedType c) {
  std::string a = l.ToString();
  if (a.empty() && c != ConvertedType::kNone) a = ToString(c);
  return a;
}

std::string StatText(const std::optional<Value>& v) { return v ? Truncate(v->ToString(), 24) : "-"; }

std::string Encodings(const ColumnChunkMeta& c) {
  std::string s;
  for (Encoding e : c.encodings) s += (s.empty() ? "" : ",") + ToString(e);
  return s;
}

// How many of a column chunk's pages store a CRC-32 in their header, from the page headers alone.
struct PageCount {
  int64_t pages = 0;
  int64_t with_crc = 0;
  std::string problem;  ///< why the headers could not be read (a damaged chunk), or empty
};

// Per row group, per column chunk; also the totals in *total (its problem: the first chunk's that has one).
std::vector<std::vector<PageCount>> CountPages(const ParquetFile& f, PageCount* total) {
  std::vector<std::vector<PageCount>> counts(static_cast<size_t>(f.num_row_groups()));
  for (int rg = 0; rg < f.num_row_groups(); ++rg) {
    for (int c = 0; c < f.schema().num_columns(); ++c) {
      PageCount count;
      try {
        for (const PageSummary& page : f.ReadPageHeaders(rg, c)) {
          ++count.pages;
          count.with_crc += page.crc.has_value();
        }
      } catch (const CorruptDataError& e) {
        count.problem = e.what();
        if (total->problem.empty()) total->problem = count.problem;
      }
      total->pages += count.pages;
      total->with_crc += count.with_crc;
      counts[static_cast<size_t>(rg)].push_back(count);
    }
  }
  return counts;
}

std::string PageChecksumText(const PageCount& total) {
  if (!total.problem.empty()) return "unknown: " + total.problem;
  if (total.with_crc == 0) return StrCat("none (0 of ", total.pages, " pages: damage goes undetected on read)");
  if (total.with_crc == total.pages) {
    return StrCat("present on ", total.pages, " of ", total.pages, " pages (CRC-32, checked on read)");
  }
  return StrCat("present on ", total.with_crc, " of ", total.pages, " pages (the others are read unchecked)");
}

ordered_json SchemaJson(const SchemaNode& n) {
  ordered_json j;
  j["name"] = n.name;
  j["repetition"] = ToString(n.repetition);
  if (n.is_group) {
    j["type"] = "group";
  } else {
    j["type"] = ToString(n.physical_type);
    if (n.physical_type == PhysicalType::kFixedLenByteArray) j["type_length"] = n.type_length;
  }
  if (n.logical_type.kind != LogicalType::Kind::kNone) j["logical_type"] = n.logical_type.ToString();
  if (n.converted_type != ConvertedType::kNone) j["converted_type"] = ToString(n.converted_type);
  if (n.field_id) j["field_id"] = *n.field_id;
  if (n.is_leaf()) {
    j["max_definition_level"] = n.max_def_level;
    j["max_repetition_level"] = n.max_rep_level;
  }
  if (n.is_group) {
    j["children"] = ordered_json::array();
    for (const auto& c : n.children) j["children"].push_back(SchemaJson(c));
  }
  return j;
}

void PrintParquetJson(const ParquetFile& f, const std::vector<std::vector<PageCount>>& pages, const PageCount& total) {
  const FileMetaData& md = f.metadata();
  ordered_json j;
  j["path"] = f.path();
  j["format"] = "parquet";
  j["file_size"] = f.file_size();
  j["version"] = md.version;
  j["created_by"] = md.created_by;
  j["num_rows"] = md.num_rows;
  j["page_checksums"] = {{"pages", total.pages}, {"with_crc", total.with_crc}};
  if (!total.problem.empty()) j["page_checksums"]["error"] = total.problem;
  j["schema"] = SchemaJson(md.schema.root());
  j["row_groups"] = ordered_json::array();
  for (size_t r = 0; r < md.row_groups.size(); ++r) {
    const RowGroupMeta& g = md.row_groups[r];
    ordered_json rg;
    rg["ordinal"] = g.ordinal;
    rg["num_rows"] = g.num_rows;
    rg["total_byte_size"] = g.total_byte_size;
    if (g.total_compressed_size) rg["total_compressed_size"] = *g.total_compressed_size;
    rg["columns"] = ordered_json::array();
    for (const auto& c : g.columns) {
      const ColumnDescriptor& d = md.schema.column(c.column);
      ordered_json cj;
      cj["path"] = d.dotted_path;
      cj["type"] = ToString(c.physical_type);
      cj["codec"] = ToString(c.codec);
      cj["encodings"] = ordered_json::array();
      for (Encoding e : c.encodings) cj["encodings"].push_back(ToString(e));
      cj["num_values"] = c.num_values;
      cj["total_compressed_size"] = c.total_compressed_size;
      cj["total_uncompressed_size"] = c.total_uncompressed_size;
      cj["data_page_offset"] = c.data_page_offset;
      if (c.dictionary_page_offset) cj["dictionary_page_offset"] = *c.dictionary_page_offset;
      const PageCount& count = pages[r][static_cast<size_t>(c.column)];
      cj["pages"] = count.pages;
      cj["pages_with_crc"] = count.with_crc;
      if (c.statistics) {
        ordered_json s;
        if (auto v = c.statistics->MinValue(d)) s["min"] = v->ToString();
        if (auto v = c.statistics->MaxValue(d)) s["max"] = v->ToString();
        if (c.statistics->null_count) s["null_count"] = *c.statistics->null_count;
        if (c.statistics->distinct_count) s["distinct_count"] = *c.statistics->distinct_count;
        cj["statistics"] = s;
      }
      rg["columns"].push_back(cj);
    }
    j["row_groups"].push_back(rg);
  }
  j["key_value_metadata"] = ordered_json::object();
  for (const auto& kv : md.key_value_metadata) {
    j["key_value_metadata"][kv.key] = kv.value ? ordered_json(*kv.value) : ordered_json(nullptr);
  }
  std::printf("%s\n", j.dump(2, ' ', false, ordered_json::error_handler_t::replace).c_str());
}

void PrintParquetText(const ParquetFile& f, const PageCount& total) {
  const FileMetaData& md = f.metadata();
  std::printf("file:       %s\n", f.path().c_str());
  std::printf("format:     parquet (version %d), %llu bytes\n", md.version,
              static_cast<unsigned long long>(f.file_size()));
  std::printf("created by: %s\n", md.created_by.empty() ? "-" : md.created_by.c_str());
  std::printf("rows:       %lld in %d row group(s), %d column(s)\n", static_cast<long long>(md.num_rows),
              f.num_row_groups(), md.schema.num_columns());
  std::printf("page checksums: %s\n\n", PageChecksumText(total).c_str());
  std::printf("schema:\n");
  std::string tree = md.schema.ToString();
  size_t start = 0;
  while (start < tree.size()) {
    size_t end = tree.find('\n', start);
    std::printf("  %s\n", tree.substr(start, end - start).c_str());
    start = end == std::string::npos ? tree.size() : end + 1;
  }
  std::printf("\ncolumns:\n  %-3s %-32s %-22s %-26s %4s %4s\n", "#", "path", "type", "annotation", "def", "rep");
  for (const auto& c : md.schema.columns()) {
    std::printf("  %-3d %-32s %-22s %-26s %4d %4d\n", c.index, Truncate(c.dotted_path, 32).c_str(),
                TypeName(c).c_str(), Annotation(c.logical_type, c.converted_type).c_str(), c.max_def_level,
                c.max_rep_level);
  }
  for (const auto& g : md.row_groups) {
    std::printf("\nrow group %d: %lld rows, %lld bytes uncompressed, %lld compressed\n", g.ordinal,
                static_cast<long long>(g.num_rows), static_cast<long long>(g.total_byte_size),
                static_cast<long long>(g.total_compressed_size.value_or(0)));
    std::printf("  %-28s %-8s %-36s %10s %12s %9s %7s %-24s %-24s\n", "column", "codec", "encodings", "compressed",
                "uncompressed", "values", "nulls", "min", "max");
    for (const auto& c : g.columns) {
      const ColumnDescriptor& d = md.schema.column(c.column);
      std::string nulls = "-";
      std::optional<Value> lo, hi;
      if (c.statistics) {
        if (c.statistics->null_count) nulls = std::to_string(*c.statistics->null_count);
        lo = c.statistics->MinValue(d);
        hi = c.statistics->MaxValue(d);
      }
      std::printf("  %-28s %-8s %-36s %10lld %12lld %9lld %7s %-24s %-24s\n", Truncate(d.dotted_path, 28).c_str(),
                  ToString(c.codec).c_str(), Truncate(Encodings(c), 36).c_str(),
                  static_cast<long long>(c.total_compressed_size), static_cast<long long>(c.total_uncompressed_size),
                  static_cast<long long>(c.num_values), nulls.c_str(), StatText(lo).c_str(), StatText(hi).c_str());
    }
  }
  if (!md.key_value_metadata.empty()) {
    std::printf("\nkey-value metadata:\n");
    for (const auto& kv : md.key_value_metadata) {
      std::printf("  %s = %s\n", kv.key.c_str(), kv.value ? Truncate(*kv.value, 200).c_str() : "(null)");
    }
  }
}

int InspectParquet(const std::string& path, bool json) {
  auto f = ParquetFile::Open(UriFileSystem(), path);
  PageCount total;
  const auto pages = CountPages(*f, &total);
  if (json) {
    PrintParquetJson(*f, pages, total);
  } else {
    PrintParquetText(*f, total);
  }
  return total.problem.empty() ? 0 : 1;  // a chunk whose page headers are damaged
}

int RunTableInspect(int argc, char** argv) {
  CLI::App app("print the schema, row groups, column chunks and metadata of a table", argv[0]);
  std::string path;
  bool json = false;
  TimeTravel travel;
  std::string filter;
  app.add_option("PATH", path, "a Parquet file or a Delta table (a directory holding _delta_log/); with --filter, "
                               "also a folder of Parquet files")->required();
  app.add_flag("--json", json, "print JSON instead of text");
  CLI::Option* filter_option = app.add_option("--filter", filter, "print what this filter skips: files (partition values, Delta stats), row "
                                     "groups (footer statistics) and pages (page index), with counts and bytes; "
                                     "e.g. \"x < 100 and split = 'train'\"");
  AddTimeTravelOptions(app, &travel);
  CLI11_PARSE(app, argc, argv);
  if (filter_option->count() > 0) {
    InspectFilter(path, DetectTableKind(path), travel, filter, json, std::cout);
    return 0;
  }
  switch (DetectTableKind(path)) {
    case TableKind::kParquetFile:
      RefuseTimeTravel(travel, path);
      return InspectParquet(path, json);
    case TableKind::kParquetFolder:
      LAKERUN_THROW(InvalidArgument, path, " is a directory but not a Delta table (no _delta_log); inspect one of "
                    "its Parquet files");
    case TableKind::kDeltaTable:
      return InspectDeltaTable(path, travel, json, std::cout, std::cerr);
  }
  return 1;
}

}  // namespace
}  // namespace lakerun::cli

LAKERUN_REGISTER_COMMAND("table inspect", "print a table's schema, row groups, codecs, encodings and statistics",
                         lakerun::cli::RunTableInspect);
