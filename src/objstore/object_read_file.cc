#include "objstore/object_read_file.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <future>

#include "lakerun/base/error.h"

namespace lakerun::objstore {
namespace {

using Range = std::pair<uint64_t, size_t>;

struct Group {
  uint64_t begin = 0;
  uint64_t end = 0;
  size_t wanted = 0;
};

// Sorted ranges merged into GETs: neighbours closer than `gap` share one, until it holds `request_bytes`.
std::vector<Group> Coalesce(std::vector<Range> ranges, size_t gap, size_t request_bytes) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Group> groups;
  for (const auto& [offset, n] : ranges) {
    if (n == 0) continue;
    const uint64_t end = offset + n;
    if (!groups.empty() && offset <= groups.back().end + gap &&
        groups.back().end - groups.back().begin < request_bytes) {
      Group& g = groups.back();
      g.wanted += static_cast<size_t>(end > g.end ? end - std::max(offset, g.end) : 0);
      g.end = std::max(g.end, end);
    } else {
      groups.push_back({offset, end, n});
    }
  }
  return groups;
}

}  // namespace

ObjectReadFile::ObjectReadFile(std::string uri, ObjectStore& store, std::string key, uint64_t size,
                               const ObjectFileOptions& options, ThreadPool& io)
    : RandomAccessFile(std::move(uri)), store_(store), key_(std::move(key)), size_(size), options_(options), io_(io) {}

void ObjectReadFile::ReadAt(uint64_t offset, size_t n, void* out) const {
  if (offset > size_ || n > size_ - offset) {
    LAKERUN_THROW(CorruptDataError, path(), ": read of ", n, " bytes at offset ", offset,
                  " goes past the end of the object (", size_, " bytes)");
  }
  if (n == 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (ServeFromBlocks(offset, n, out)) return;
  const uint64_t tail_begin = size_ - std::min<uint64_t>(size_, options_.tail_bytes);
  if (!tail_fetched_ && offset + n > tail_begin && offset >= tail_begin) {
    // The first read near the end (a Parquet footer's length) brings the whole tail, footer included, in one GET.
    tail_fetched_ = true;
    auto block = std::make_shared<Block>();
    block->offset = tail_begin;
    block->bytes.resize(static_cast<size_t>(size_ - tail_begin));
    block->tail = true;
    try {
      Fetch(tail_begin, block->bytes.size(), block->bytes.data());
    } catch (...) {
      tail_fetched_ = false;
      throw;
    }
    Keep(std::move(block));
    if (ServeFromBlocks(offset, n, out)) return;
  }
  lock.unlock();
  Fetch(offset, n, static_cast<char*>(out));
}

void ObjectReadFile::WillRead(const std::vector<Range>& ranges) const {
  std::vector<Range> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [offset, n] : ranges) {
      if (offset > size_ || n > size_ - offset) continue;  // ReadAt reports it
      const bool held = std::any_of(blocks_.begin(), blocks_.end(), [&, o = offset, len = n](const auto& b) {
        return o >= b->offset && o + len <= b->offset + b->bytes.size();
      });
      if (!held) missing.push_back({offset, n});
    }
  }
  const std::vector<Group> groups = Coalesce(std::move(missing), options_.coalesce_gap, options_.request_bytes);
  std::vector<std::shared_ptr<Block>> fetched;
  for (const Group& g : groups) {
    auto block = std::make_shared<Block>();
    block->offset = g.begin;
    block->bytes.resize(static_cast<size_t>(g.end - g.begin));
    block->wanted = g.wanted;
    fetched.push_back(std::move(block));
  }
  // The first GET runs on this thread, the others on the I/O threads; all are waited for, even after a failure.
  std::vector<std::future<void>> pending;
  for (size_t i = 1; i < fetched.size(); ++i) {
    pending.push_back(io_.Submit([this, block = fetched[i]] {
      Fetch(block->offset, block->bytes.size(), block->bytes.data());
    }));
  }
  std::exception_ptr failure;
  try {
    if (!fetched.empty()) Fetch(fetched[0]->offset, fetched[0]->bytes.size(), fetched[0]->bytes.data());
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& p : pending) {
    try {
      p.get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);  // the caller's ReadAt would have failed the same way
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& block : fetched) Keep(std::move(block));
}

bool ObjectReadFile::ServeFromBlocks(uint64_t offset, size_t n, void* out) const {
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    Block& b = **it;
    if (offset < b.offset || offset + n > b.offset + b.bytes.size()) continue;
    std::memcpy(out, b.bytes.data() + (offset - b.offset), n);
    b.served += n;
    if (!b.tail && b.served >= b.wanted) blocks_.erase(it);
    return true;
  }
  return false;
}

void ObjectReadFile::Keep(std::shared_ptr<Block> block) const {
  blocks_.push_back(std::move(block));
  size_t held = 0;
  for (const auto& b : blocks_) held += b->bytes.size();
  // Over the budget, the oldest fetched-ahead blocks go first (their reads then fetch again); the tail stays.
  for (auto it = blocks_.begin(); held > options_.max_cached_bytes && it != blocks_.end();) {
    if ((*it)->tail) {
      ++it;
      continue;
    }
    held -= (*it)->bytes.size();
    it = blocks_.erase(it);
  }
}

void ObjectReadFile::Fetch(uint64_t offset, size_t n, char* out) const {
  store_.GetRange(key_, offset, n, out);
  CountRead(n);
}

}  // namespace lakerun::objstore
