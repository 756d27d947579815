#include "cli/skip_report.h"

#include <cstdio>

#include "lakerun/format/parquet/page_pruning.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::cli {
namespace {

using nlohmann::ordered_json;

int64_t RowGroupBytes(const parquet::RowGroupMeta& g) {
  int64_t bytes = 0;
  for (const auto& c : g.columns) bytes += c.total_compressed_size;
  return bytes;
}

ordered_json LevelJson(const LevelCount& c) {
  return {{"total", c.total},
          {"skipped", c.skipped},
          {"kept", c.total - c.skipped},
          {"total_bytes", c.total_bytes},
          {"skipped_bytes", c.skipped_bytes}};
}

std::string Percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0);
  return buf;
}

void PrintLevel(std::ostream& out, const char* name, const LevelCount& c) {
  char line[200];
  std::snprintf(line, sizeof line, "  %-11s %10lld %10lld %10lld %16lld %16lld  %s\n", name,
                static_cast<long long>(c.total - c.skipped), static_cast<long long>(c.skipped),
                static_cast<long long>(c.total), static_cast<long long>(c.skipped_bytes),
                static_cast<long long>(c.total_bytes), Percent(c.skipped_bytes, c.total_bytes).c_str());
  out << line;
}

}  // namespace

void LevelCount::Add(int64_t bytes, bool skip) {
  ++total;
  total_bytes += bytes;
  if (skip) {
    ++skipped;
    skipped_bytes += bytes;
  }
}

void SkipReport::AddParquetFile(const parquet::ParquetFile& file, const format::Filter& filter,
                                const parquet::FilterColumnResolver& resolve) {
  const parquet::FileMetaData& md = file.metadata();
  for (int rg = 0; rg < file.num_row_groups(); ++rg) {
    const parquet::RowGroupMeta& g = md.row_groups[static_cast<size_t>(rg)];
    rows_total += g.num_rows;
    const bool skip = !format::MayMatch(filter, parquet::RowGroupStatistics(md, rg, resolve));
    row_groups.Add(RowGroupBytes(g), skip);
    if (skip) continue;
    rows_in_kept_row_groups += g.num_rows;
    const std::vector<parquet::RowRange> kept = parquet::PagesMayMatch(file, rg, filter, resolve);
    rows_in_kept_pages += parquet::RowCount(kept);
    for (int c = 0; c < file.schema().num_columns(); ++c) {
      const std::optional<parquet::OffsetIndex> index = file.ReadOffsetIndex(rg, c);
      if (!index) {
        ++chunks_without_page_index;
        continue;
      }
      const auto& locations = index->page_locations;
      for (size_t i = 0; i < locations.size(); ++i) {
        const int64_t end = i + 1 < locations.size() ? locations[i + 1].first_row_index : g.num_rows;
        pages.Add(locations[i].compressed_page_size, !parquet::Overlaps(kept, locations[i].first_row_index, end));
      }
    }
  }
}

ordered_json SkipReport::Json() const {
  ordered_json j;
  j["filter"] = filter;
  j["files"] = LevelJson(files);
  j["row_groups"] = LevelJson(row_groups);
  j["pages"] = LevelJson(pages);
  j["pages"]["chunks_without_page_index"] = chunks_without_page_index;
  j["rows"] = {{"total", rows_total},
               {"in_kept_row_groups", rows_in_kept_row_groups},
               {"in_kept_pages", rows_in_kept_pages}};
  return j;
}

void SkipReport::PrintText(std::ostream& out) const {
  out << "filter: " << filter << "\n";
  char header[200];
  std::snprintf(header, sizeof header, "  %-11s %10s %10s %10s %16s %16s  %s\n", "level", "kept", "skipped", "total",
                "skipped bytes", "total bytes", "skipped");
  out << header;
  PrintLevel(out, "files", files);
  PrintLevel(out, "row groups", row_groups);
  PrintLevel(out, "pages", pages);
  out << "  (row groups of the files kept; pages of the row groups kept; compressed bytes)\n";
  if (chunks_without_page_index > 0) {
    out << "  " << chunks_without_page_index << " column chunk(s) of kept row groups have no page index\n";
  }
  out << "rows: " << rows_total << " in kept files, " << rows_in_kept_row_groups << " in kept row groups, "
      << rows_in_kept_pages << " in kept pages\n";
}

}  // namespace lakerun::cli
