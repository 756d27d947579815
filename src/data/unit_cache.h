// A thread-safe cache of decoded I/O units with a byte budget (least recently used units go first).
//
// Concurrent Get()s of the same unit decode it once; the others wait for that decode (bounded by `timeout`).
// Units handed out stay alive while a caller holds them, so memory is at most the budget plus the units held by
// in-flight batches. A unit larger than the whole budget is still served, just not kept.
#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "lakerun/data/row_source.h"

namespace lakerun::data {

class UnitCache {
 public:
  UnitCache(const RowSource& source, size_t max_bytes, std::chrono::milliseconds timeout);

  /// The decoded unit; rethrows the decode's error (the failed unit is not cached, a later Get retries).
  std::shared_ptr<const UnitData> Get(size_t unit);

  /// Whether `unit` is cached or being decoded.
  bool Contains(size_t unit) const;

  size_t cached_bytes() const;
  /// Decodes performed so far (cache misses), for tests.
  size_t reads() const;

 private:
  using Future = std::shared_future<std::shared_ptr<const UnitData>>;
  struct Entry {
    Future future;
    size_t bytes = 0;  // 0 while the decode is in flight
    std::list<size_t>::iterator lru;
  };
  void EvictLocked(size_t keep);

  const RowSource& source_;
  const size_t max_bytes_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::unordered_map<size_t, Entry> entries_;  // guarded by mu_
  std::list<size_t> lru_;                      // most recent first; guarded by mu_
  size_t bytes_ = 0;                           // guarded by mu_
  size_t reads_ = 0;                           // guarded by mu_
};

}  // namespace lakerun::data
