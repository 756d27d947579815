// How ShardedDataParallel's buckets travel: through shared memory when every rank runs on this host, else through
// the process group (shard_collectives.h: NCCL's own reduce-scatter and all-gather, Gloo's all-to-all plus a sum).
//
// Shared memory (every rank on this host, a CPU group, buckets all float32 or all float64, ShardedOptions::
// shared_memory): one segment (shared_memory_allreduce.h) holds
// - per bucket, a chunk-sized slot per rank for the all-gather: each rank writes its chunk, then copies every rank's;
// - at level 2, two slots per rank of the largest bucket's size for the reduce-scatter, used in turn: launching
//   bucket b copies its gradients into slot b % 2, after finishing bucket b - 2 there; the ranks sum disjoint parts
//   into the shared result in rank order (the bits of Gloo's path and of DDP's shared-memory all-reduce), and each
//   copies its chunk out. So a rank holds two bucket-sized slots whatever the size of the model.
// Through the process group as well, at most two reduce-scatters are in flight: starting bucket b first finishes
// bucket b - 2, so a rank holds at most two buckets' gradients and receive buffers whatever the size of the model.
// Reductions start in bucket order and finish in bucket order on every rank, as c10d collectives must.
#pragma once

#include <lakerun/dist/init.h>

#include "dist/shard_collectives.h"
#include "dist/shard_layout.h"
#include "dist/shared_memory_allreduce.h"

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace lakerun::dist {

class ShardTransport {
 public:
  /// Reduce-scatters started and not finished, at most (each holds a bucket-sized buffer or two).
  static constexpr std::size_t kReduceScattersInFlight = 2;

  /// Collective. `reduce_scatter`: level 2 will reduce-scatter gradients (shared memory then needs its slots).
  ShardTransport(Context& ctx, const std::vector<ShardedBucket>& buckets, bool reduce_scatter, bool shared_memory);
  ~ShardTransport();

  /// Starts summing `input` (bucket b's padded gradients) over ranks; this rank's chunk of the sum goes into
  /// `output`. `input` must not change until FinishReduceScatter(b).
  void StartReduceScatter(std::size_t b, const at::Tensor& input, const at::Tensor& output);
  /// Waits for bucket b's reduction (a no-op when it is complete or was never started).
  void FinishReduceScatter(std::size_t b);
  /// Every rank's chunk of bucket b, in rank order, into `whole`.
  PendingShardOp StartAllGather(std::size_t b, const at::Tensor& chunk, const at::Tensor& whole);

  /// "shared memory", or the process group's backend ("gloo", "nccl"); "none" at world size 1.
  std::string name() const;
  /// This rank's buffers kept between steps (its shared-memory slots).
  int64_t buffer_bytes() const;

 private:
  void SetUpSharedMemory(bool reduce_scatter);
  void FinishSharedSlot(std::size_t slot);

  Context& ctx_;
  const std::vector<ShardedBucket>& buckets_;
  std::vector<PendingShardOp> pending_;  // process group: per bucket
  std::unique_ptr<SharedMemoryAllReduce> shared_;
  std::size_t gather_base_ = 0, scatter_base_ = 0, scatter_slots_ = 0;  // buffer indices in shared_
  struct SlotUse {
    std::size_t bucket = 0;
    at::Tensor output;  // undefined: the slot is free
  };
  std::vector<SlotUse> slot_use_;
  int64_t buffer_bytes_ = 0;
};

}  // namespace lakerun::dist
