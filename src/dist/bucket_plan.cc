#include "dist/bucket_plan.h"

#include <lakerun/base/error.h>

#include <map>

namespace lakerun::dist {

std::string FlatBufferKey(const at::Tensor& t) { return StrCat(t.scalar_type(), "/", t.device()); }

std::vector<PlannedBucket> PlanBuckets(const std::vector<at::Tensor>& params, int64_t first_cap_bytes,
                                       int64_t cap_bytes) {
  LAKERUN_CHECK(cap_bytes > 0 && first_cap_bytes > 0, "bucket caps must be positive, got bucket_cap_bytes=",
                cap_bytes, " first_bucket_cap_bytes=", first_cap_bytes);
  std::vector<PlannedBucket> buckets;
  std::vector<int64_t> bytes;
  std::map<std::string, std::size_t> open;  // (dtype, device) -> its open bucket
  for (std::size_t k = params.size(); k-- > 0;) {
    const at::Tensor& p = params[k];
    const std::string key = FlatBufferKey(p);
    auto it = open.find(key);
    if (it == open.end()) {
      buckets.emplace_back();
      bytes.push_back(0);
      it = open.emplace(key, buckets.size() - 1).first;
    }
    const std::size_t b = it->second;
    PlannedBucket& bucket = buckets[b];
    bucket.params.push_back(k);
    bucket.offsets.push_back(bucket.numel);
    bucket.numel += p.numel();
    bytes[b] += p.numel() * static_cast<int64_t>(p.element_size());
    if (bytes[b] >= (b == 0 ? first_cap_bytes : cap_bytes)) open.erase(it);
  }
  return buckets;
}

}  // namespace lakerun::dist
