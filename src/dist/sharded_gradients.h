// ZeRO level 2's gradient path: during backward each gradient is copied into its bucket and the parameter's .grad
// released; each full bucket is reduce-scattered (shard_transport.h) into this rank's gradient chunk while backward
// goes on, and its buffer dropped; when backward ends, every chunk holds this rank's part of the average over ranks.
#pragma once

#include <lakerun/dist/init.h>
#include <lakerun/dist/sharded.h>

#include "dist/grad_hooks.h"
#include "dist/shard_layout.h"
#include "dist/shard_transport.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lakerun::dist {

class ShardedGradients {
 public:
  /// `chunks[b]`: this rank's gradient chunk of bucket b (buckets[b].chunk_numel elements), written by each
  /// synchronized backward. Registers the hooks. `on_bucket_complete(b)` runs once bucket b holds all its gradients
  /// in a synchronized backward (under this object's lock; level 3 frees the unit's parameters there).
  ShardedGradients(Context& ctx, torch::nn::Module& module, std::vector<at::Tensor> params,
                   std::vector<std::string> names, const std::vector<ShardedBucket>& buckets,
                   std::vector<at::Tensor> chunks, ShardTransport& transport, bool broadcast_buffers,
                   std::function<void(std::size_t bucket)> on_bucket_complete = nullptr);
  ~ShardedGradients();

  /// Waits for every bucket and divides by the world size; runs by itself at the end of a synchronized backward.
  void Finalize();
  /// Whether some synchronized backward has written the chunks.
  bool has_gradients() const { return has_gradients_; }
  /// How many synchronized backwards have written the chunks.
  uint64_t generation() const { return generation_; }
  ShardedStepStats Stats() const;

  std::atomic<bool> sync_enabled{true};

 private:
  struct Param {
    at::Tensor variable;
    std::string name;
    std::size_t bucket = 0;
    int64_t offset = 0;
  };
  struct Bucket {
    std::vector<std::size_t> params;
    int64_t padded_numel = 0;
    at::ScalarType dtype = at::kFloat;  // reduced in the chunks' dtype (level 3 mixed precision: not the gradients')
    at::Tensor flat;  // this backward's gradients, allocated at the first one, dropped once launched
    std::size_t pending = 0;
  };

  void OnGradReady(std::size_t index);
  void LaunchReadyBuckets();
  void Reset();

  Context& ctx_;
  torch::nn::Module& module_;
  ShardTransport& transport_;
  bool broadcast_buffers_;
  std::function<void(std::size_t)> on_bucket_complete_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  std::vector<at::Tensor> chunks_;
  std::vector<std::string> names_;  // of params_
  BackwardArrivals arrivals_;
  std::unique_ptr<GradAccumulatorHooks> hooks_;
  std::size_t next_launch_ = 0;
  bool has_gradients_ = false;
  uint64_t generation_ = 0;
  ShardedStepStats step_stats_, last_stats_;
  mutable std::mutex mu_;  // hooks may run on autograd device threads
};

}  // namespace lakerun::dist
