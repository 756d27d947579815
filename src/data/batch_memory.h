// Recycled memory for the tensors of CPU batches. Internal.
//
// A batch is built on a decoding thread and usually freed on the training thread. Through malloc every such free
// takes the lock of the decoding thread's arena while that thread allocates the next batch from it, and a batch's
// 78 KB image tensor is too large for malloc's per-thread caches. BatchMemory keeps freed blocks on its own free list
// (a short critical section under its own mutex) and lends the most recently returned one first, whose lines are
// most likely still in cache when the next gather writes them.
#pragma once

#include <ATen/Tensor.h>

#include <cstddef>
#include <memory>

namespace lakerun::data {

class BatchMemory {
 public:
  /// Keeps at most `max_free_bytes` of returned blocks for reuse; beyond that, returned blocks are freed.
  explicit BatchMemory(size_t max_free_bytes);
  /// Blocks still lent out stay valid: each frees itself when its last tensor goes.
  ~BatchMemory();
  BatchMemory(const BatchMemory&) = delete;
  BatchMemory& operator=(const BatchMemory&) = delete;

  /// An uninitialised contiguous CPU tensor, 64-byte aligned, like at::empty(shape, type) but not resizable (its
  /// storage is borrowed). Thread-safe.
  at::Tensor Empty(at::IntArrayRef shape, at::ScalarType type);

  /// Bytes of returned blocks held for reuse now (for tests and diagnostics).
  size_t free_bytes() const;

  struct Pool;  // shared by BatchMemory and every block lent out

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace lakerun::data
