// ShardedDataParallel: the layout, this rank's chunks and pieces, and the step (refresh, optimizers, all-gather).
#include <lakerun/dist/sharded.h>

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/ddp.h>

#include "dist/full_optimizer_state.h"
#include "dist/grad_hooks.h"
#include "dist/shard_clip.h"
#include "dist/shard_collectives.h"
#include "dist/shard_layout.h"
#include "dist/shard_transport.h"
#include "dist/sharded_checkpoint.h"
#include "dist/sharded_gradients.h"
#include "dist/sharded_optimizer.h"
#include "dist/sharded_parameters.h"
#include "dist/wrap_policy.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>

#include <chrono>
#include <deque>
#include <unordered_set>

namespace lakerun::dist {

const char* ToString(ZeroStage stage) {
  switch (stage) {
    case ZeroStage::kOptimizerState: return "optimizer_state";
    case ZeroStage::kGradients: return "gradients";
    case ZeroStage::kParameters: return "parameters";
  }
  return "?";
}

class ShardedDataParallel::Impl {
 public:
  Impl(Context& ctx, std::shared_ptr<torch::nn::Module> module,
       std::vector<std::shared_ptr<torch::optim::Optimizer>> optimizers, ShardedOptions options);

  void Step();
  std::vector<at::Tensor> BoundGradients();
  void RefreshChunks();
  void PushOffloadedValues();
  void PullOffloadedGradients();
  ShardedMemory Memory() const;
  ShardedState CheckpointState() { return {ctx, options.stage, params, names, pieces, optimizers}; }
  void ApplyCheckpoint(LoadedShards loaded);

  Context& ctx;
  ShardedOptions options;
  std::vector<std::shared_ptr<torch::optim::Optimizer>> user_optimizers;
  std::vector<at::Tensor> params;
  std::vector<std::string> names;
  std::vector<ShardedBucket> buckets;
  std::vector<at::Tensor> chunk_values;  // per bucket: this rank's chunk of the parameters
  std::vector<at::Tensor> chunk_grads;   // level 2, per bucket: this rank's chunk of the averaged gradients
  std::vector<at::Tensor> host_values, host_grads;  // offload_optimizer_state: CPU copies the optimizers step
  uint64_t pulled_generation = 0;        // the gradients' generation host_grads holds
  std::vector<OwnedPiece> pieces;
  std::vector<ShardedOptimizer> optimizers;
  std::unique_ptr<DistributedDataParallel> ddp;  // level 1's gradients
  std::unique_ptr<ShardTransport> transport;     // reduce-scatter (level 2) and all-gather of the buckets
  std::unique_ptr<ShardedParameters> parameters;  // level 3's
  std::unique_ptr<ShardedGradients> gradients;   // levels 2 and 3
  ShardedCheckpointIo last_checkpoint_io;

