// Sharded data parallel (ZeRO levels 1 to 3): DDP's results with 1/world of the optimizer state on each rank
// (level 1), of the gradients as well (level 2), and of the parameters as well (level 3, FSDP's FULL_SHARD).
//
//   auto net = std::make_shared<Net>();
//   auto adam = std::make_shared<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-3));
//   lakerun::dist::ShardedOptions options;
//   options.stage = lakerun::dist::ZeroStage::kGradients;   // level 2 (the default); kOptimizerState: level 1
//   lakerun::dist::ShardedDataParallel sdp(ctx, net, {adam}, options);
//   for (...) {
//     adam->zero_grad();
//     loss_fn(net->forward(x), y).backward();   // level 2: gradients reduce-scattered into this rank's chunks
//     sdp.ClipGradNorm(1.0);                     // optional: clips by the norm over every rank's chunks
//     sdp.Step();                                // steps this rank's chunks, then all-gathers the parameters
//   }
//   { auto scope = sdp.NoSync(); small_loss.backward(); }   // accumulate locally, no communication
//
// Layout (src/dist/shard_layout.h): parameters that require grad form DDP's buckets (reverse registration order,
// bucket caps as DdpOptions); each bucket is a flat buffer split into world equal chunks, the last padded, and rank r
// owns chunk r of every bucket. Each rank keeps a copy of its chunks' values, the optimizer state for those elements
// only and, at level 2, their averaged gradients only.
//
// Semantics:
// - Construction (collective) broadcasts rank 0's parameters and buffers, then takes over the optimizers: each must
//   be SGD, Adam, AdamW, RMSprop or Adagrad (element-wise updates: stepping a chunk of a parameter gives the same
//   elements as stepping it whole); a tensor of theirs that is not a parameter of the module is a ConfigError. State
//   an optimizer already holds (a checkpoint it loaded) is split: this rank keeps its elements and the optimizer's
//   own state is emptied. The user's optimizers stay the place of the hyper-parameters: learning-rate schedulers
//   keep changing their param groups, and Step() uses the values they hold at that moment.
// - Gradients. Level 1: as DistributedDataParallel (the same reducer): when backward returns every rank holds the
//   averaged gradients in .grad. Level 2: a hook copies each parameter's gradient into its bucket and releases the
//   parameter's .grad; a full bucket is reduce-scattered while backward goes on (buckets start in order, as DDP's),
//   and when backward returns each rank holds the average of its chunks only. Each synchronized backward replaces
//   the chunks' gradients: accumulate across micro-batches inside NoSync(), where .grad accumulates locally with no
//   communication and the next synchronized backward reduces the sum.
// - A parameter without a gradient in a synchronized backward, or with two, is a DistError naming it (there is no
//   find_unused_parameters yet).
// - Step() refreshes this rank's chunk copy from the parameters, steps it with each optimizer, then all-gathers every
//   bucket (two in flight at a time) back into the parameters: every rank ends with identical parameters. A step
//   before any synchronized backward leaves the parameters as they are (an optimizer skips a parameter without
//   .grad).
// - ClipGradNorm clips by the norm of all gradients, as torch::nn::utils::clip_grad_norm_ on the whole model: level 1
//   clips the whole gradients it holds, level 2 adds every rank's partial sum (one all-reduce of a double).
//   ClipGradValue clamps element-wise.
// - Buffers are broadcast from rank 0 after each synchronized backward (broadcast_buffers), as DDP does.
// - GatherOptimizerState (collective) rebuilds each optimizer's full state on one rank, in the optimizer itself: its
//   save() then writes what a replicated optimizer writes, so DDP and either level resume each other's checkpoints.
// - Transports: level 1's all-reduce is DDP's (shared memory on one host, else the process group). Reduce-scatter and
//   all-gather go through shared memory when every rank runs on this host (shared_memory, CPU float buckets; two
//   bucket-sized reduce-scatter slots per rank, used in turn), else through the process group: on NCCL its own, on
//   Gloo (which lacks reduce-scatter in libtorch 1.13) an all-to-all plus a local sum in rank order
//   (src/dist/shard_transport.h, src/dist/shard_collectives.h).
// - Like DDP, the module is used directly for forward; do not change its parameters after construction.
//
// Level 3 (ZeroStage::kParameters):
// - Units. The parameters are grouped into units (ShardedOptions::unit_min_params / unit_modules; wrap_policy.h);
//   each unit is one bucket, its parameters views of one flat buffer. Between uses a unit's buffer holds no bytes:
//   the rank keeps only its chunk, so a rank holds 1/world of the parameters, gradients and optimizer state, plus
//   the units in use.
// - Gather on use. Libtorch's modules have no forward hooks; instead, every tensor operation that reads a parameter
//   of a freed unit, in forward or in backward, first all-gathers the unit (src/dist/param_touch.h). So any forward
//   works unchanged, a parameter used by several modules (tied weights) included. Operations that read only shapes
//   (views, *_like) do not gather. A freed unit keeps its size with a null data pointer, so reads that bypass
//   operations (data_ptr() in user code, or saving the module) fail with libtorch's "data is not allocated" error:
//   save or load the module inside GatherFullParameters().
// - Free after use. A unit is freed once all its gradients have arrived in backward (its reduce-scatter then
//   starts), and when more than max_resident_units would hold bytes (the one the previous iteration read last, else
//   the least recently read). The previous iteration's order of reads also drives prefetch: reading one unit starts
//   gathering the next.
// - Every rank must run the same operations on the same units in the same order (gathers are collectives), as with
//   FSDP; ranks that built different units fail at construction with a DistError naming both. A gather that fails
//   cannot fail the operation that needed it (libtorch drops observers' exceptions): the unit reads NaN, and the
//   next backward, Step() or GatherFullParameters() raises the error.
// - Step() steps the chunks and frees every unit; the next forward gathers the new values.
// - param_dtype (mixed precision) and offload_optimizer_state: see ShardedOptions.
//
// Sharded checkpoints (src/dist/sharded_checkpoint.h; the format in src/dist/checkpoint_index.h and shard_file.h):
// - SaveShardedCheckpoint(dir) (collective): every rank writes, in parallel, dir/shard-<rank>-of-<world>.bin with
//   its pieces' values and each optimizer's state for them (tensors, step counts). Once every rank's file is in
//   place (one gather of their entries), rank 0 writes dir/index.json: the format version, world size and level,
//   each parameter (name, shape, dtype, numel), each optimizer (kind, the state fields of each parameter it steps),
//   and, per rank file, which elements of which parameter it holds at which bytes (each file ends with a CRC-32
//   per 64 KiB; the index keeps the CRC-32 of that table). Every file is written atomically (temporary, rename) and
//   the index last: a directory without one holds an incomplete checkpoint, which loading refuses. A save first
//   removes the directory's old index, so one that fails half-way over an older checkpoint leaves none rather than
//   a mix (each file's header names its save, and a loader refuses a file of another save): save into a new
//   directory to keep the last checkpoint until the next exists.
// - What is saved: levels 1 and 2, the parameters' current values (the chunks are refreshed from them first, so a
//   state dict loaded into the module counts); level 3, the chunks (what is written inside
//   GatherFullParameters(true) counts once the scope ends). Not saved: buffers (batch-norm statistics) and the
//   optimizers' hyper-parameters (param group options), which the program sets as it sets its LR schedule.
// - LoadShardedCheckpoint(dir) (collective) loads a checkpoint saved at any level on any world size: each rank reads
//   the index and checks it against its module and optimizers, then reads, only from the files that hold them, the
//   byte ranges of its own pieces' values and state (every block read is checked against its CRC). Nothing changes
//   until every rank has read its part: a failure on any rank throws on every rank, and leaves the model as it was.
//   Then levels 1 and 2 all-gather the chunks into the parameters, as Step() does (each rank reads 1/world of the
//   checkpoint, not all of it); level 3 frees every gathered unit (gathered again at once inside
//   GatherFullParameters), so the next use gathers the loaded values. Load between steps: gradients of a backward
//   before the load are not cleared.
// - Errors name the path and what is wrong: no index, or a rank file missing: IoError; a truncated, damaged or
//   foreign rank file, or an index whose files leave elements of a parameter uncovered (naming it and the gap):
//   CorruptDataError; a parameter of the model the checkpoint lacks, or the reverse, or one of another shape or
//   dtype, another number or kind of optimizers, an optimizer stepping other parameters or keeping other state
//   fields than it does now: InvalidArgument.
#pragma once

