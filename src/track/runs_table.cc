// `lakerun runs list`'s table: its columns and the order of its rows (report.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <variant>

#include "lakerun/base/choices.h"
#include "lakerun/base/error.h"
#include "lakerun/track/report.h"
#include "track/text_table.h"

namespace lakerun::track {
namespace {

enum class ColumnKind { kName, kId, kStatus, kStart, kDuration, kParams, kMetrics, kParam, kMetric, kTag };
constexpr NamedValue<ColumnKind> kWholeColumns[] = {
    {ColumnKind::kName, "name"},         {ColumnKind::kId, "id"},         {ColumnKind::kStatus, "status"},
    {ColumnKind::kStart, "start"},       {ColumnKind::kDuration, "duration"}, {ColumnKind::kParams, "params"},
    {ColumnKind::kMetrics, "metrics"}};
constexpr NamedValue<ColumnKind> kKeyedColumns[] = {
    {ColumnKind::kParam, "params."}, {ColumnKind::kMetric, "metrics."}, {ColumnKind::kTag, "tags."}};

struct Column {
  ColumnKind kind;
  std::string key;   // the param, metric or tag of a keyed column
  std::string text;  // as written: the header
};

std::vector<std::string> ColumnChoices() {
  std::vector<std::string> out;
  for (const auto& c : kWholeColumns) out.emplace_back(c.name);
  for (const auto& c : kKeyedColumns) out.push_back(std::string(c.name) + "<key>");
  return out;
}

Column ParseColumn(const std::string& text, const std::string& flag) {
  for (const auto& c : kKeyedColumns) {
    const std::string prefix = c.name;
    if (text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0) {
      return {c.value, text.substr(prefix.size()), text};
    }
  }
  for (const auto& c : kWholeColumns) {
    if (text == c.name) return {c.value, "", text};
  }
  ThrowNotOneOf(flag, text, ColumnChoices());
}

std::string Header(const Column& c) {
  switch (c.kind) {
    case ColumnKind::kName: return "RUN NAME";
    case ColumnKind::kId: return "RUN ID";
    case ColumnKind::kStatus: return "STATUS";
    case ColumnKind::kStart: return "START (UTC)";
    case ColumnKind::kDuration: return "DURATION";
    case ColumnKind::kParams: return "PARAMS";
    case ColumnKind::kMetrics: return "LATEST METRICS";
    default: return c.text;
  }
}

std::string MonitoredMetric(const RunRecord& run) {
  const auto it = run.tags.find(kMonitorTag);
  return it == run.tags.end() ? "" : it->second;
}

std::string ParamsCell(const RunRecord& run, const TableOptions& options) {
  std::string params;
  size_t n = 0;
  for (const auto& [key, value] : run.params) {
    if (n++ == options.max_params) {
      params += " …";
      break;
    }
    params += (params.empty() ? "" : " ") + key + "=" + internal::Truncate(value, 24);
  }
  return params.empty() ? "-" : params;
}

// The monitored metric first and always, then the others alphabetically up to max_metrics in all.
std::string MetricsCell(const RunRecord& run, const TableOptions& options) {
  const std::string monitored = MonitoredMetric(run);
  std::string metrics;
  size_t n = 0;
  auto add = [&](const std::string& key, const Metric& metric) {
    metrics += (metrics.empty() ? "" : " ") + key + "=" + FormatValue(metric.value);
    ++n;
  };
  if (const auto it = run.latest_metrics.find(monitored); it != run.latest_metrics.end()) add(it->first, it->second);
  for (const auto& [key, metric] : run.latest_metrics) {
    if (key == monitored) continue;
    if (n >= std::max<size_t>(options.max_metrics, 1)) {
      metrics += " …";
      break;
    }
    add(key, metric);
  }
  return metrics.empty() ? "-" : metrics;
}

template <typename Map>
std::string ValueOr(const Map& map, const std::string& key, const std::string& fallback = "-") {
  const auto it = map.find(key);
  return it == map.end() ? fallback : it->second;
}

std::string Cell(const RunRecord& run, const Column& c, const TableOptions& options) {
  switch (c.kind) {
    case ColumnKind::kName: return run.info.run_name.empty() ? "-" : run.info.run_name;
    case ColumnKind::kId: return run.info.run_id.substr(0, 8);
    case ColumnKind::kStatus: return StatusText(run);
    case ColumnKind::kStart: return FormatTimestamp(run.info.start_time_ms);
    case ColumnKind::kDuration: return FormatDuration(run.info);
    case ColumnKind::kParams: return ParamsCell(run, options);
    case ColumnKind::kMetrics: return MetricsCell(run, options);
    case ColumnKind::kParam: return ValueOr(run.params, c.key);
    case ColumnKind::kTag: return ValueOr(run.tags, c.key);
    case ColumnKind::kMetric: {
      const auto it = run.latest_metrics.find(c.key);
      return it == run.latest_metrics.end() ? "-" : FormatValue(it->second.value);
    }
  }
  return "-";
}

// A run's sort value: a number or a string; nullopt when the run has none.
using SortValue = std::optional<std::variant<double, std::string>>;

SortValue NumberOrText(const std::string& text) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (!text.empty() && end != nullptr && *end == '\0' && !std::isnan(number)) return number;
  return text;
}

SortValue ValueOf(const RunRecord& run, const Column& c) {
  switch (c.kind) {
    case ColumnKind::kName: return run.info.run_name;
    case ColumnKind::kId: return run.info.run_id;
    case ColumnKind::kStatus: return std::string(RunStatusName(run.info.status));
    case ColumnKind::kStart: return static_cast<double>(run.info.start_time_ms);
    case ColumnKind::kDuration:
      if (!run.info.end_time_ms || run.info.status == RunStatus::kRunning) return std::nullopt;
      return static_cast<double>(*run.info.end_time_ms - run.info.start_time_ms);
    case ColumnKind::kMetric: {
      const auto it = run.latest_metrics.find(c.key);
      if (it == run.latest_metrics.end() || std::isnan(it->second.value)) return std::nullopt;  // NaN sorts last
      return it->second.value;
    }
    case ColumnKind::kParam:
    case ColumnKind::kTag: {
      const auto& map = c.kind == ColumnKind::kParam ? run.params : run.tags;
      const auto it = map.find(c.key);
      if (it == map.end()) return std::nullopt;
      return NumberOrText(it->second);
    }
    default: return std::nullopt;
  }
}

}  // namespace