 private:
  std::vector<ShardedBucket> LayOut(torch::nn::Module& module);
  void BindGradients();
  void GatherParameters();
};

ShardedDataParallel::Impl::Impl(Context& context, std::shared_ptr<torch::nn::Module> module,
                                std::vector<std::shared_ptr<torch::optim::Optimizer>> user,
                                ShardedOptions opts)
    : ctx(context), options(opts), user_optimizers(std::move(user)) {
  LAKERUN_CHECK_AS(ConfigError,
                   !options.param_dtype.has_value() ||
                       (options.stage == ZeroStage::kParameters && at::isFloatingType(*options.param_dtype)),
                   "ShardedDataParallel: param_dtype (mixed precision) needs level 3 (ZeroStage::kParameters) and a "
                   "floating dtype, got ", options.param_dtype.has_value() ? c10::toString(*options.param_dtype) : "",
                   " at level ", static_cast<int>(options.stage));
  LAKERUN_CHECK_AS(ConfigError, !options.offload_optimizer_state || options.stage != ZeroStage::kOptimizerState,
                   "ShardedDataParallel: offload_optimizer_state needs level 2 or 3 (sharded gradients to copy)");
  for (const auto& item : module->named_parameters(/*recurse=*/true)) {
    if (!item.value().requires_grad()) continue;
    LAKERUN_CHECK(item.value().layout() == at::kStrided, "ShardedDataParallel: parameter '", item.key(),
                  "' is not a dense tensor");
    params.push_back(item.value());
    names.push_back(item.key());
  }
  if (options.stage == ZeroStage::kOptimizerState) {
    DdpOptions ddp_options;
    ddp_options.bucket_cap_bytes = options.bucket_cap_bytes;
    ddp_options.first_bucket_cap_bytes = options.first_bucket_cap_bytes;
    ddp_options.broadcast_buffers = options.broadcast_buffers;
    ddp_options.shared_memory = options.shared_memory;
    ddp = std::make_unique<DistributedDataParallel>(ctx, module, ddp_options);  // broadcasts rank 0's state
  } else {
    BroadcastModuleState(ctx, *module);
  }
  buckets = LayOut(*module);
  at::NoGradGuard no_grad;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const at::TensorOptions like = params[buckets[b].params.front()].options().requires_grad(false);
    chunk_values.push_back(at::zeros({buckets[b].chunk_numel}, like));
    if (options.stage != ZeroStage::kOptimizerState) {
      chunk_grads.push_back(at::zeros({buckets[b].chunk_numel}, like));
    }
    if (options.offload_optimizer_state) {
      const at::TensorOptions host = like.device(at::kCPU).pinned_memory(like.device().is_cuda());
      host_values.push_back(at::zeros({buckets[b].chunk_numel}, host));
      host_grads.push_back(at::zeros({buckets[b].chunk_numel}, host));
    }
    const at::Tensor& stepped = options.offload_optimizer_state ? host_values[b] : chunk_values[b];
    for (const ShardPiece& where : buckets[b].pieces) {
      pieces.push_back({where, b, stepped.narrow(0, where.chunk_offset, where.numel)});
    }
  }
  RefreshChunks();
  PushOffloadedValues();  // level 3 gathers from the chunks
  std::unordered_set<const c10::TensorImpl*> stepped;
  for (std::size_t o = 0; o < user_optimizers.size(); ++o) {
    LAKERUN_CHECK(user_optimizers[o] != nullptr, "ShardedDataParallel: optimizer ", o, " is null");
    optimizers.emplace_back(*user_optimizers[o], o, params, pieces);
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!optimizers.back().GroupOf(i).has_value()) continue;
      LAKERUN_CHECK_AS(ConfigError, stepped.insert(params[i].unsafeGetTensorImpl()).second,
                       "ShardedDataParallel: parameter '", names[i], "' is stepped by two optimizers");
    }
    optimizers.back().TakeUserState(params, pieces);
  }
  const bool shard_gradients = options.stage != ZeroStage::kOptimizerState;
  transport = std::make_unique<ShardTransport>(ctx, buckets, shard_gradients, options.shared_memory);
  std::function<void(std::size_t)> on_unit_reduced;
  if (options.stage == ZeroStage::kParameters) {
    parameters = std::make_unique<ShardedParameters>(ctx, params, buckets, chunk_values, *transport,
                                                     options.max_resident_units, options.prefetch,
                                                     options.param_dtype);
    on_unit_reduced = [p = parameters.get()](std::size_t b) { p->Release(b); };
  }
  if (shard_gradients) {
    gradients = std::make_unique<ShardedGradients>(ctx, *module, params, names, buckets, chunk_grads, *transport,
                                                   options.broadcast_buffers, std::move(on_unit_reduced));
  }
}

// Levels 1 and 2: DDP's buckets. Level 3: one bucket per unit, the same units on every rank.
std::vector<ShardedBucket> ShardedDataParallel::Impl::LayOut(torch::nn::Module& module) {
  if (options.stage != ZeroStage::kParameters) {
    return LayOutShards(params, ctx.world_size(), ctx.rank(), options.first_bucket_cap_bytes,
                        options.bucket_cap_bytes);
  }
  const std::vector<ShardUnit> units =
      PlanShardUnits(module, params, names, options.unit_min_params, options.unit_modules);
  std::vector<std::vector<std::size_t>> groups;
  std::string described;
  for (const ShardUnit& unit : units) {
    groups.push_back(unit.params);
    int64_t numel = 0;
    for (std::size_t i : unit.params) numel += params[i].numel();
    described += "'" + unit.name + "' (" + std::to_string(numel) + " elements) ";
  }
  if (ctx.world_size() > 1) {
    const std::vector<std::string> all = AllGatherBytes(ctx, described);
    for (std::size_t r = 0; r < all.size(); ++r) {
      LAKERUN_CHECK_AS(DistError, all[r] == described, "ShardedDataParallel: rank ", ctx.rank(),
                       " wraps its module in units ", described, "but rank ", r, " in ", all[r],
                       "; every rank must build the same model with the same unit options");
    }
  }
  return LayOutUnitShards(params, groups, ctx.world_size(), ctx.rank());
}