#include <lakerun/base/file_system.h>
#include <lakerun/dist/init.h>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lakerun::dist {

/// What is sharded besides nothing (DDP).
enum class ZeroStage {
  kOptimizerState = 1,  ///< ZeRO-1: optimizer state
  kGradients = 2,       ///< ZeRO-2: optimizer state and gradients
  kParameters = 3,      ///< ZeRO-3 (FSDP FULL_SHARD): optimizer state, gradients and parameters
};
/// "optimizer_state", "gradients", "parameters".
const char* ToString(ZeroStage stage);

struct ShardedOptions {
  ZeroStage stage = ZeroStage::kGradients;
  /// Bucket caps, as DdpOptions (bytes of parameters; the first bucket, the last parameters registered, is smaller).
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  int64_t first_bucket_cap_bytes = 1024 * 1024;
  /// After each synchronized backward, copy rank 0's buffers (e.g. batch-norm statistics) to every rank.
  bool broadcast_buffers = true;
  /// When every rank runs on this host: level 1 all-reduces gradients through shared memory (DdpOptions), and both
  /// levels reduce-scatter and all-gather through shared memory.
  bool shared_memory = true;

  /// Level 3: which parameters form a unit, gathered and freed together (src/dist/wrap_policy.h). With
  /// `unit_modules` empty, every submodule (children first) whose parameters not yet in a unit number at least
  /// `unit_min_params`; otherwise the named submodules (as named_modules() names them). The rest is the root unit.
  int64_t unit_min_params = 100'000;
  std::vector<std::string> unit_modules;
  /// Level 3: units holding gathered parameters at once (a prefetched one included); at least 1.
  int max_resident_units = 3;
  /// Level 3: gathering a unit starts gathering the one the previous iteration used next.
  bool prefetch = true;
  /// Level 3 mixed precision (FSDP's MixedPrecision(param_dtype), e.g. at::kBFloat16): units are gathered in this
  /// dtype and the module's parameters hold it while wrapped, so gathered units take half the bytes and forward and
  /// backward compute in it (run forward under autocast, as the Trainer's bf16-mixed does, or feed inputs of this
  /// dtype). Gradients are reduced in the parameters' own dtype into this rank's chunks, which stay in that dtype:
  /// the optimizers step the full-precision master copy, and GatherFullParameters() gives its values, in its dtype.
  /// Unset: the parameters' own dtype throughout.
  std::optional<at::ScalarType> param_dtype{};
  /// Levels 2 and 3: keep the optimizer state, and the copy of this rank's chunks it steps, in CPU memory (pinned
  /// when the parameters are on a GPU), as FSDP's CPUOffload / DeepSpeed's offload_optimizer: after backward the
  /// gradient chunks are copied to the CPU, the optimizers step there, and the stepped chunks are copied back to the
  /// parameters' device. With CPU parameters it changes nothing but adds the copies.
  bool offload_optimizer_state = false;
};

