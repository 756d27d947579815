#include "scratch_pool.h"

namespace lakerun::data {

ScratchPool::Lease ScratchPool::Borrow() {
  std::unique_ptr<parquet::ReadScratch> scratch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      scratch = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (scratch == nullptr) scratch = std::make_unique<parquet::ReadScratch>();
  return Lease(this, std::move(scratch));
}

void ScratchPool::Return(std::unique_ptr<parquet::ReadScratch> scratch) {
  if (scratch == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(scratch));
}

size_t ScratchPool::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_.size();
}

}  // namespace lakerun::data
