#include "objstore/object_read_file.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <future>
#include <utility>

#include "lakerun/base/error.h"
#include "lakerun/objstore/uri_file_system.h"

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

// What this process has read from object stores (ObjectStoreReadsSoFar).
std::atomic<uint64_t> get_requests{0};
std::atomic<uint64_t> bytes_read{0};
std::atomic<uint64_t> files_opened{0};

// One ranged GET, counted. A free function: the I/O threads call it for files that may be closed meanwhile.
void GetCounted(ObjectStore& store, const std::string& key, uint64_t offset, size_t n, char* out) {
  store.GetRange(key, offset, n, out);
  CountRead(n);
}

}  // namespace

void CountRead(uint64_t bytes) {
  get_requests.fetch_add(1, std::memory_order_relaxed);
  bytes_read.fetch_add(bytes, std::memory_order_relaxed);
}

void CountOpen() { files_opened.fetch_add(1, std::memory_order_relaxed); }

ObjectReadFile::ObjectReadFile(std::string uri, ObjectStore& store, std::string key, uint64_t size, std::string tail,
                               const ObjectFileOptions& options, ThreadPool& io)
    : RandomAccessFile(std::move(uri)), store_(store), key_(std::move(key)), size_(size), options_(options), io_(io) {
  if (tail.empty() || tail.size() > size_) return;
  auto block = std::make_shared<Block>();
  block->offset = size_ - tail.size();
  block->size = tail.size();
  block->bytes.reset(new char[tail.size()]);
  std::memcpy(block->bytes.get(), tail.data(), tail.size());
  block->tail = true;
  std::promise<void> ready;
  ready.set_value();
  block->fetched = ready.get_future().share();
  blocks_.push_back(std::move(block));
  tail_fetched_ = true;
}

void ObjectReadFile::ReadAt(uint64_t offset, size_t n, void* out) const {
  if (offset > size_ || n > size_ - offset) {
    LAKERUN_THROW(CorruptDataError, path(), ": read of ", n, " bytes at offset ", offset,
                  " goes past the end of the object (", size_, " bytes)");
  }
  if (n == 0) return;
  std::shared_ptr<Block> block;
  std::packaged_task<void()> tail_fetch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    block = FindBlock(offset, n);
    const uint64_t tail_begin = TailBegin();
    if (block == nullptr && !tail_fetched_ && offset >= tail_begin) {
      // The first read near the end (a Parquet footer's length) brings the whole tail, footer included, in one GET;
      // readers arriving meanwhile wait for it.
      tail_fetched_ = true;
      block = std::make_shared<Block>();
      block->offset = tail_begin;
      block->size = static_cast<size_t>(size_ - tail_begin);
      block->tail = true;
      tail_fetch = std::packaged_task<void()>([this, b = block] {
        b->bytes.reset(new char[b->size]);
        Fetch(b->offset, b->size, b->bytes.get());
      });
      block->fetched = tail_fetch.get_future().share();
      Keep(block);
    }
  }
  if (tail_fetch.valid()) tail_fetch();  // on this thread, unlocked; a failure is kept in the future
  if (block != nullptr && ServeFrom(block, offset, n, out)) return;
  Fetch(offset, n, static_cast<char*>(out));
}

void ObjectReadFile::WillRead(const std::vector<Range>& ranges) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Range> missing;
  std::vector<Group> groups;
  const uint64_t tail_begin = TailBegin();
  for (const auto& [offset, n] : ranges) {
    if (offset > size_ || n > size_ - offset) continue;  // ReadAt reports it
    if (FindBlock(offset, n) != nullptr) continue;
    if (offset >= tail_begin) {
      // The whole tail, as ReadAt would fetch it, but without waiting (once, for every range in it); a GET of its
      // own, so that a range far before it (a Parquet reader's first bytes) does not pull a small file's every byte
      // into one GET.
      if (!tail_fetched_) groups.push_back({tail_begin, size_, static_cast<size_t>(size_ - tail_begin)});
      tail_fetched_ = true;
      continue;
    }
    missing.push_back({offset, n});
  }
  for (const Group& g : Coalesce(std::move(missing), options_.coalesce_gap, options_.request_bytes)) {
    groups.push_back(g);
  }
  for (const Group& g : groups) {
    auto block = std::make_shared<Block>();
    block->offset = g.begin;
    block->size = static_cast<size_t>(g.end - g.begin);
    block->wanted = g.wanted;
    block->tail = g.end == size_ && g.begin <= tail_begin;  // kept: the footer is read more than once
    // The task holds the block and the store, not this file: a file closed before its GETs end is fine.
    ObjectStore* store = &store_;
    block->fetched = io_.Submit([store, key = key_, b = block] {
                          b->bytes.reset(new char[b->size]);
                          GetCounted(*store, key, b->offset, b->size, b->bytes.get());
                        }).share();
    Keep(std::move(block));
  }
}

std::shared_ptr<ObjectReadFile::Block> ObjectReadFile::FindBlock(uint64_t offset, size_t n) const {
  for (const auto& b : blocks_) {
    if (offset >= b->offset && offset + n <= b->offset + b->size) return b;
  }
  return nullptr;
}

bool ObjectReadFile::ServeFrom(const std::shared_ptr<Block>& block, uint64_t offset, size_t n, void* out) const {
  try {
    block->fetched.get();
  } catch (const std::exception&) {
    std::lock_guard<std::mutex> lock(mu_);
    blocks_.erase(std::remove(blocks_.begin(), blocks_.end(), block), blocks_.end());
    if (block->tail) tail_fetched_ = false;
    return false;  // the caller reads the range directly and reports that read's own error
  }
  std::memcpy(out, block->bytes.get() + (offset - block->offset), n);
  std::lock_guard<std::mutex> lock(mu_);
  block->served += n;
  if (!block->tail && block->served >= block->wanted) {
    blocks_.erase(std::remove(blocks_.begin(), blocks_.end(), block), blocks_.end());
  }
  return true;
}

void ObjectReadFile::Keep(std::shared_ptr<Block> block) const {
  blocks_.push_back(std::move(block));
  size_t held = 0;
  for (const auto& b : blocks_) held += b->size;
  // Over the budget, the oldest fetched-ahead blocks go first (their reads then fetch again); the tail stays.
  for (auto it = blocks_.begin(); held > options_.max_cached_bytes && it != blocks_.end();) {
    if ((*it)->tail) {
      ++it;
      continue;
    }
    held -= (*it)->size;
    it = blocks_.erase(it);
  }
}

void ObjectReadFile::Fetch(uint64_t offset, size_t n, char* out) const { GetCounted(store_, key_, offset, n, out); }

uint64_t ObjectReadFile::TailBegin() const { return size_ - std::min<uint64_t>(size_, options_.tail_bytes); }

}  // namespace lakerun::objstore

namespace lakerun {

ObjectStoreReads ObjectStoreReadsSoFar() {
  ObjectStoreReads reads;
  reads.get_requests = objstore::get_requests.load(std::memory_order_relaxed);
  reads.bytes = objstore::bytes_read.load(std::memory_order_relaxed);
  reads.files_opened = objstore::files_opened.load(std::memory_order_relaxed);
  return reads;
}

}  // namespace lakerun
