#include "lakerun/track/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "lakerun/base/error.h"
#include "lakerun/track/tracker.h"
#include "track/system_tags.h"
#include "track/text_table.h"

namespace lakerun::track {
namespace {

using internal::RenderTable;
using internal::Truncate;

std::string MinMax(const std::vector<Metric>& history) {
  double lo = INFINITY;
  double hi = -INFINITY;
  bool any = false;
  for (const auto& m : history) {
    if (std::isnan(m.value)) continue;
    lo = std::min(lo, m.value);
    hi = std::max(hi, m.value);
    any = true;
  }
  return any ? "min " + FormatValue(lo) + "  max " + FormatValue(hi) : "min -  max -";
}

std::vector<double> Values(const std::vector<Metric>& history) {
  std::vector<double> out;
  out.reserve(history.size());
  for (const auto& m : history) out.push_back(m.value);
  return out;
}

// Points in step order (stable for equal steps), as a chart over steps expects.
std::vector<Metric> ByStep(std::vector<Metric> history) {
  std::stable_sort(history.begin(), history.end(), [](const Metric& a, const Metric& b) { return a.step < b.step; });
  return history;
}

}  // namespace

std::string Sparkline(const std::vector<double>& values, size_t width) {
  static const char* const kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width == 0) return "";
  const size_t cells = std::min(width, values.size());
  std::vector<double> buckets(cells, NAN);
  for (size_t c = 0; c < cells; ++c) {
    const size_t begin = c * values.size() / cells;
    const size_t end = std::max(begin + 1, (c + 1) * values.size() / cells);
    double sum = 0;
    size_t n = 0;
    for (size_t i = begin; i < end; ++i) {
      if (std::isfinite(values[i])) {
        sum += values[i];
        ++n;
      }
    }
    if (n > 0) buckets[c] = sum / static_cast<double>(n);
  }
  double lo = INFINITY;
  double hi = -INFINITY;
  for (double v : buckets) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  std::string out;
  for (double v : buckets) {
    if (!std::isfinite(v)) {
      out += ' ';
      continue;
    }
    const int level = hi > lo ? static_cast<int>(std::lround((v - lo) / (hi - lo) * 7.0)) : 3;
    out += kBars[std::clamp(level, 0, 7)];
  }
  return out;
}

std::optional<std::string> StaleReason(const RunRecord& run) {
  if (run.info.status != RunStatus::kRunning) return std::nullopt;
  const auto host = run.tags.find(kHostTag);
  const auto pid = run.tags.find(kPidTag);
  if (host == run.tags.end() || pid == run.tags.end()) return std::nullopt;
  int64_t pid_number = 0;
  try {
    pid_number = std::stoll(pid->second);
  } catch (const std::exception&) {
    return std::nullopt;  // not lakerun's tag
  }
  const auto start = run.tags.find(kProcessStartTag);
  const ProcessCheck check =
      CheckRecordedProcess(host->second, pid_number, start == run.tags.end() ? "" : start->second);
  if (check.state != ProcessState::kGone) return std::nullopt;
  std::string reason = "process " + pid->second + " on this host is gone";
  if (!check.detail.empty()) reason += " (" + check.detail + ")";
  return reason;
}

std::string StatusText(const RunRecord& run) {
  std::string text(RunStatusName(run.info.status));
  if (auto stale = StaleReason(run)) text += " (stale: " + *stale + ")";
  return text;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  return buf;
}