// This rank's chunks take the parameters' current values (a load into the module since the last step included).
void ShardedDataParallel::Impl::RefreshChunks() {
  for (OwnedPiece& piece : pieces) {
    piece.value.copy_(params[piece.where.param].reshape({-1}).narrow(0, piece.where.param_offset, piece.where.numel));
  }
}

// Each piece's .grad: level 1, a view of its parameter's averaged .grad; level 2, a view of the bucket's gradient
// chunk. Undefined before any gradient exists, so optimizers skip it as they skip a parameter without .grad.
// offload_optimizer_state: the stepped chunks (on the CPU) to the chunks the all-gathers read (on the parameters'
// device).
void ShardedDataParallel::Impl::PushOffloadedValues() {
  for (std::size_t b = 0; b < host_values.size(); ++b) chunk_values[b].copy_(host_values[b]);
}

// offload_optimizer_state: the gradient chunks of a synchronized backward not copied yet, to the CPU (once: clipping
// scales the CPU copies, which the step then reads).
void ShardedDataParallel::Impl::PullOffloadedGradients() {
  if (host_grads.empty() || gradients->generation() == pulled_generation) return;
  for (std::size_t b = 0; b < host_grads.size(); ++b) host_grads[b].copy_(chunk_grads[b]);
  pulled_generation = gradients->generation();
}

void ShardedDataParallel::Impl::BindGradients() {
  PullOffloadedGradients();
  const std::vector<at::Tensor>& grads_of = host_grads.empty() ? chunk_grads : host_grads;
  for (OwnedPiece& piece : pieces) {
    at::Tensor grad;
    if (gradients) {
      if (gradients->has_gradients()) {
        grad = grads_of[piece.bucket].narrow(0, piece.where.chunk_offset, piece.where.numel);
      }
    } else if (const at::Tensor& full = params[piece.where.param].grad(); full.defined()) {
      grad = full.reshape({-1}).narrow(0, piece.where.param_offset, piece.where.numel);
    }
    piece.value.mutable_grad() = grad;
  }
}

std::vector<at::Tensor> ShardedDataParallel::Impl::BoundGradients() {
  BindGradients();
  std::vector<at::Tensor> grads;
  for (const OwnedPiece& piece : pieces) grads.push_back(piece.value.grad());
  return grads;
}

// Every bucket's chunks back into the parameters, at most two buckets in flight.
void ShardedDataParallel::Impl::GatherParameters() {
  struct InFlight {
    std::size_t bucket;
    at::Tensor whole;
    PendingShardOp op;
  };
  std::deque<InFlight> in_flight;
  auto finish_oldest = [&] {
    InFlight& f = in_flight.front();
    f.op.Wait();
    const ShardedBucket& b = buckets[f.bucket];
    for (std::size_t k = 0; k < b.params.size(); ++k) {
      at::Tensor& p = params[b.params[k]];
      p.copy_(f.whole.narrow(0, b.offsets[k], p.numel()).view_as(p));
    }
    in_flight.pop_front();
  };
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    at::Tensor whole = at::empty({buckets[b].padded_numel(ctx.world_size())}, chunk_values[b].options());
    PendingShardOp op = transport->StartAllGather(b, chunk_values[b], whole);
    in_flight.push_back({b, std::move(whole), std::move(op)});
    if (in_flight.size() > 1) finish_oldest();
  }
  while (!in_flight.empty()) finish_oldest();
}

void ShardedDataParallel::Impl::Step() {
  if (parameters) parameters->ThrowIfFailed();
  if (ddp) {
    ddp->FinishGradientSync();
  } else {
    gradients->Finalize();
  }
  at::NoGradGuard no_grad;
  if (parameters) {
    parameters->EndIteration();  // the chunks are the parameters' only copy, and are about to change
  } else {
    RefreshChunks();
  }
  BindGradients();
  for (ShardedOptimizer& opt : optimizers) opt.Step();
  PushOffloadedValues();
  if (!parameters) GatherParameters();
}

