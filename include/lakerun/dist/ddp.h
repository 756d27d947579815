// Data-parallel training: every rank holds a replica; gradients are averaged across ranks during backward.
//
//   auto net = std::make_shared<Net>();
//   lakerun::dist::DistributedDataParallel ddp(ctx, net);    // broadcasts rank 0's parameters and buffers
//   for (...) {
//     optimizer.zero_grad();
//     loss_fn(net->forward(x), y).backward();                  // gradients are averaged when backward returns
//     optimizer.step();
//   }
//   { auto scope = ddp.NoSync(); small_loss.backward(); }      // accumulate locally, no communication
//
// Semantics (as torch.nn.parallel.DistributedDataParallel):
// - Parameters that require grad are grouped into buckets in reverse registration order (the order backward
//   usually produces gradients), one dtype and device per bucket, at most bucket_cap_bytes each (the first bucket
//   at most first_bucket_cap_bytes so communication starts early).
// - A hook on each parameter's gradient accumulator copies the gradient into its bucket; when a bucket is full,
//   and every earlier bucket has been launched, its asynchronous all-reduce starts while backward goes on.
// - When backward ends (an autograd final callback), every bucket is waited for, divided by world_size and copied
//   into the parameters' .grad. FinishGradientSync() does the same explicitly and is a no-op when nothing is pending.
// - Inside a NoSync() scope hooks do nothing: .grad accumulates locally and the next backward outside the scope
//   averages the accumulated gradients.
// - When every rank runs on this host, CPU float/double buckets are all-reduced through one shared-memory segment
//   (each rank sums a chunk of every rank's bucket; no loopback TCP, no communication threads) unless
//   DdpOptions::shared_memory is off; anything else goes through the process group (Gloo or NCCL).
// - A parameter without a gradient in a synchronized backward is an error (DistError naming the parameters) unless
//   find_unused_parameters is set: then missing gradients count as zero on that rank, and a parameter no rank used
//   keeps its .grad untouched on every rank.
// - At world size 1 there is no communication and no copy; only the unused-parameter check remains.
// The module is used directly for forward (this wrapper never calls forward). Construct one wrapper per module;
// do not change the module's parameters afterwards.
#pragma once

#include <lakerun/dist/init.h>

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lakerun::dist {

struct DdpOptions {
  /// Bucket size cap (bytes of gradient).
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  /// Cap of the first bucket (the last parameters registered), so its all-reduce starts early.
  int64_t first_bucket_cap_bytes = 1024 * 1024;
  /// Treat a parameter that got no gradient in a backward as having a zero gradient (instead of an error).
  bool find_unused_parameters = false;
  /// After each synchronized backward, copy rank 0's buffers (e.g. batch-norm statistics) to every rank.
  bool broadcast_buffers = true;
  /// All-reduce CPU float/double buckets through shared memory when every rank runs on this host and the process
  /// group is Gloo (a job on NCCL keeps NCCL for everything). The job falls back to the process group when it
  /// cannot (ranks on several hosts, no room in /dev/shm); GradientTransport() says which one is in use.
  bool shared_memory = true;
};

/// What the last synchronized backward did (for inspection and tests).
struct DdpStepStats {
  int buckets = 0;
  /// Buckets whose all-reduce started while some parameter still awaited its gradient: communication that
  /// overlapped the rest of backward.
  int launched_before_last_gradient = 0;
  /// Parameters that got no gradient (only possible with find_unused_parameters).
  int unused_parameters = 0;
};

class DistributedDataParallel {
 public:
  /// Broadcasts rank 0's parameters and buffers to every rank and registers the gradient hooks.
  DistributedDataParallel(Context& ctx, std::shared_ptr<torch::nn::Module> module, DdpOptions options = {});
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  torch::nn::Module& module() { return *module_; }
  const std::shared_ptr<torch::nn::Module>& module_ptr() const { return module_; }

  /// While alive, backward passes accumulate gradients locally without communication.
  class NoSyncScope {
   public:
    explicit NoSyncScope(DistributedDataParallel& ddp);
    ~NoSyncScope();
    NoSyncScope(const NoSyncScope&) = delete;
    NoSyncScope& operator=(const NoSyncScope&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  NoSyncScope NoSync() { return NoSyncScope(*this); }

  /// Waits for every pending bucket and writes averaged gradients into .grad. Runs automatically at the end of each
  /// synchronized backward; call it yourself only after a backward whose graph reached none of the parameters.
  void FinishGradientSync();

  /// Parameter names per bucket, in launch order (for inspection and tests).
  std::vector<std::vector<std::string>> BucketParameterNames() const;
  /// Statistics of the last synchronized backward.
  DdpStepStats LastStepStats() const;
  /// How gradients travel: "shared memory", the process group's backend ("gloo", "nccl"), "shared memory + gloo"
  /// when only some buckets qualify, or "none" at world size 1.
  std::string GradientTransport() const;

 private:
  class Reducer;
  std::shared_ptr<torch::nn::Module> module_;
  std::unique_ptr<Reducer> reducer_;
  friend class NoSyncScope;
};

}  // namespace lakerun::dist
