#include "dist/shard_transport.h"

#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>

#include "dist/context_impl.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace lakerun::dist {

ShardTransport::ShardTransport(Context& ctx, const std::vector<ShardedBucket>& buckets, bool reduce_scatter,
                               bool shared_memory)
    : ctx_(ctx), buckets_(buckets), pending_(buckets.size()) {
  if (shared_memory && ctx.world_size() > 1 && ctx.device().is_cpu() && !buckets.empty()) {
    SetUpSharedMemory(reduce_scatter);
  }
}

ShardTransport::~ShardTransport() {
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    try {
      FinishReduceScatter(b);  // peers read this rank's slots: leave every round finished
    } catch (const std::exception&) {
    }
  }
}

// Every rank reaches the same verdict from the same layout before SharedMemoryAllReduce::Create asks its peers.
void ShardTransport::SetUpSharedMemory(bool reduce_scatter) {
  const at::ScalarType dtype = buckets_.front().dtype;
  int64_t largest = 0;
  for (const ShardedBucket& b : buckets_) {
    if (b.dtype != dtype || !SharedMemoryAllReduce::Supports(dtype)) return;
    largest = std::max(largest, b.padded_numel(ctx_.world_size()));
  }
  std::vector<SharedBufferSpec> specs;
  for (const ShardedBucket& b : buckets_) specs.push_back({dtype, std::max<int64_t>(b.chunk_numel, 1)});
  gather_base_ = 0;
  scatter_base_ = specs.size();
  scatter_slots_ = reduce_scatter ? std::min<std::size_t>(kReduceScattersInFlight, buckets_.size()) : 0;
  for (std::size_t k = 0; k < scatter_slots_; ++k) specs.push_back({dtype, largest});
  std::string why_not;
  shared_ = SharedMemoryAllReduce::Create(ctx_, specs, &why_not, "ShardedDataParallel collective");
  if (!shared_) {
    if (ctx_.rank() == 0) {
      LAKERUN_LOG(Info) << "ShardedDataParallel: buckets go through " << ToString(ctx_.backend())
                        << ", not shared memory: " << why_not;
    }
    return;
  }
  slot_use_.resize(scatter_slots_);
  for (const SharedBufferSpec& s : specs) buffer_bytes_ += s.numel * static_cast<int64_t>(c10::elementSize(dtype));
}

void ShardTransport::StartReduceScatter(std::size_t b, const at::Tensor& input, const at::Tensor& output) {
  if (!shared_) {
    // At most two in flight, as through shared memory: each holds its bucket and a receive buffer as large.
    if (b >= kReduceScattersInFlight) FinishReduceScatter(b - kReduceScattersInFlight);
    pending_[b] = dist::StartReduceScatter(ctx_, input, output);
    return;
  }
  const std::size_t slot = b % scatter_slots_;
  FinishSharedSlot(slot);  // its previous bucket, b - scatter_slots_
  const std::size_t i = scatter_base_ + slot;
  shared_->input(i).narrow(0, 0, input.numel()).copy_(input);
  shared_->Start(i);
  slot_use_[slot] = {b, output};
}

void ShardTransport::FinishSharedSlot(std::size_t slot) {
  SlotUse& use = slot_use_[slot];
  if (!use.output.defined()) return;
  const std::size_t i = scatter_base_ + slot;
  const int64_t n = buckets_[use.bucket].chunk_numel;
  at::Tensor output = std::move(use.output);
  use.output = at::Tensor();
  {
    rdzv::ProgressReporter::Scope waiting(ctx_.impl().progress.get(), rdzv::Collective::kSharedMemoryReduceScatter);
    shared_->Finish(i, n * ctx_.world_size());
  }
  output.copy_(shared_->sum(i).narrow(0, n * ctx_.rank(), n));
}

void ShardTransport::FinishReduceScatter(std::size_t b) {
  if (!shared_) {
    pending_[b].Wait();
    pending_[b] = PendingShardOp();  // the process group's work object holds the bucket and its receive buffer
    return;
  }
  if (scatter_slots_ == 0) return;
  const std::size_t slot = b % scatter_slots_;
  if (slot_use_[slot].bucket == b) FinishSharedSlot(slot);
}

PendingShardOp ShardTransport::StartAllGather(std::size_t b, const at::Tensor& chunk, const at::Tensor& whole) {
  if (!shared_) return dist::StartAllGather(ctx_, chunk, whole);
  if (chunk.numel() == 0) {
    return PendingShardOp(&ctx_, compat::WorkPtr(), [] {}, "all_gather of nothing", rdzv::Collective::kNone);
  }
  const std::size_t i = gather_base_ + b;
  LAKERUN_CHECK(whole.numel() == chunk.numel() * ctx_.world_size(), "ShardTransport::StartAllGather: bucket ", b,
                " gathers ", chunk.numel(), " elements per rank into ", whole.numel());
  shared_->input(i).narrow(0, 0, chunk.numel()).copy_(chunk);
  shared_->Start(i);
  SharedMemoryAllReduce* shared = shared_.get();
  const at::ScalarType slot_dtype = shared_->input(i).scalar_type();
  auto finish = [shared, i, whole, slot_dtype] {
    if (whole.scalar_type() == slot_dtype) return shared->FinishGather(i, whole);
    at::Tensor staged = at::empty({whole.numel()}, whole.options().dtype(slot_dtype));  // level 3 mixed precision
    shared->FinishGather(i, staged);
    whole.copy_(staged);
  };
  return PendingShardOp(&ctx_, compat::WorkPtr(), std::move(finish), "all_gather through shared memory",
                        rdzv::Collective::kSharedMemoryAllGather);
}

std::string ShardTransport::name() const {
  if (ctx_.world_size() <= 1) return "none";
  return shared_ ? "shared memory" : ToString(ctx_.backend());
}

int64_t ShardTransport::buffer_bytes() const { return buffer_bytes_; }

}  // namespace lakerun::dist
