// ZeRO level 3's parameters: each unit (wrap_policy.h) lives in one flat buffer whose bytes exist only while the unit
// is in use; otherwise a rank holds just its chunk (the master copy the optimizers step).
//
// - Construction turns each unit's parameters into views of the unit's flat buffer (the module keeps the same
//   parameter objects, so optimizers and autograd see no change) and frees every buffer. A freed buffer keeps its
//   storage object and size with a null data pointer: views of it can be made, and a read that bypasses operations
//   fails with libtorch's "data is not allocated" error instead of reading freed memory.
// - When an operation, in forward or in backward, reads a parameter of a freed unit, a ParameterTouchWatch
//   (param_touch.h) calls back and the unit is all-gathered from every rank's chunk before the operation runs. The
//   buffer keeps its storage object while freed, so tensors autograd saved in forward read the gathered bytes again
//   in backward.
// - Every read is recorded: the sequence of units read this iteration (forward, backward, step) predicts the next
//   iteration's. Reading the i-th unit of the sequence starts gathering the next unit of the previous iteration's
//   sequence that holds no bytes, so its transfer overlaps the compute in between (FSDP's prefetch); one prefetch is
//   in flight at a time.
// - At most `max_resident` units hold bytes at once, prefetched ones included. Making room frees the unit whose next
//   read, by the previous iteration's sequence, comes last (none: first); without a prediction, the unit read
//   longest ago. A prefetch that would free a unit needed sooner than its own is not started. A unit is freed as soon
//   as its gradients are reduced (Release), and every unit when the chunks change (EndIteration, before a step).
// Gathers are collectives: every rank must run the same operations on the same units in the same order, as with
// FSDP; the sequence and so every decision above are then the same on every rank. Thread-safe: the callback and
// Release may run on autograd threads.
//
// A gather that fails (a peer gone, a timeout) cannot fail the operation that needed it (param_touch.h). The unit then
// holds NaN, the error is printed at once, and it is raised by the next Release (so backward throws), EndIteration,
// GatherAll or ThrowIfFailed; every later read gets NaN without communicating.
#pragma once

#include <lakerun/dist/init.h>

#include "dist/param_touch.h"
#include "dist/shard_collectives.h"
#include "dist/shard_layout.h"
#include "dist/shard_transport.h"

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace torch::autograd {
struct Node;
}

namespace lakerun::dist {

class ShardedParameters {
 public:
  /// `chunks[b]`: this rank's chunk of bucket (unit) b, already holding the parameters' values. Collective-free.
  /// With `param_dtype` (mixed precision), units are gathered in it and the parameters hold it while wrapped; the
  /// chunks keep their dtype (the master copy).
  ShardedParameters(Context& ctx, std::vector<at::Tensor> params, const std::vector<ShardedBucket>& buckets,
                    std::vector<at::Tensor> chunks, ShardTransport& transport, int max_resident, bool prefetch,
                    std::optional<at::ScalarType> param_dtype = std::nullopt);
  ~ShardedParameters();
  ShardedParameters(const ShardedParameters&) = delete;
  ShardedParameters& operator=(const ShardedParameters&) = delete;

  /// Frees unit b (its gradients are reduced; a later read gathers it again).
  void Release(std::size_t b);
  /// Rethrows the first failed gather, if any.
  void ThrowIfFailed() const;
  /// Frees every unit (the chunks are about to change) and makes this iteration's sequence the prediction.
  void EndIteration();
  /// Collective: gathers every unit, ignoring max_resident, until ReleaseAll (full parameters for a checkpoint).
  /// With mixed precision the parameters meanwhile hold the master values in the chunks' dtype, in buffers of their
  /// own; ReleaseAll returns them to their units.
  void GatherAll();
  void ReleaseAll();
  /// Whether GatherAll is in effect (no ReleaseAll or EndIteration since).
  bool gathered_all() const;

  /// Bytes of unit buffers held now, and the most held at once since construction.
  int64_t resident_bytes() const;
  int64_t peak_resident_bytes() const;
  struct IterationStats {
    int gathers = 0;     ///< all-gathers started (by a read or by prefetch)
    int prefetched = 0;  ///< reads that found their unit gathered by prefetch
  };
  /// The iteration that the last EndIteration ended.
  IterationStats LastIteration() const;

 private:
  static constexpr std::size_t kNever = static_cast<std::size_t>(-1);
  struct Unit {
    at::Tensor flat;                 // padded_numel elements; its storage has data only while resident
    c10::StorageImpl* storage = nullptr;
    int64_t bytes = 0;
    at::Tensor incoming;             // the buffer a gather in flight fills
    at::Tensor outgoing;             // mixed precision: this rank's chunk in the unit's dtype, while it travels
    at::Tensor master;               // mixed precision, inside GatherAll: the unit's values in the chunks' dtype
    std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // the parameters' own, inside GatherAll
    std::vector<std::size_t> params;  // indices into params_, at `offsets` in the unit
    std::vector<int64_t> offsets;
    PendingShardOp op;
    bool resident = false;           // has bytes, or is being gathered
    bool prefetched = false;         // gathered by prefetch and not read since
    uint64_t last_use = 0;           // clock_ at its last read or gather
  };

  void OnTouch(const std::vector<std::size_t>& units);
  void ReadUnits(const std::vector<std::size_t>& units);
  void Prefetch(const std::vector<std::size_t>& keep);
  bool MakeRoom(const std::vector<std::size_t>& keep, std::size_t needed_at);
  void StartGather(std::size_t b);
  void Install(std::size_t b);
  void Free(std::size_t b);
  void FillFailed(const std::vector<std::size_t>& units);
  void GatherMasters();
  void ReturnMasters();
  void SeatParameters(std::size_t b, const at::Tensor& buffer);
  std::size_t NextUse(std::size_t b) const;

  Context& ctx_;
  ShardTransport& transport_;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> chunks_;
  std::vector<Unit> units_;
  std::size_t max_resident_;
  bool prefetch_;
  bool pinned_ = false;  // GatherAll: no eviction
  std::vector<std::size_t> sequence_, previous_;  // units read, consecutive repeats merged
  std::vector<std::vector<std::size_t>> previous_positions_;  // per unit, its positions in previous_
  uint64_t clock_ = 0;
  int64_t resident_bytes_ = 0, peak_bytes_ = 0;
  IterationStats current_, last_;
  std::exception_ptr failure_;
  mutable std::recursive_mutex mu_;
  std::unique_ptr<ParameterTouchWatch> watch_;
};

}  // namespace lakerun::dist
