// Text reports over a tracking store: what `lakerun runs list|show|compare` print.
//
//   auto store = OpenStore("./mlruns");
//   std::cout << FormatRunsTable(store->SearchRuns({"0"}));
//
// Latest values follow MLflow: the max by (step, timestamp, value). Histories are drawn as sparklines
// ("▁▂▄█", NaN as a gap) with their min and max.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lakerun/track/store.h"
#include "lakerun/track/types.h"

namespace lakerun::track {

/// A one-line chart of `values` at most `width` cells wide (buckets averaged); NaN/inf points draw as ' '.
std::string Sparkline(const std::vector<double>& values, size_t width = 32);

/// A metric value for people: %.6g, "nan", "inf", "-inf".
std::string FormatValue(double value);
/// "2026-11-22 08:33:52" (UTC) from ms since the epoch.
std::string FormatTimestamp(int64_t ms);
/// "1h 02m", "3m 05s", "4.2s"; "running" when the run has no end time.
std::string FormatDuration(const RunInfo& info);

struct TableOptions {
  size_t max_params = 3;   ///< key params shown per run (alphabetical)
  size_t max_metrics = 3;  ///< latest metrics shown per run (alphabetical)
};

/// One row per run: name, id, status, start, duration, key params, latest metrics.
std::string FormatRunsTable(const std::vector<RunRecord>& runs, const TableOptions& options = {});

/// Histories of a run's metrics by key, as Store::GetMetricHistory returns them.
using MetricHistories = std::map<std::string, std::vector<Metric>>;

/// Every param, tag, and metric (latest value, point count, min/max and a sparkline) of one run.
std::string FormatRunDetails(const RunRecord& run, const MetricHistories& histories);

/// Params and metrics of several runs side by side; metric cells hold the latest value and a sparkline.
std::string FormatRunsComparison(const std::vector<RunRecord>& runs, const std::vector<MetricHistories>& histories);

/// Every metric history of a run.
MetricHistories ReadHistories(Store& store, const RunRecord& run);

/// A run by id, or else by run name across all experiments (most recent first). InvalidArgument naming what was
/// looked for when none matches.
RunRecord FindRun(Store& store, const std::string& id_or_name);

}  // namespace lakerun::track
