// Gradient buckets as PyTorch's DDP forms them, shared by DistributedDataParallel and ShardedDataParallel.
//
//   std::vector<PlannedBucket> buckets = PlanBuckets(params, 1 << 20, 25 << 20);
//   buckets[0].params      // indices into `params`, last registered first
//   buckets[0].offsets[k]  // where params[buckets[0].params[k]] starts in the bucket's flat buffer (elements)
//
// Rules: parameters are taken in reverse registration order (the order backward usually produces gradients); each
// (dtype, device) has one open bucket at a time; a bucket closes once its bytes reach the cap, which is
// first_cap_bytes for the bucket created first and cap_bytes for every later one.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::dist {

struct PlannedBucket {
  std::vector<std::size_t> params;  ///< indices into the planned list, in the order they fill the bucket
  std::vector<int64_t> offsets;     ///< element offset of each of them in the bucket's flat buffer
  int64_t numel = 0;                ///< elements of all of them together
};

/// Throws InvalidArgument for a cap that is not positive.
std::vector<PlannedBucket> PlanBuckets(const std::vector<at::Tensor>& params, int64_t first_cap_bytes,
                                       int64_t cap_bytes);

/// "float/cpu": tensors that may share one flat buffer have the same key.
std::string FlatBufferKey(const at::Tensor& t);

}  // namespace lakerun::dist
