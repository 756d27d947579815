#include "format/parquet/page_memory.h"

#include <algorithm>

namespace lakerun::parquet {
namespace {

// Blocks kept for reuse; more than this many live at once (results still held) are not pooled.
constexpr size_t kMaxPooled = 16;
// The smallest block: small chunks share nothing, so this only bounds the waste of one tiny chunk.
constexpr size_t kMinBlock = 64 << 10;

}  // namespace

std::shared_ptr<Buffer> AcquireBuffer(BufferPool* pool, size_t capacity) {
  if (pool != nullptr) {
    // use_count() == 1: only the pool holds it, and nothing can copy a reference the pool alone has.
    // Best fit: the smallest free buffer that is large enough, else the largest free one (grown).
    std::shared_ptr<Buffer>* best = nullptr;
    for (auto& b : *pool) {
      if (b.use_count() != 1) continue;
      if (best == nullptr) {
        best = &b;
        continue;
      }
      const size_t have = (*best)->capacity(), cap = b->capacity();
      const bool fits = cap >= capacity, best_fits = have >= capacity;
      if ((fits && (!best_fits || cap < have)) || (!fits && !best_fits && cap > have)) best = &b;
    }
    if (best != nullptr) {
      (*best)->Clear();
      (*best)->Reserve(capacity);
      return *best;
    }
  }
  auto b = std::make_shared<Buffer>();
  b->Reserve(capacity);
  if (pool != nullptr && pool->size() < kMaxPooled) pool->push_back(b);
  return b;
}

PageMemory::PageMemory(BufferPool* pool, ColumnData* out, size_t block_bytes, std::shared_ptr<const void> chunk)
    : pool_(pool), out_(out), block_bytes_(std::max(block_bytes, kMinBlock)), chunk_(std::move(chunk)) {}

uint8_t* PageMemory::Allocate(size_t size, ColumnData* also) {
  // Within a block's capacity Resize never moves the bytes, so earlier pages keep their addresses.
  if (block_ == nullptr || block_->capacity() - block_->size() < size) {
    block_ = AcquireBuffer(pool_, std::max(size, block_bytes_));
    out_->AddOwner(block_);
    if (also != nullptr) also->AddOwner(block_);
  } else if (also != nullptr) {
    also->AddOwner(block_);
  }
  const size_t at = block_->size();
  block_->Resize(at + size);
  return block_->data() + at;
}

void PageMemory::UseChunk(ColumnData* also) {
  if (!chunk_used_) {
    out_->AddOwner(chunk_);
    chunk_used_ = true;
  }
  if (also != nullptr) also->AddOwner(chunk_);
}

}  // namespace lakerun::parquet
