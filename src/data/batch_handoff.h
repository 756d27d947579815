// The hand-off of built batches from the decoding threads to Loader::Next(). Internal.
//
// A std::future per batch costs the decoding thread a futex system call on every batch: std::promise publishes its
// value through std::call_once, whose glibc implementation wakes waiters unconditionally. Here a decoding thread
// publishes with one atomic store, and signals only when the training thread is asleep on that very batch, which a
// loader that keeps up makes rare.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "lakerun/data/loader.h"

namespace lakerun::data {

/// One queued batch. Written by one decoding thread, then published; read only after it is seen published.
struct PendingBatch {
  Batch batch;
  std::exception_ptr error;  // set instead of batch when building it failed
  std::atomic<bool> published{false};
  std::atomic<bool> awaited{false};  // a thread is (about to be) asleep on this batch
};

/// Wakes the thread waiting on a PendingBatch. One per loader; any number of batches.
class BatchHandoff {
 public:
  /// Makes `slot` visible to Wait (batch or error written before).
  void Publish(PendingBatch& slot) {
    slot.published.store(true);  // sequentially consistent with `awaited` below: see Wait
    if (!slot.awaited.load()) return;
    { std::lock_guard<std::mutex> lock(mu_); }  // a waiter is either before its check (and sees the flag) or asleep
    cv_.notify_all();
  }

  /// Whether `slot` was published by `deadline`. Several threads may wait, on different batches.
  bool Wait(PendingBatch& slot, std::chrono::steady_clock::time_point deadline) {
    if (slot.published.load(std::memory_order_acquire)) return true;
    // Either Publish sees this flag and signals, or this thread's check below sees the batch published.
    slot.awaited.store(true);
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return slot.published.load(); });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace lakerun::data
