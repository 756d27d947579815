// Page memory for ColumnData's views form: bytes that outlive the decoder because views point into them.
//
// Memory comes in blocks (shared Buffers) that every ColumnData holding views into them owns. Blocks come from a
// pool (ReadScratch::view_buffers) and are reused once no ColumnData holds them any more, so a loop that reads chunk
// after chunk into the same ColumnData stops allocating, as the copied form does with ReadScratch::page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "lakerun/format/parquet/column_data.h"

namespace lakerun::parquet {

using BufferPool = std::vector<std::shared_ptr<Buffer>>;

/// A pool buffer that nobody else holds (cleared, capacity at least `capacity`), or a fresh one (added to the pool
/// while it is small). `pool` may be nullptr: always a fresh buffer.
std::shared_ptr<Buffer> AcquireBuffer(BufferPool* pool, size_t capacity);

class PageMemory {
 public:
  /// Blocks become owners of `out`. `block_bytes`: the size of a block (the chunk's uncompressed size is a good
  /// guess: one block then holds every page); `chunk` (may be null) owns the chunk's stored bytes (a Buffer or
  /// the file's mapping).
  PageMemory(BufferPool* pool, ColumnData* out, size_t block_bytes, std::shared_ptr<const void> chunk);

  /// `size` bytes at an address that stays valid while out (and `also`, when given) lives.
  uint8_t* Allocate(size_t size, ColumnData* also = nullptr);
  /// Whether views may point into the chunk's stored bytes.
  bool has_chunk() const { return chunk_ != nullptr; }
  /// Makes out (and `also`) owners of the chunk's stored bytes.
  void UseChunk(ColumnData* also = nullptr);

 private:
  BufferPool* pool_;
  ColumnData* out_;
  size_t block_bytes_;
  std::shared_ptr<const void> chunk_;
  bool chunk_used_ = false;
  std::shared_ptr<Buffer> block_;  // current block: bytes are handed out from its end up to its capacity
};

}  // namespace lakerun::parquet