/// What one rank holds, in bytes (for inspection, tests and benchmarks).
struct ShardedMemory {
  /// Optimizer state tensors (every optimizer, this rank's elements).
  int64_t optimizer_state_bytes = 0;
  /// Gradients kept between backward and step: level 2, the averaged chunks; level 1, the parameters' .grad.
  int64_t gradient_bytes = 0;
  /// This rank's copy of its chunks' values.
  int64_t chunk_bytes = 0;
  /// offload_optimizer_state: CPU copies of this rank's chunks and of their gradients (the optimizer state, also on
  /// the CPU then, is optimizer_state_bytes).
  int64_t offloaded_chunk_bytes = 0;
  /// Buffers the reduce-scatter and all-gather keep between steps (this rank's shared-memory slots; level 1's
  /// all-reduce buffers are DDP's and not counted).
  int64_t transport_bytes = 0;
  /// Level 3: bytes of unit buffers holding gathered parameters now, and the most at once so far (levels 1 and 2:
  /// the parameters, always whole).
  int64_t resident_parameter_bytes = 0;
  int64_t peak_resident_parameter_bytes = 0;
};

/// What the last synchronized backward did.
struct ShardedStepStats {
  int buckets = 0;
  /// Buckets whose reduction started while some parameter still awaited its gradient.
  int launched_before_last_gradient = 0;
  /// Level 3, over the last step (forward, backward, step): unit all-gathers, and how many of them prefetch started
  /// before an operation needed the unit.
  int parameter_gathers = 0;
  int prefetched_gathers = 0;
};

