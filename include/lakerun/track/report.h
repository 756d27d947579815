// Text reports over a tracking store: what `lakerun runs list|show|compare` print.
//
//   auto store = OpenStore("./mlruns");
//   std::cout << FormatRunsTable(store->SearchRuns({"0"}));
//
// Latest values follow MLflow: the max by (step, timestamp, value). Histories are drawn as sparklines
// ("▁▂▄█", NaN as a gap) with their min and max.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/track/store.h"
#include "lakerun/track/types.h"

namespace lakerun::track {

/// A one-line chart of `values` at most `width` cells wide (buckets averaged); NaN/inf points draw as ' '.
std::string Sparkline(const std::vector<double>& values, size_t width = 32);

/// Why a RUNNING run cannot be running any more, where this host can tell: the process its tags name (lakerun.host,
/// lakerun.pid, lakerun.process_start: TrackerOptions::record_process) ran on this host and is gone, e.g. "process
/// 1234 on this host is gone". nullopt for any other run: not RUNNING, logged on another host or in another
/// container, without those tags, or still alive.
std::optional<std::string> StaleReason(const RunRecord& run);
/// The status as `lakerun runs` shows it: "FINISHED", "RUNNING", or "RUNNING (stale: process 1234 on this host is
/// gone)".
std::string StatusText(const RunRecord& run);

/// A metric value for people: %.6g, "nan", "inf", "-inf".
std::string FormatValue(double value);
/// "2026-11-22 08:33:52" (UTC) from ms since the epoch.
std::string FormatTimestamp(int64_t ms);
/// "1h 02m", "3m 05s", "4.2s"; "running" when the run is RUNNING or has no end time.
std::string FormatDuration(const RunInfo& info);

/// The tags a lakerun::train::Trainer sets on its run: the metric its checkpoint callback (else its early stopping)
/// monitors, and "min" or "max".
inline constexpr const char* kMonitorTag = "lakerun.monitor";
inline constexpr const char* kMonitorModeTag = "lakerun.monitor_mode";

struct TableOptions {
  size_t max_params = 3;   ///< key params shown per run (alphabetical)
  /// Latest metrics shown per run in the `metrics` column: the monitored one (kMonitorTag) first and always, then
  /// the others alphabetically.
  size_t max_metrics = 3;
  /// The columns, in order (CheckRunsColumns): name, id, status, start, duration, params, metrics, or one value per
  /// column: params.<key>, metrics.<key> (the latest value, never shortened), tags.<key>. Empty: every column
  /// without a key, in that order.
  std::vector<std::string> columns;
};

/// One row per run with the columns of `options` (by default name, id, status, start, duration, key params, latest
/// metrics). Throws ConfigError for an unknown column.
std::string FormatRunsTable(const std::vector<RunRecord>& runs, const TableOptions& options = {});

/// Throws ConfigError naming `flag`, listing the accepted columns and the nearest one, unless every entry is a column
/// name TableOptions::columns accepts.
void CheckRunsColumns(const std::vector<std::string>& columns, const std::string& flag = "--columns");

/// Orders `runs` by `key`: name, id, status, start, duration, or a params.<key>, metrics.<key> or tags.<key> value,
/// optionally followed by ":asc" or ":desc". Defaults: start newest first, everything else ascending (numbers as
/// numbers); runs without the value come last. Stable. Throws ConfigError naming the key when it is unknown.
void SortRuns(std::vector<RunRecord>& runs, const std::string& key);

/// Histories of a run's metrics by key, as Store::GetMetricHistory returns them.
using MetricHistories = std::map<std::string, std::vector<Metric>>;

/// Every param, tag, and metric (latest value, point count, min/max and a sparkline) of one run. A deleted run (its
/// lifecycle_stage, or its experiment's, is "deleted") has a "deleted:" line with the time it was deleted. The
/// experiment, when given, is named by its name as well as its id.
std::string FormatRunDetails(const RunRecord& run, const MetricHistories& histories,
                             const std::optional<Experiment>& experiment = std::nullopt);

/// Params and metrics of several runs side by side; metric cells hold the latest value and a sparkline.
std::string FormatRunsComparison(const std::vector<RunRecord>& runs, const std::vector<MetricHistories>& histories);

/// Every metric history of a run.
MetricHistories ReadHistories(Store& store, const RunRecord& run);

/// A run by id; else the one run, across all experiments, whose name is `id_or_name` or whose id starts with it.
/// InvalidArgument naming what was looked for when none matches, or listing every match (id, name, experiment,
/// status, start) when several do.
RunRecord FindRun(Store& store, const std::string& id_or_name);

}  // namespace lakerun::track
