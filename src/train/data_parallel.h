// What TrainerOptions::strategy changes in the fit loop: the wrapper around the module (none in one process, DDP, or
// ShardedDataParallel), backward without communication on accumulating batches, clipping, the optimizer step, and
// the optimizer state a checkpoint holds.
#pragma once

#include <lakerun/dist/ddp.h>
#include <lakerun/dist/sharded.h>

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>

#include "lakerun/train/strategy.h"
#include "lakerun/train/trainer.h"
#include "train/precision.h"

namespace lakerun::train {

class DataParallel {
 public:
  /// Unwrapped: a single process, or before a fit.
  DataParallel() = default;
  /// Wraps `module` for `strategy` on `ctx` (world size > 1). Collective. Call after a checkpoint was loaded into the
  /// module and the optimizers: the wrappers broadcast rank 0's weights, and a sharded one takes each rank's part of
  /// the optimizers' state.
  DataParallel(Strategy strategy, const FsdpOptions& fsdp, dist::Context& ctx, Module& module,
               const OptimizerList& optimizers);

  /// loss.backward(); with no communication unless `sync` (gradients then accumulate on each rank).
  void Backward(const at::Tensor& loss, bool sync);
  /// Lightning's gradient clipping over the whole model (across shards when the gradients are sharded).
  void ClipGradNorm(Module& module, double max_norm);
  void ClipGradValue(Module& module, double clip_value);
  /// Every optimizer's step (through `precision`'s scaler when unwrapped or DDP; a sharded strategy steps its shards).
  void Step(PrecisionPlugin& precision, const OptimizerList& optimizers);
  /// Collective. While the result lives, the optimizers hold their full state on rank 0 (sharded strategies gather
  /// it; otherwise they hold it anyway).
  std::optional<dist::ShardedDataParallel::GatheredState> GatherOptimizerState();
  /// Collective. While the result lives, every parameter holds its full value (kFsdp gathers them; the others hold
  /// them anyway); with `writeback`, values written meanwhile become the shards.
  std::optional<dist::ShardedDataParallel::FullParameters> GatherFullParameters(bool writeback = false);
  /// Collective, at the end of a fit: under kFsdp, gives every parameter its full value in its own storage and drops
  /// the wrapper, so the module is a plain module again (for evaluation, saving, or another fit).
  void Unshard();

 private:
  std::unique_ptr<dist::DistributedDataParallel> ddp_;
  std::unique_ptr<dist::ShardedDataParallel> sharded_;
};

}  // namespace lakerun::train
