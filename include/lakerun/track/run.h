// Run: one MLflow run being logged, ended when the object is ended or destroyed (RAII).
//
// Logging is asynchronous. LogMetric/LogParam/SetTag validate the key and value on the calling thread, then only
// enqueue; a background thread owned by the Run drains the queue in batches into the store (file appends, or
// log-batch calls split at MLflow's limits). When the queue is full the call blocks or drops, per
// TrackerOptions::on_full. Errors of the background thread surface, with context, from the next Flush() or End().
//
// Guarantees: everything logged before Flush() returns, End() returns, the destructor returns (normal exit or stack
// unwinding), or SIGINT/SIGTERM/SIGHUP/SIGPIPE arrives (when signal handling is on) is stored: appended and flushed
// to the file store, or sent to the server. Status: End() -> FINISHED by default; the destructor -> FINISHED, or
// FAILED while an exception unwinds the stack (std::uncaught_exceptions); those signals -> KILLED, then the signal
// is re-raised with its default action.
//
// Thread-safety: log calls may come from several threads; End() and the destructor must not race with them.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "lakerun/track/types.h"

namespace lakerun::track {

class Run {
 public:
  /// An inert run: every call is a no-op (what a non-zero rank gets).
  Run();
  ~Run();
  Run(Run&&) noexcept;
  /// Ends the run this object held (FINISHED) before taking over `other`'s.
  Run& operator=(Run&&) noexcept;
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// False for an inert run.
  bool active() const;
  const std::string& run_id() const;
  const std::string& experiment_id() const;
  const std::string& run_name() const;

  /// Params are immutable: logging a different value for a key logged before throws InvalidArgument naming the key
  /// and both values; the same value again is accepted. Values up to 6000 chars.
  void LogParam(const std::string& key, const std::string& value);
  void LogParams(const std::map<std::string, std::string>& params);
  /// NaN and +-inf are allowed. Timestamp: now, unless given (ms since the epoch).
  void LogMetric(const std::string& key, double value, int64_t step = 0);
  void LogMetric(const std::string& key, double value, int64_t step, int64_t timestamp_ms);
  /// All with one timestamp, as a training step's metrics.
  void LogMetrics(const std::map<std::string, double>& metrics, int64_t step = 0);
  /// Tags may be overwritten. Values up to 8000 chars.
  void SetTag(const std::string& key, const std::string& value);
  /// Stores a local file or directory under the artifact root at `artifact_path` ("" = root). Queued behind the
  /// metrics logged before it; the file must stay in place until Flush() (the copy happens in the background).
  void LogArtifact(const std::string& local_path, const std::string& artifact_path = "");

  /// Waits until everything enqueued so far is stored. Throws the background thread's error (IoError, ...) if
  /// storing failed, or IoError if `timeout` passes first. timeout 0 = TrackerOptions::flush_timeout.
  void Flush(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  /// Flushes, then sets status and end time. Later calls are no-ops. Throws like Flush (the status is still set).
  void End(RunStatus status = RunStatus::kFinished);
  /// Log calls dropped because the queue was full (QueueFullPolicy::kDrop).
  uint64_t dropped() const;

  struct State;  // internal
  explicit Run(std::shared_ptr<State> state);

 private:
  std::shared_ptr<State> state_;
  int uncaught_at_start_ = 0;
};

}  // namespace lakerun::track
