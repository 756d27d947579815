// A remote object opened for positional reads (private to lakerun::objstore; see object_file_system.h).
#pragma once

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/base/thread_pool.h"
#include "objstore/object_file_system.h"
#include "objstore/object_store.h"

namespace lakerun::objstore {

/// Adds one GET of `bytes` to the process's ObjectStoreReadsSoFar().
void CountRead(uint64_t bytes);
/// Adds one opened file.
void CountOpen();

class ObjectReadFile final : public RandomAccessFile {
 public:
  /// `uri` names the object in messages; `io` runs WillRead's GETs and must outlive the file. `tail`: the object's
  /// last bytes when they came with its size (ObjectStore::HeadWithTail), else empty (fetched on first need).
  ObjectReadFile(std::string uri, ObjectStore& store, std::string key, uint64_t size, std::string tail,
                 const ObjectFileOptions& options, ThreadPool& io);

  uint64_t Size() const override { return size_; }
  /// Served from a fetched-ahead block when one holds the range (waiting for it while its GET is in flight), else
  /// one ranged GET.
  void ReadAt(uint64_t offset, size_t n, void* out) const override;
  /// Starts the GETs (coalesced) on the I/O threads and returns at once; the ReadAt calls that follow wait for them.
  void WillRead(const std::vector<std::pair<uint64_t, size_t>>& ranges) const override;

 private:
  // Bytes fetched ahead of the reads that need them.
  struct Block {
    uint64_t offset = 0;
    size_t size = 0;
    // Allocated without zeroing by the task that fetches it (on an I/O thread, so allocating, faulting in and
    // filling many blocks run in parallel instead of before their GETs start); read only once `fetched` is ready.
    std::unique_ptr<char[]> bytes;
    size_t wanted = 0;  // bytes of the ranges asked for (a coalesced block also holds the gaps between them)
    size_t served = 0;  // bytes handed out; the block is dropped once served >= wanted (never, for the tail)
    bool tail = false;
    std::shared_future<void> fetched;  // ready once `bytes` hold the object's bytes (or the GET failed)
  };
  // The block holding all of [offset, offset + n), or null.
  std::shared_ptr<Block> FindBlock(uint64_t offset, size_t n) const;  // requires mu_
  // Copies the range out of `block` once its GET is done; false when that GET failed.
  bool ServeFrom(const std::shared_ptr<Block>& block, uint64_t offset, size_t n, void* out) const;
  void Fetch(uint64_t offset, size_t n, char* out) const;
  uint64_t TailBegin() const;  // where the last options_.tail_bytes begin
  void Keep(std::shared_ptr<Block> block) const;  // requires mu_

  ObjectStore& store_;
  std::string key_;
  uint64_t size_;
  ObjectFileOptions options_;
  ThreadPool& io_;
  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<Block>> blocks_;  // guarded by mu_
  mutable bool tail_fetched_ = false;                  // guarded by mu_
};

}  // namespace lakerun::objstore
