#include "dist/shard_layout.h"

#include <lakerun/base/error.h>

#include "dist/bucket_plan.h"

#include <algorithm>

namespace lakerun::dist {

namespace {

ShardedBucket Split(const std::vector<at::Tensor>& params, PlannedBucket planned, int world, int rank) {
  ShardedBucket b;
  b.params = std::move(planned.params);
  b.offsets = std::move(planned.offsets);
  b.numel = planned.numel;
  b.chunk_numel = (b.numel + world - 1) / world;
  b.dtype = params[b.params.front()].scalar_type();
  const int64_t lo = b.chunk_numel * rank, hi = lo + b.chunk_numel;
  for (std::size_t k = 0; k < b.params.size(); ++k) {
    const int64_t begin = std::max(lo, b.offsets[k]);
    const int64_t end = std::min(hi, b.offsets[k] + params[b.params[k]].numel());
    if (begin >= end) continue;
    b.pieces.push_back({b.params[k], begin - b.offsets[k], begin - lo, end - begin});
  }
  return b;
}

void CheckRank(int world, int rank) {
  LAKERUN_CHECK(world >= 1 && rank >= 0 && rank < world, "LayOutShards: rank ", rank, " is not in a world of ",
                world);
}

}  // namespace

std::vector<ShardedBucket> LayOutShards(const std::vector<at::Tensor>& params, int world, int rank,
                                        int64_t first_cap_bytes, int64_t cap_bytes) {
  CheckRank(world, rank);
  std::vector<ShardedBucket> buckets;
  for (PlannedBucket& planned : PlanBuckets(params, first_cap_bytes, cap_bytes)) {
    buckets.push_back(Split(params, std::move(planned), world, rank));
  }
  return buckets;
}

std::vector<ShardedBucket> LayOutUnitShards(const std::vector<at::Tensor>& params,
                                            const std::vector<std::vector<std::size_t>>& units, int world, int rank) {
  CheckRank(world, rank);
  std::vector<ShardedBucket> buckets;
  for (const std::vector<std::size_t>& unit : units) {
    LAKERUN_CHECK(!unit.empty(), "LayOutUnitShards: an empty unit");
    PlannedBucket planned;
    for (std::size_t i : unit) {
      planned.params.push_back(i);
      planned.offsets.push_back(planned.numel);
      planned.numel += params[i].numel();
    }
    buckets.push_back(Split(params, std::move(planned), world, rank));
  }
  return buckets;
}

}  // namespace lakerun::dist
