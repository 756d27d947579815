// AsyncLogger: the background thread between a Run's log calls and its Store.
//
// Producers Enqueue entries into a BoundedQueue; one owned thread drains whatever is queued into one batch and
// stores it with Store::LogBatch (which splits as the backend needs). Artifacts and flush markers keep their place in
// the order: everything enqueued before a flush marker is stored before the marker's Flush() returns.
//
// Errors of the background thread are kept and rethrown, wrapped with the run id, by the next Flush(); logging goes
// on with later entries. Every wait is bounded: Flush and Close take a timeout; the thread polls its queue.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "lakerun/base/bounded_queue.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"

namespace lakerun::track {

struct LogEntry {
  enum class Kind { kMetric, kParam, kTag, kArtifact, kFlush };
  Kind kind = Kind::kMetric;
  Metric metric;
  KeyValue kv;  // param/tag; artifact: key = local path, value = artifact path
  std::shared_ptr<std::promise<void>> done;  // kFlush only
};

class AsyncLogger {
 public:
  AsyncLogger(std::shared_ptr<Store> store, std::string run_id, size_t capacity, QueueFullPolicy on_full);
  /// Stores what is queued (bounded by a 60 s drain), then joins the thread.
  ~AsyncLogger();
  AsyncLogger(const AsyncLogger&) = delete;
  AsyncLogger& operator=(const AsyncLogger&) = delete;

  /// Queues one entry; blocks or drops when the queue is full, per the policy. Entries after Close() are dropped.
  void Enqueue(LogEntry entry);
  /// Returns once everything enqueued before the call is stored. Throws the first storing error since the last
  /// Flush (wrapped, same type family: IoError for I/O, InvalidArgument for rejected values), or IoError on timeout.
  void Flush(std::chrono::milliseconds timeout);
  /// Flush, then stop and join the thread. Idempotent.
  void Close(std::chrono::milliseconds timeout);
  uint64_t dropped() const { return dropped_.load(); }

 private:
  void Loop();
  void Process(LogEntry& entry);
  void StorePending();
  void RecordError(std::exception_ptr error);

  std::shared_ptr<Store> store_;
  const std::string run_id_;
  const QueueFullPolicy on_full_;
  BoundedQueue<LogEntry> queue_;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> warned_full_{false};
  std::mutex close_mu_;
  bool closed_ = false;  // guarded by close_mu_
  // Owned by the background thread:
  std::vector<Metric> pending_metrics_;
  std::vector<KeyValue> pending_params_;
  std::vector<KeyValue> pending_tags_;
  std::mutex error_mu_;
  std::exception_ptr error_;  // guarded by error_mu_: first error since the last Flush
  std::thread thread_;
};

}  // namespace lakerun::track