std::string FormatTimestamp(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string FormatDuration(const RunInfo& info) {
  // A continued run (MLFLOW_RUN_ID, a restarted job) keeps the end time of its earlier end until it ends again.
  if (!info.end_time_ms || info.status == RunStatus::kRunning) return "running";
  const int64_t ms = std::max<int64_t>(0, *info.end_time_ms - info.start_time_ms);
  char buf[32];
  if (ms < 60000) {
    std::snprintf(buf, sizeof(buf), "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3600000) {
    std::snprintf(buf, sizeof(buf), "%lldm %02llds", static_cast<long long>(ms / 60000),
                  static_cast<long long>(ms / 1000 % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh %02lldm", static_cast<long long>(ms / 3600000),
                  static_cast<long long>(ms / 60000 % 60));
  }
  return buf;
}

namespace {

// The "deleted:" line of a run that is deleted, by itself or with its experiment; "" for an active one.
std::string DeletedLine(const RunRecord& run, const std::optional<Experiment>& experiment) {
  const bool experiment_deleted = experiment && experiment->lifecycle_stage == "deleted";
  if (run.info.lifecycle_stage != "deleted" && !experiment_deleted) return "";
  std::string line = "  deleted:    ";
  line += run.info.deleted_time_ms ? FormatTimestamp(*run.info.deleted_time_ms) + " UTC" : std::string("yes");
  if (experiment_deleted) line += " (with its experiment)";
  return line + "\n";
}

}  // namespace

std::string FormatRunDetails(const RunRecord& run, const MetricHistories& histories,
                             const std::optional<Experiment>& experiment) {
  std::string out;
  out += "Run " + run.info.run_id + " (" + (run.info.run_name.empty() ? "-" : run.info.run_name) + ")\n";
  out += "  experiment: " + (experiment && !experiment->name.empty()
                                 ? experiment->name + " (" + run.info.experiment_id + ")"
                                 : run.info.experiment_id) + "\n";
  out += "  status:     " + StatusText(run) + "\n";
  out += DeletedLine(run, experiment);
  out += "  user:       " + run.info.user_id + "\n";
  out += "  start:      " + FormatTimestamp(run.info.start_time_ms) + " UTC\n";
  out += "  duration:   " + FormatDuration(run.info) + "\n";
  out += "  artifacts:  " + run.info.artifact_uri + "\n";
  out += "\nParams\n";
  if (run.params.empty()) out += "  (none)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [key, value] : run.params) rows.push_back({"  " + key, value});
  out += RenderTable(rows);
  out += "\nTags\n";
  rows.clear();
  for (const auto& [key, value] : run.tags) rows.push_back({"  " + key, Truncate(value, 80)});
  if (rows.empty()) out += "  (none)\n";
  out += RenderTable(rows);
  out += "\nMetrics\n";
  rows.clear();
  for (const auto& [key, latest] : run.latest_metrics) {
    auto it = histories.find(key);
    const std::vector<Metric> history = it == histories.end() ? std::vector<Metric>{latest} : ByStep(it->second);
    rows.push_back({"  " + key, FormatValue(latest.value), "step " + std::to_string(latest.step),
                    std::to_string(history.size()) + " pts", MinMax(history), Sparkline(Values(history))});
  }
  if (rows.empty()) out += "  (none)\n";
  out += RenderTable(rows);
  return out;
}

std::string FormatRunsComparison(const std::vector<RunRecord>& runs, const std::vector<MetricHistories>& histories) {
  LAKERUN_CHECK(runs.size() == histories.size(), "FormatRunsComparison: ", runs.size(), " runs but ",
                histories.size(), " histories");
  std::vector<std::string> header = {""};
  for (const auto& run : runs) header.push_back(run.info.run_name.empty() ? run.info.run_id.substr(0, 8)
                                                                          : run.info.run_name);
  std::vector<std::vector<std::string>> rows = {header};
  std::vector<std::string> ids = {"run id"};
  std::vector<std::string> status = {"status"};
  for (const auto& run : runs) {
    ids.push_back(run.info.run_id.substr(0, 8));
    status.push_back(StatusText(run));
  }
  rows.push_back(ids);
  rows.push_back(status);
  std::map<std::string, bool> param_keys;
  std::map<std::string, bool> metric_keys;
  for (const auto& run : runs) {
    for (const auto& [key, value] : run.params) param_keys[key] = true;
    for (const auto& [key, value] : run.latest_metrics) metric_keys[key] = true;
  }
  if (!param_keys.empty()) rows.push_back({"PARAMS"});
  for (const auto& [key, unused] : param_keys) {
    std::vector<std::string> row = {"  " + key};
    bool differ = false;
    for (const auto& run : runs) {
      auto it = run.params.find(key);
      row.push_back(it == run.params.end() ? "-" : Truncate(it->second, 24));
      if (row.back() != row[1]) differ = true;
    }
    if (differ) row[0] = "* " + key;  // marks params that differ between runs
    rows.push_back(row);
  }
  if (!metric_keys.empty()) rows.push_back({"METRICS"});
  for (const auto& [key, unused] : metric_keys) {
    std::vector<std::string> row = {"  " + key};
    for (size_t i = 0; i < runs.size(); ++i) {
      auto latest = runs[i].latest_metrics.find(key);
      if (latest == runs[i].latest_metrics.end()) {
        row.push_back("-");
        continue;
      }
      auto h = histories[i].find(key);
      const std::string spark = h == histories[i].end() ? "" : Sparkline(Values(ByStep(h->second)), 16);
      row.push_back(FormatValue(latest->second.value) + (spark.empty() ? "" : " " + spark));
    }
    rows.push_back(row);
  }
  return RenderTable(rows);
}

MetricHistories ReadHistories(Store& store, const RunRecord& run) {
  MetricHistories out;
  for (const auto& [key, latest] : run.latest_metrics) out[key] = store.GetMetricHistory(run.info.run_id, key);
  return out;
}

RunRecord FindRun(Store& store, const std::string& id_or_name) {
  LAKERUN_CHECK(!id_or_name.empty(), "no run given");
  try {
    return store.GetRun(id_or_name);
  } catch (const InvalidArgument&) {
    // Not an id (or not a valid one): look it up by name or id prefix.
  }
  std::vector<std::string> ids;
  for (const auto& e : store.ListExperiments()) ids.push_back(e.experiment_id);
  std::vector<RunRecord> matches;
  if (!ids.empty()) {
    for (auto& run : store.SearchRuns(ids)) {
      if (run.info.run_name == id_or_name || run.info.run_id.rfind(id_or_name, 0) == 0) matches.push_back(run);
    }
  }
  LAKERUN_CHECK(!matches.empty(), "no run with id or name '", id_or_name, "' in tracking store ", store.uri());
  if (matches.size() == 1) return matches.front();
  std::vector<std::vector<std::string>> rows = {{"  RUN ID", "RUN NAME", "EXPERIMENT", "STATUS", "START (UTC)"}};
  for (const RunRecord& run : matches) {
    rows.push_back({"  " + run.info.run_id, run.info.run_name.empty() ? "-" : run.info.run_name,
                    run.info.experiment_id, StatusText(run),
                    FormatTimestamp(run.info.start_time_ms)});
  }
  LAKERUN_THROW(InvalidArgument, "'", id_or_name, "' matches ", matches.size(), " runs in tracking store ",
                store.uri(), "; give one's id (or a longer prefix of it):\n", RenderTable(rows));
}

}  // namespace lakerun::track
