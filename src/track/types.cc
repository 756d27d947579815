#include "lakerun/track/types.h"

#include <cmath>

namespace lakerun::track {

std::string_view RunStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning: return "RUNNING";
    case RunStatus::kScheduled: return "SCHEDULED";
    case RunStatus::kFinished: return "FINISHED";
    case RunStatus::kFailed: return "FAILED";
    case RunStatus::kKilled: return "KILLED";
  }
  return "UNKNOWN";
}

std::optional<RunStatus> ParseRunStatusName(std::string_view name) {
  for (int i = 1; i <= 5; ++i) {
    if (RunStatusName(static_cast<RunStatus>(i)) == name) return static_cast<RunStatus>(i);
  }
  return std::nullopt;
}

std::optional<RunStatus> RunStatusFromInt(int value) {
  if (value < 1 || value > 5) return std::nullopt;
  return static_cast<RunStatus>(value);
}

bool MetricIsLater(const Metric& a, const Metric& b) {
  if (a.step != b.step) return a.step > b.step;
  if (a.timestamp_ms != b.timestamp_ms) return a.timestamp_ms > b.timestamp_ms;
  // Python's max over tuples: a NaN value never compares greater, so the earlier point wins ties with NaN.
  return a.value > b.value;
}

}  // namespace lakerun::track
