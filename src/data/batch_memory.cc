#include "batch_memory.h"

#include <ATen/ops/from_blob.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace lakerun::data {
namespace {

struct Block {
  std::shared_ptr<BatchMemory::Pool> owner;  // set while the block is lent out; the free list holds none
  size_t capacity = 0;                        // bytes after the header
};

// The header's room: tensor data starts this far into a block, keeping the block's 64-byte alignment.
constexpr size_t kHeader = 64;
static_assert(sizeof(Block) <= kHeader);

// Sizes are rounded so that a batch and the next, usually the same shape, share a size class.
size_t RoundedCapacity(size_t bytes) {
  const size_t step = bytes < 4096 ? 64 : 4096;
  return std::max<size_t>(step, (bytes + step - 1) / step * step);
}

void Destroy(Block* block) {
  block->~Block();
  std::free(block);
}

}  // namespace

struct BatchMemory::Pool {
  explicit Pool(size_t max) : max_free_bytes(max) {}
  ~Pool() {
    for (void* block : free) Destroy(static_cast<Block*>(block));
  }
  std::mutex mu;
  std::vector<void*> free;  // returned blocks, most recent last; guarded by mu
  size_t free_bytes = 0;    // guarded by mu
  const size_t max_free_bytes;
};

namespace {

Block* Take(BatchMemory::Pool& pool, size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    for (size_t i = pool.free.size(); i-- > 0;) {
      auto* block = static_cast<Block*>(pool.free[i]);
      if (block->capacity != capacity) continue;
      pool.free.erase(pool.free.begin() + static_cast<std::ptrdiff_t>(i));
      pool.free_bytes -= capacity;
      return block;
    }
  }
  void* memory = std::aligned_alloc(64, kHeader + capacity);
  if (memory == nullptr) throw std::bad_alloc();
  auto* block = new (memory) Block;
  block->capacity = capacity;
  return block;
}

// The tensor's deleter: back to the free list, or freed when the list is full or the pool is gone.
void Return(void* context) {
  auto* block = static_cast<Block*>(context);
  const std::shared_ptr<BatchMemory::Pool> pool = std::move(block->owner);  // may be the last reference
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    if (pool->free_bytes + block->capacity <= pool->max_free_bytes) {
      pool->free.push_back(block);
      pool->free_bytes += block->capacity;
      return;
    }
  }
  Destroy(block);
}

}  // namespace

BatchMemory::BatchMemory(size_t max_free_bytes) : pool_(std::make_shared<Pool>(max_free_bytes)) {}

BatchMemory::~BatchMemory() = default;

at::Tensor BatchMemory::Empty(at::IntArrayRef shape, at::ScalarType type) {
  size_t bytes = c10::elementSize(type);
  for (int64_t extent : shape) bytes *= static_cast<size_t>(extent);
  Block* block = Take(*pool_, RoundedCapacity(bytes));
  block->owner = pool_;
  void* data = reinterpret_cast<uint8_t*>(block) + kHeader;
  // From here the maker owns the block through its context: a failure returns it.
  return at::for_blob(data, shape).context(block, &Return).options(at::TensorOptions().dtype(type)).make_tensor();
}

size_t BatchMemory::free_bytes() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->free_bytes;
}

}  // namespace lakerun::data