// The loaded chunks and state in place, then the parameters from the chunks: levels 1 and 2 all-gather them as a
// step does; level 3 frees its units (no gather may read the chunks while they change) and, inside
// GatherFullParameters, gathers them again.
void ShardedDataParallel::Impl::ApplyCheckpoint(LoadedShards loaded) {
  at::NoGradGuard no_grad;
  const bool regather = parameters && parameters->gathered_all();
  if (parameters) parameters->ReleaseAll();
  ShardedState state = CheckpointState();
  ApplyShards(std::move(loaded), state);
  PushOffloadedValues();
  if (!parameters) {
    GatherParameters();
  } else if (regather) {
    parameters->GatherAll();
  }
}

ShardedMemory ShardedDataParallel::Impl::Memory() const {
  ShardedMemory m;
  for (const ShardedOptimizer& opt : optimizers) m.optimizer_state_bytes += opt.StateBytes();
  for (const at::Tensor& t : chunk_values) m.chunk_bytes += static_cast<int64_t>(t.nbytes());
  m.transport_bytes = transport->buffer_bytes();
  for (const at::Tensor& t : host_values) m.offloaded_chunk_bytes += static_cast<int64_t>(t.nbytes());
  for (const at::Tensor& t : host_grads) m.offloaded_chunk_bytes += static_cast<int64_t>(t.nbytes());
  if (parameters) {
    m.resident_parameter_bytes = parameters->resident_bytes();
    m.peak_resident_parameter_bytes = parameters->peak_resident_bytes();
  } else {
    for (const at::Tensor& p : params) m.resident_parameter_bytes += static_cast<int64_t>(p.nbytes());
    m.peak_resident_parameter_bytes = m.resident_parameter_bytes;
  }
  if (gradients) {
    for (const at::Tensor& t : chunk_grads) m.gradient_bytes += static_cast<int64_t>(t.nbytes());
  } else {
    for (const at::Tensor& p : params) {
      if (p.grad().defined()) m.gradient_bytes += static_cast<int64_t>(p.grad().nbytes());
    }
  }
  return m;
}

ShardedDataParallel::ShardedDataParallel(Context& ctx, std::shared_ptr<torch::nn::Module> module,
                                         std::vector<std::shared_ptr<torch::optim::Optimizer>> optimizers,
                                         ShardedOptions options)
    : module_(std::move(module)) {
  LAKERUN_CHECK(module_ != nullptr, "ShardedDataParallel: null module on rank ", ctx.rank());
  impl_ = std::make_unique<Impl>(ctx, module_, std::move(optimizers), options);
}

ShardedDataParallel::~ShardedDataParallel() = default;

class ShardedDataParallel::NoSyncScope::Saved {
 public:
  explicit Saved(ShardedDataParallel& sdp) : gradients_(sdp.impl_->gradients.get()) {
    if (sdp.impl_->ddp) ddp_scope_.emplace(*sdp.impl_->ddp);
    if (gradients_ != nullptr) previous_ = gradients_->sync_enabled.exchange(false);
  }
  ~Saved() {
    if (gradients_ != nullptr) gradients_->sync_enabled = previous_;
  }

 private:
  std::optional<DistributedDataParallel::NoSyncScope> ddp_scope_;
  ShardedGradients* gradients_;
  bool previous_ = true;
};

ShardedDataParallel::NoSyncScope::NoSyncScope(ShardedDataParallel& sdp) : saved_(std::make_unique<Saved>(sdp)) {}
ShardedDataParallel::NoSyncScope::~NoSyncScope() = default;

void ShardedDataParallel::FinishGradientSync() {
  if (impl_->parameters) impl_->parameters->ThrowIfFailed();
  if (impl_->ddp) {
    impl_->ddp->FinishGradientSync();
  } else {
    impl_->gradients->Finalize();
  }
}

// Level 1 holds the whole averaged gradients on every rank: clipping them as DDP does costs no communication and
// gives DDP's bits. Level 2 holds chunks: their norm takes one all-reduce.
double ShardedDataParallel::ClipGradNorm(double max_norm, double norm_type) {
  FinishGradientSync();
  if (impl_->ddp) return torch::nn::utils::clip_grad_norm_(impl_->params, max_norm, norm_type);
  return ClipShardGradNorm(impl_->ctx, impl_->BoundGradients(), max_norm, norm_type);
}

void ShardedDataParallel::ClipGradValue(double clip_value) {
  FinishGradientSync();
  if (impl_->ddp) return torch::nn::utils::clip_grad_value_(impl_->params, clip_value);
  ClipShardGradValue(impl_->BoundGradients(), clip_value);
}