/// What this rank's last SaveShardedCheckpoint or LoadShardedCheckpoint moved.
struct ShardedCheckpointIo {
  /// Written: its rank file (rank 0: and the index). Read: the index and the blocks of the rank files it needed.
  int64_t bytes = 0;
  int files = 0;
  /// The call's wall time on this rank, waits for the other ranks and the all-gather after a load included.
  double seconds = 0;
};

class ShardedDataParallel {
 public:
  /// Collective. Throws ConfigError for an optimizer that cannot be sharded (see above).
  ShardedDataParallel(Context& ctx, std::shared_ptr<torch::nn::Module> module,
                      std::vector<std::shared_ptr<torch::optim::Optimizer>> optimizers, ShardedOptions options = {});
  ~ShardedDataParallel();
  ShardedDataParallel(const ShardedDataParallel&) = delete;
  ShardedDataParallel& operator=(const ShardedDataParallel&) = delete;

  torch::nn::Module& module() { return *module_; }

  /// While alive, backward passes accumulate gradients locally without communication.
  class NoSyncScope {
   public:
    explicit NoSyncScope(ShardedDataParallel& sdp);
    ~NoSyncScope();
    NoSyncScope(const NoSyncScope&) = delete;
    NoSyncScope& operator=(const NoSyncScope&) = delete;

   private:
    class Saved;
    std::unique_ptr<Saved> saved_;
  };
  NoSyncScope NoSync() { return NoSyncScope(*this); }

  /// Completes a pending gradient reduction (runs by itself when a synchronized backward ends).
  void FinishGradientSync();
  /// Scales the gradients so that their total norm (of order norm_type; infinity for the max) is at most max_norm;
  /// returns the norm before clipping, as torch::nn::utils::clip_grad_norm_. Collective.
  double ClipGradNorm(double max_norm, double norm_type = 2.0);
  /// Clamps the gradients into [-clip_value, clip_value].
  void ClipGradValue(double clip_value);
  /// Steps every optimizer on this rank's chunks, then all-gathers the parameters. Collective.
  void Step();

  /// While the returned object lives, each optimizer given to the constructor holds its full state on rank `root`
  /// (nothing changes elsewhere); its destructor empties the optimizers again. Collective.
  class GatheredState {
   public:
    GatheredState(GatheredState&& other) noexcept;
    ~GatheredState();

   private:
    friend class ShardedDataParallel;
    explicit GatheredState(std::vector<std::shared_ptr<torch::optim::Optimizer>> filled);
    std::vector<std::shared_ptr<torch::optim::Optimizer>> filled_;
  };
  GatheredState GatherOptimizerState(int root = 0);

  /// While the returned object lives, every parameter of the module holds its full value on every rank (level 3
  /// gathers them all; levels 1 and 2 hold them anyway), for saving or loading a full state dict. With `writeback`,
  /// values written into the parameters meanwhile become the rank's shards when it ends. Collective.
  class FullParameters {
   public:
    FullParameters(FullParameters&& other) noexcept;
    ~FullParameters();

   private:
    friend class ShardedDataParallel;
    FullParameters(ShardedDataParallel* sdp, bool writeback);
    ShardedDataParallel* sdp_;
    bool writeback_;
  };
  FullParameters GatherFullParameters(bool writeback = false);

  /// Writes this rank's shard and (rank 0) the index into `dir` (see "Sharded checkpoints" above). Collective.
  void SaveShardedCheckpoint(const std::string& dir, FileSystem& fs = LocalFileSystem());
  /// Loads a sharded checkpoint of any world size and level into the parameters and optimizers. Collective.
  void LoadShardedCheckpoint(const std::string& dir, FileSystem& fs = LocalFileSystem());
  ShardedCheckpointIo LastCheckpointIo() const;

  ZeroStage stage() const;
  ShardedMemory Memory() const;
  ShardedStepStats LastStepStats() const;
  /// How gradients travel ("shared memory", "gloo", "nccl", "none" at world size 1).
  std::string GradientTransport() const;
  /// How the all-gather of the parameters travels (the same names).
  std::string ParameterTransport() const;

 private:
  class Impl;
  std::shared_ptr<torch::nn::Module> module_;
  std::unique_ptr<Impl> impl_;
};

/// Bytes of the state tensors of an SGD, Adam, AdamW, RMSprop or Adagrad optimizer (InvalidArgument for others):
/// the peer figure for ShardedMemory::optimizer_state_bytes.
int64_t OptimizerStateBytes(const torch::optim::Optimizer& optimizer);

}  // namespace lakerun::dist
