#include "cli/table_source.h"

#include <algorithm>
#include <cctype>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/values.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::cli {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void CollectFiles(FileSystem& fs, const std::string& dir, std::vector<std::string>* out) {
  for (const auto& entry : fs.List(dir)) {
    if (entry.name.empty() || entry.name[0] == '_' || entry.name[0] == '.') continue;
    const std::string path = JoinPath(dir, entry.name);
    if (entry.is_directory) {
      CollectFiles(fs, path, out);
    } else {
      out->push_back(path);
    }
  }
}

// Reads `count` digits at `*pos` of `text` as a number; nullopt when they are not there.
std::optional<int64_t> Digits(const std::string& text, size_t* pos, size_t count) {
  if (*pos + count > text.size()) return std::nullopt;
  int64_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  *pos += count;
  return n;
}

// Parses ISO-8601 as ParseTimestampMs describes; nullopt when `text` is not in that form.
std::optional<int64_t> ParseIso(const std::string& text) {
  size_t pos = 0;
  auto expect = [&](char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  };
  const auto year = Digits(text, &pos, 4);
  if (!year || !expect('-')) return std::nullopt;
  const auto month = Digits(text, &pos, 2);
  if (!month || !expect('-')) return std::nullopt;
  const auto day = Digits(text, &pos, 2);
  if (!day || *month < 1 || *month > 12 || *day < 1 || *day > 31) return std::nullopt;
  int64_t ms = delta::DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day)) * 86400000;
  if (pos == text.size()) return ms;
  if (!expect('T') && !expect(' ')) return std::nullopt;
  const auto hour = Digits(text, &pos, 2);
  if (!hour || !expect(':')) return std::nullopt;
  const auto minute = Digits(text, &pos, 2);
  if (!minute || *hour > 23 || *minute > 59) return std::nullopt;
  ms += (*hour * 3600 + *minute * 60) * 1000;
  if (expect(':')) {
    const auto second = Digits(text, &pos, 2);
    if (!second || *second > 60) return std::nullopt;
    ms += *second * 1000;
    if (expect('.')) {
      int64_t scale = 100;
      size_t digits = 0;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        ms += (text[pos] - '0') * scale;  // digits past milliseconds add nothing
        scale /= 10;
        ++pos;
        ++digits;
      }
      if (digits == 0) return std::nullopt;
    }
  }
  if (pos == text.size() || expect('Z')) return pos == text.size() ? std::optional<int64_t>(ms) : std::nullopt;
  const char sign = text[pos];
  if (sign != '+' && sign != '-') return std::nullopt;
  ++pos;
  const auto zone_hours = Digits(text, &pos, 2);
  if (!zone_hours) return std::nullopt;
  expect(':');
  const auto zone_minutes = Digits(text, &pos, 2);
  if (!zone_minutes || pos != text.size()) return std::nullopt;
  const int64_t offset = (*zone_hours * 60 + *zone_minutes) * 60000;
  return sign == '+' ? ms - offset : ms + offset;  // local time minus its offset is UTC
}

}  // namespace

TableKind DetectTableKind(const std::string& path) {
  auto info = UriFileSystem().Stat(path);
  LAKERUN_CHECK_AS(IoError, info.has_value(), path, ": no such file or directory");
  if (!info->is_directory) return TableKind::kParquetFile;
  return delta::IsDeltaTable(path) ? TableKind::kDeltaTable : TableKind::kParquetFolder;
}

std::vector<std::string> ListParquetFiles(const std::string& folder) {
  std::vector<std::string> files;
  CollectFiles(UriFileSystem(), folder, &files);
  const bool any_parquet =
      std::any_of(files.begin(), files.end(), [](const std::string& f) { return EndsWith(f, ".parquet"); });
  if (any_parquet) {
    files.erase(std::remove_if(files.begin(), files.end(),
                               [](const std::string& f) { return !EndsWith(f, ".parquet"); }),
                files.end());
  }
  std::sort(files.begin(), files.end());
  LAKERUN_CHECK(!files.empty(), folder, " is a directory without Parquet files (and not a Delta table: no _delta_log)");
  return files;
}

void AddTimeTravelOptions(CLI::App& app, TimeTravel* travel) {
  auto* version = app.add_option("--version", travel->version, "Delta tables: read this table version");
  auto* timestamp = app.add_option(
      "--timestamp", travel->timestamp,
      "Delta tables: read the newest version committed at or before this time: ISO-8601 "
      "(2026-11-26T10:00:00Z, 2026-11-26T11:00:00+01:00; no zone means UTC) or milliseconds since the epoch");
  version->excludes(timestamp);
}

void RefuseTimeTravel(const TimeTravel& travel, const std::string& path) {
  LAKERUN_CHECK(!travel.requested(), path, ": ", travel.version ? "--version" : "--timestamp",
                " needs a Delta table (a directory holding _delta_log/); this is a Parquet ",
                DetectTableKind(path) == TableKind::kParquetFolder ? "folder" : "file", ", which has no versions");
}

delta::Snapshot LoadSnapshot(const delta::DeltaTable& table, const TimeTravel& travel) {
  if (travel.version) return table.AtVersion(*travel.version);
  if (travel.timestamp) return table.AtTimestamp(ParseTimestampMs(*travel.timestamp));
  return table.Latest();
}

int64_t ParseTimestampMs(const std::string& text) {
  const bool integer = !text.empty() && std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  }) && text != "-";
  if (integer && text.size() < 19) return std::stoll(text);
  const auto ms = ParseIso(text);
  LAKERUN_CHECK(ms.has_value(), "--timestamp '", text,
                "' is neither milliseconds since the epoch nor ISO-8601 like 2026-11-26T10:00:00Z");
  return *ms;
}

}  // namespace lakerun::cli
