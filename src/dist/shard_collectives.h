// Reduce-scatter and all-gather of equal chunks over a Context's process group, on every backend lakerun runs on.
//
//   PendingShardOp op = StartReduceScatter(ctx, bucket, my_chunk);   // bucket: world * n elements, my_chunk: n
//   ... more work ...
//   op.Wait();                                                      // my_chunk = sum over ranks of their chunk
//
// libtorch 1.13's Gloo has neither reduce_scatter nor _allgather_base, so on Gloo:
// - reduce-scatter is an all-to-all (every rank sends its chunk r of the input to rank r) followed by this rank's
//   sum of the world chunks it received, in rank order. On the wire that is what a ring reduce-scatter moves, (world -
//   1) / world of the input out of and into every rank, in world - 1 messages per rank; it needs an input-sized
//   receive buffer while in flight. Adding in rank order gives every element the same bits as the shared-memory
//   all-reduce, which also adds in rank order.
// - all-gather is Gloo's allgather into views of the output (Gloo gathers into a scratch buffer and copies out).
// On NCCL: _reduce_scatter_base and _allgather_base (Python's reduce_scatter_tensor / all_gather_into_tensor).
// Without a process group (world size 1) both are copies. Every wait is bounded by ctx.timeout(); failures are
// DistError / CommTimeout naming the operation and the rank.
#pragma once

#include <lakerun/dist/init.h>
#include <lakerun/rdzv/progress.h>

#include "dist/c10d_compat.h"

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>

namespace lakerun::dist {

/// A collective in flight. Wait() completes it, marked as `kind` on the launcher's progress board (hang detection,
/// docs/launch.md); the destructor waits for a pending one and ignores its errors, so no transfer outlives the
/// tensors it uses.
class PendingShardOp {
 public:
  PendingShardOp() = default;
  PendingShardOp(Context* ctx, compat::WorkPtr work, std::function<void()> complete, std::string what,
                 rdzv::Collective kind);
  PendingShardOp(PendingShardOp&& other) noexcept;
  PendingShardOp& operator=(PendingShardOp&& other) noexcept;
  ~PendingShardOp();

  /// Blocks until the transfer is done, then runs the local part (Gloo's sum, copies). Does nothing the second time.
  void Wait();
  bool pending() const { return static_cast<bool>(complete_); }

 private:
  Context* ctx_ = nullptr;
  compat::WorkPtr work_;            // null: nothing to wait for
  std::function<void()> complete_;  // empty: done
  std::string what_;
  rdzv::Collective kind_ = rdzv::Collective::kNone;
};

/// output (n elements) becomes the element-wise sum over ranks of their input's elements [rank * n, (rank + 1) * n).
/// input: world * n elements, contiguous, on ctx.device(); neither may be written until Wait() returns (the op keeps
/// a reference to both, so the caller may drop its own).
PendingShardOp StartReduceScatter(Context& ctx, const at::Tensor& input, const at::Tensor& output);

/// output (world * n elements) becomes every rank's input (n elements), in rank order.
PendingShardOp StartAllGather(Context& ctx, const at::Tensor& input, const at::Tensor& output);

}  // namespace lakerun::dist
