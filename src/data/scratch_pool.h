// Decode memory shared by every reader of one table source: a pool of parquet::ReadScratch (chunk bytes, page
// buffer, and the page blocks that byte views point into), lent to one decode at a time.
//
// A decode borrows a scratch, reads column chunks with it and returns it. Page blocks stay in their scratch while a
// decoded unit (in a loader's cache) views into them, and are reused by a later decode once nothing holds them. So
// loaders created one after another over the same source, and the threads of one loader, decode into memory that is
// already mapped instead of faulting in fresh pages (47 MB of page blocks for the Fashion-MNIST table).
//
// Retained memory: at most one scratch per reader that ran at the same time, each keeping at most 16 page blocks
// (parquet::ReadScratch's limit); blocks nothing holds any more stay mapped until the source is destroyed or a decode
// reuses them.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "lakerun/format/parquet/file_reader.h"

namespace lakerun::data {

class ScratchPool {
 public:
  /// A scratch lent to one decode; returned to the pool when the lease goes away.
  class Lease {
   public:
    Lease(ScratchPool* pool, std::unique_ptr<parquet::ReadScratch> scratch)
        : pool_(pool), scratch_(std::move(scratch)) {}
    ~Lease() { pool_->Return(std::move(scratch_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    parquet::ReadScratch* get() const { return scratch_.get(); }

   private:
    ScratchPool* pool_;
    std::unique_ptr<parquet::ReadScratch> scratch_;
  };

  /// The scratch returned most recently (its memory is the most likely to be cached and mapped), or a new one.
  Lease Borrow();
  /// Scratches in the pool now (not lent), for tests.
  size_t idle() const;

 private:
  void Return(std::unique_ptr<parquet::ReadScratch> scratch);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<parquet::ReadScratch>> idle_;  // guarded by mu_
};

}  // namespace lakerun::data
