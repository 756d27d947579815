// What a `lakerun table` command's PATH is (a Parquet file, a folder of Parquet files, a Delta table) and which
// version of a Delta table it reads (`--version` / `--timestamp`). The one place that decides both, shared by
// `table head` and `table inspect`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/delta/table.h"

namespace lakerun::cli {

enum class TableKind { kParquetFile, kParquetFolder, kDeltaTable };

/// A directory holding `_delta_log/` is a Delta table, another directory a folder of Parquet files, a file a
/// Parquet file. Throws IoError when `path` does not exist.
TableKind DetectTableKind(const std::string& path);

/// The Parquet files under `folder`, recursively (Hive-style partition folders included), sorted by path. Names
/// starting with '_' or '.' (_SUCCESS, _delta_log, .crc files, hidden folders) are skipped; so are files that
/// do not end in ".parquet" when any does. Throws InvalidArgument when there is none.
std::vector<std::string> ListParquetFiles(const std::string& folder);

/// `--version V` / `--timestamp T` of a Delta table.
struct TimeTravel {
  std::optional<int64_t> version;
  std::optional<std::string> timestamp;

  bool requested() const { return version.has_value() || timestamp.has_value(); }
};

/// Adds --version and --timestamp (mutually exclusive) to a command.
void AddTimeTravelOptions(CLI::App& app, TimeTravel* travel);
/// Throws InvalidArgument naming `path` when time travel was asked of a table that is not a Delta table.
void RefuseTimeTravel(const TimeTravel& travel, const std::string& path);
/// The snapshot asked for: the latest, --version V, or the newest version committed at or before --timestamp T.
delta::Snapshot LoadSnapshot(const delta::DeltaTable& table, const TimeTravel& travel);

/// Milliseconds since the epoch of `text`: an integer (milliseconds already), or ISO-8601
/// YYYY-MM-DD[Thh:mm[:ss[.fff]]][Z|+hh:mm|-hh:mm] (no zone: UTC). Throws InvalidArgument naming the text.
int64_t ParseTimestampMs(const std::string& text);

}  // namespace lakerun::cli