void ShardedDataParallel::Step() { impl_->Step(); }

ShardedDataParallel::GatheredState ShardedDataParallel::GatherOptimizerState(int root) {
  LAKERUN_CHECK(root >= 0 && root < impl_->ctx.world_size(), "GatherOptimizerState: root=", root,
                " is not a rank of a world of ", impl_->ctx.world_size());
  Impl& im = *impl_;
  for (const ShardedOptimizer& opt : im.optimizers) {
    GatherFullOptimizerState(im.ctx, opt, im.params, im.buckets, im.pieces, root);
  }
  return GatheredState(im.ctx.rank() == root ? im.user_optimizers
                                             : std::vector<std::shared_ptr<torch::optim::Optimizer>>{});
}

ShardedDataParallel::GatheredState::GatheredState(std::vector<std::shared_ptr<torch::optim::Optimizer>> filled)
    : filled_(std::move(filled)) {}
ShardedDataParallel::GatheredState::GatheredState(GatheredState&& other) noexcept
    : filled_(std::move(other.filled_)) {
  other.filled_.clear();
}
ShardedDataParallel::GatheredState::~GatheredState() {
  for (auto& opt : filled_) opt->state().clear();
}

ShardedDataParallel::FullParameters ShardedDataParallel::GatherFullParameters(bool writeback) {
  if (impl_->parameters) impl_->parameters->GatherAll();
  return FullParameters(this, writeback);
}

ShardedDataParallel::FullParameters::FullParameters(ShardedDataParallel* sdp, bool writeback)
    : sdp_(sdp), writeback_(writeback) {}
ShardedDataParallel::FullParameters::FullParameters(FullParameters&& other) noexcept
    : sdp_(other.sdp_), writeback_(other.writeback_) {
  other.sdp_ = nullptr;
}
ShardedDataParallel::FullParameters::~FullParameters() {
  if (sdp_ == nullptr || !sdp_->impl_->parameters) return;  // levels 1 and 2: the next Step() reads the parameters
  if (writeback_) {
    at::NoGradGuard no_grad;
    sdp_->impl_->RefreshChunks();
    sdp_->impl_->PushOffloadedValues();
  }
  sdp_->impl_->parameters->ReleaseAll();
}

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void ShardedDataParallel::SaveShardedCheckpoint(const std::string& dir, FileSystem& fs) {
  const auto start = std::chrono::steady_clock::now();
  if (!impl_->parameters) {  // levels 1 and 2: the parameters hold the values
    at::NoGradGuard no_grad;
    impl_->RefreshChunks();
  }
  impl_->last_checkpoint_io = SaveShards(fs, dir, impl_->CheckpointState());
  impl_->last_checkpoint_io.seconds = SecondsSince(start);
}

void ShardedDataParallel::LoadShardedCheckpoint(const std::string& dir, FileSystem& fs) {
  const auto start = std::chrono::steady_clock::now();
  LoadedShards loaded = ReadShards(fs, dir, impl_->CheckpointState());
  const ShardedCheckpointIo io = loaded.io;
  impl_->ApplyCheckpoint(std::move(loaded));
  impl_->last_checkpoint_io = io;
  impl_->last_checkpoint_io.seconds = SecondsSince(start);
}

ShardedCheckpointIo ShardedDataParallel::LastCheckpointIo() const { return impl_->last_checkpoint_io; }

ZeroStage ShardedDataParallel::stage() const { return impl_->options.stage; }
ShardedMemory ShardedDataParallel::Memory() const { return impl_->Memory(); }

ShardedStepStats ShardedDataParallel::LastStepStats() const {
  if (impl_->gradients) {
    ShardedStepStats stats = impl_->gradients->Stats();
    if (impl_->parameters) {
      const ShardedParameters::IterationStats it = impl_->parameters->LastIteration();
      stats.parameter_gathers = it.gathers;
      stats.prefetched_gathers = it.prefetched;
    }
    return stats;
  }
  const DdpStepStats s = impl_->ddp->LastStepStats();
  return {s.buckets, s.launched_before_last_gradient};
}

std::string ShardedDataParallel::GradientTransport() const {
  if (impl_->ddp) return impl_->ddp->GradientTransport();
  return impl_->transport->name();
}

std::string ShardedDataParallel::ParameterTransport() const { return impl_->transport->name(); }

}  // namespace lakerun::dist
