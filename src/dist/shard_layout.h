// How ShardedDataParallel splits parameters among ranks.
//
// Each gradient bucket (bucket_plan.h) is one flat buffer of `numel` elements, padded with zeros to
// world * shard_numel, shard_numel = ceil(numel / world). Rank r owns elements [r * shard_numel, (r + 1) * shard_numel)
// of every bucket: its chunk. A rank's shard is the union of its chunks, 1/world of the parameters plus at most
// world - 1 padding elements per bucket. Sharding bucket by bucket (as FSDP shards each flat parameter) makes every
// bucket's reduce-scatter and all-gather an equal split, which each transport takes directly.
//
//   std::vector<ShardedBucket> layout = LayOutShards(params, world, rank, 1 << 20, 25 << 20);
//   for (const ShardPiece& piece : layout[b].pieces) ...  // the parts of parameters this rank owns in bucket b
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lakerun::dist {

/// The part of one parameter that lies in this rank's chunk of a bucket.
struct ShardPiece {
  std::size_t param = 0;     ///< index into the laid-out parameter list
  int64_t param_offset = 0;  ///< first element within the flattened parameter
  int64_t chunk_offset = 0;  ///< first element within this rank's chunk of the bucket
  int64_t numel = 0;
};

struct ShardedBucket {
  std::vector<std::size_t> params;  ///< as PlannedBucket
  std::vector<int64_t> offsets;     ///< element offset of each parameter in the bucket's flat buffer
  int64_t numel = 0;                ///< without padding
  int64_t chunk_numel = 0;          ///< elements each rank owns: ceil(numel / world)
  at::ScalarType dtype = at::kFloat;  ///< of every parameter in the bucket
  std::vector<ShardPiece> pieces;   ///< this rank's, in flat-buffer order; none may be empty

  int64_t padded_numel(int world) const { return chunk_numel * world; }
};

/// PlanBuckets' buckets, each split among `world` ranks, with `rank`'s pieces. Throws InvalidArgument for a rank
/// outside [0, world) or a cap that is not positive.
std::vector<ShardedBucket> LayOutShards(const std::vector<at::Tensor>& params, int world, int rank,
                                        int64_t first_cap_bytes, int64_t cap_bytes);

/// One bucket per unit (ZeRO level 3, wrap_policy.h), its parameters in the given order, split as above.
std::vector<ShardedBucket> LayOutUnitShards(const std::vector<at::Tensor>& params,
                                            const std::vector<std::vector<std::size_t>>& units, int world, int rank);

}  // namespace lakerun::dist
