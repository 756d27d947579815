// AsyncLogger: the background thread between a Run's log calls and its Store.
//
// Producers append entries to a bounded pending buffer; one owned thread swaps the whole buffer out under one lock
// acquisition and stores it with Store::LogBatch (which splits as the backend needs). Swapping, rather than popping
// entry by entry from a queue, means producers and the thread contend once per batch, not once per point: a log
// call costs a short uncontended lock and a push_back. Artifacts and flush markers keep their place in the order:
// everything enqueued before a flush marker is stored before the marker's Flush() returns.
//
// Full buffer: QueueFullPolicy::kBlock waits (in timed steps) until the thread makes room; kDrop drops and counts.
// Errors of the background thread are kept and rethrown, wrapped with the run id, by the next Flush(); logging goes
// on with later entries. Every wait is bounded: Flush and Close take a timeout; the thread polls every 100 ms.
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

#include <condition_variable>
#include <vector>

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
  /// Appends under mu_; flush markers bypass the capacity. Returns false if closed.
  bool Push(LogEntry entry, bool is_marker);

  std::shared_ptr<Store> store_;
  const std::string run_id_;
  const size_t capacity_;
  const QueueFullPolicy on_full_;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<bool> warned_full_{false};

  std::mutex mu_;
  std::condition_variable has_work_;  // the thread waits for entries
  std::condition_variable has_room_;  // kBlock producers wait for room
  std::vector<LogEntry> pending_;     // guarded by mu_
  bool closed_ = false;               // guarded by mu_: no more entries accepted; the thread drains and exits

  std::mutex close_mu_;
  bool close_started_ = false;  // guarded by close_mu_
  // Owned by the background thread:
  std::vector<Metric> pending_metrics_;
  std::vector<KeyValue> pending_params_;
  std::vector<KeyValue> pending_tags_;
  std::mutex error_mu_;
  std::exception_ptr error_;  // guarded by error_mu_: first error since the last Flush
  std::thread thread_;
};

}  // namespace lakerun::track
