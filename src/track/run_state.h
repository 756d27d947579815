// Run::State: what a live Run shares with the signal handler (private to lakerun::track).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "lakerun/track/run.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"
#include "track/async_logger.h"

namespace lakerun::track {

struct Run::State {
  State(std::shared_ptr<Store> store, RunInfo info, const TrackerOptions& options,
        std::function<int64_t()> clock_ms);
  ~State();

  /// Flushes, unregisters the signal callback, then sets status and end time once. Rethrows a flush error after the
  /// status is set.
  void End(RunStatus status);
  /// Called on the signal watcher thread (KILLED) or from std::terminate (FAILED): store what is queued, stop the
  /// background thread and set the status, bounded by the flush timeout.
  void OnKillSignal(RunStatus status);

  std::shared_ptr<Store> store;
  RunInfo info;
  TrackerOptions options;
  std::function<int64_t()> clock_ms;
  std::unique_ptr<AsyncLogger> logger;
  std::mutex mu;
  std::map<std::string, std::string> params;  // guarded by mu: logged values, for the immutability check
  std::map<std::string, Metric> last_points;   // guarded by mu: each key's last point, to drop exact repeats
  bool ended = false;                         // guarded by mu
  /// Held for the whole of End() and OnKillSignal(), so a signal arriving while End() runs waits for the status
  /// to be written before the process dies.
  std::timed_mutex end_mu;
  uint64_t signal_token = 0;
  /// The run's announcement in LAKERUN_RUN_INFO_DIR (open_run_file.h), withdrawn once its status is written; "" none.
  std::string announcement;
};

}  // namespace lakerun::track
