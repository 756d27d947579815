#include "unit_cache.h"

#include "lakerun/base/error.h"

namespace lakerun::data {

UnitCache::UnitCache(const RowSource& source, size_t max_bytes, std::chrono::milliseconds timeout)
    : source_(source), max_bytes_(max_bytes), timeout_(timeout) {}

std::shared_ptr<const UnitData> UnitCache::Get(size_t unit) {
  std::promise<std::shared_ptr<const UnitData>> promise;
  Future future;
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(unit);
    if (it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      future = it->second.future;
    } else {
      future = promise.get_future().share();
      lru_.push_front(unit);
      entries_.emplace(unit, Entry{future, 0, lru_.begin()});
      ++reads_;
      mine = true;
    }
  }
  if (!mine) {
    if (future.wait_for(timeout_) != std::future_status::ready) {
      LAKERUN_THROW(IoError, "waited more than ", timeout_.count(), " ms for another thread to read ",
                    source_.DescribeUnit(unit));
    }
    return future.get();
  }
  std::shared_ptr<const UnitData> data;
  try {
    UnitReadOptions read;
    read.allow_views = true;  // collation reads rows through ColumnChunk::RowView or checks `views`
    data = source_.ReadUnitWith(unit, read);
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(unit);
    lru_.erase(it->second.lru);
    entries_.erase(it);
    throw;
  }
  promise.set_value(data);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(unit);
  it->second.bytes = data->bytes;
  bytes_ += data->bytes;
  EvictLocked(unit);
  return data;
}

void UnitCache::EvictLocked(size_t keep) {
  // Walk from the least recently used end; skip decodes still in flight (bytes not recorded yet).
  auto it = lru_.end();
  while (bytes_ > max_bytes_ && it != lru_.begin()) {
    --it;
    const size_t unit = *it;
    Entry& e = entries_.at(unit);
    if (e.bytes == 0 || (unit == keep && e.bytes <= max_bytes_)) continue;
    bytes_ -= e.bytes;
    it = lru_.erase(it);
    entries_.erase(unit);
  }
}

bool UnitCache::Contains(size_t unit) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(unit) > 0;
}

size_t UnitCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t UnitCache::reads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

}  // namespace lakerun::data