void CheckRunsColumns(const std::vector<std::string>& columns, const std::string& flag) {
  for (const std::string& c : columns) ParseColumn(c, flag);
}

std::string FormatRunsTable(const std::vector<RunRecord>& runs, const TableOptions& options) {
  std::vector<Column> columns;
  for (const std::string& text : options.columns) columns.push_back(ParseColumn(text, "columns"));
  if (columns.empty()) {
    for (const auto& c : kWholeColumns) columns.push_back({c.value, "", c.name});
  }
  std::vector<std::vector<std::string>> rows(1);
  for (const Column& c : columns) rows[0].push_back(Header(c));
  for (const RunRecord& run : runs) {
    std::vector<std::string> row;
    for (const Column& c : columns) row.push_back(Cell(run, c, options));
    rows.push_back(std::move(row));
  }
  return internal::RenderTable(rows);
}

void SortRuns(std::vector<RunRecord>& runs, const std::string& key) {
  std::string name = key;
  std::optional<bool> descending;
  if (const size_t colon = key.rfind(':'); colon != std::string::npos) {
    const std::string direction = key.substr(colon + 1);
    LAKERUN_CHECK_AS(ConfigError, direction == "asc" || direction == "desc", "--sort ", key,
                     ": the direction after ':' must be asc or desc, got '", direction, "'");
    descending = direction == "desc";
    name = key.substr(0, colon);
  }
  const Column column = ParseColumn(name, "--sort");
  LAKERUN_CHECK_AS(ConfigError, column.kind != ColumnKind::kParams && column.kind != ColumnKind::kMetrics, "--sort ",
                   name, ": sort by one value, e.g. ", name, ".loss");
  const bool desc = descending.value_or(column.kind == ColumnKind::kStart);
  std::vector<std::pair<SortValue, RunRecord>> keyed;
  for (RunRecord& run : runs) keyed.emplace_back(ValueOf(run, column), std::move(run));
  std::stable_sort(keyed.begin(), keyed.end(), [desc](const auto& a, const auto& b) {
    if (!a.first.has_value() || !b.first.has_value()) return a.first.has_value() && !b.first.has_value();
    return desc ? *b.first < *a.first : *a.first < *b.first;  // numbers before text
  });
  runs.clear();
  for (auto& [value, run] : keyed) runs.push_back(std::move(run));
}

}  // namespace lakerun::track
