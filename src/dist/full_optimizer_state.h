// A sharded optimizer's full state, rebuilt in the user's optimizer on one rank: the layout a replicated optimizer
// keeps, so torch::optim's own save() writes exactly what it writes under DDP.
#pragma once

#include <lakerun/dist/init.h>

#include "dist/shard_layout.h"
#include "dist/sharded_optimizer.h"

#include <ATen/core/Tensor.h>

#include <vector>

namespace lakerun::dist {

/// Collective. On `root`, fills opt.user()'s state with every parameter's state: each tensor field is all-gathered
/// bucket by bucket (one bucket-sized buffer per field in flight) and cut back into parameters; the step count is
/// the pieces' (they step together). Other ranks only take part. Nothing is filled before the first step.
void GatherFullOptimizerState(Context& ctx, const ShardedOptimizer& opt, const std::vector<at::Tensor>& params,
                              const std::vector<ShardedBucket>& buckets, const std::vector<OwnedPiece>& pieces,
                              int root);

}  // namespace lakerun::dist
