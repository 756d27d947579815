// DistributedDataParallel: gradient buckets, autograd hooks, overlapped all-reduce, finalization at backward's end.
#include <lakerun/dist/ddp.h>

#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>
#include <lakerun/dist/collectives.h>

#include "dist/bucket_plan.h"
#include "dist/context_impl.h"
#include "dist/grad_hooks.h"
#include "dist/shared_memory_allreduce.h"

#include <ATen/ATen.h>

#include <atomic>
#include <mutex>

namespace lakerun::dist {

class DistributedDataParallel::Reducer {
 public:
  Reducer(Context& ctx, torch::nn::Module& module, DdpOptions options);
  ~Reducer();

  void OnGradReady(std::size_t index);
  void Finalize();
  std::vector<std::vector<std::string>> BucketNames() const;
  DdpStepStats Stats() const;
  std::string Transport() const;

  std::atomic<bool> sync_enabled{true};

 private:
  struct Param {
    std::string name;
    at::Tensor variable;
    std::size_t bucket = 0;
    int64_t offset = 0;  // elements into the bucket's flat buffer
  };
  struct Bucket {
    std::vector<std::size_t> params;
    at::Tensor flat;
    std::size_t pending = 0;
    compat::WorkPtr work;
    int shared = -1;       // index in shared_, or -1: through the process group
    bool started = false;  // launched through shared_ and not finished yet
  };

  void BuildBuckets(const DdpOptions& options);
  void SetUpSharedMemory();
  void WaitForBucket(Bucket& bucket);
  void Launch(Bucket& bucket);
  void LaunchReadyBuckets();
  void Reset();

  Context& ctx_;
  torch::nn::Module& module_;
  DdpOptions options_;
  bool distributed_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  std::unique_ptr<SharedMemoryAllReduce> shared_;  // null: every bucket goes through the process group
  std::unique_ptr<GradAccumulatorHooks> hooks_;
  std::vector<std::string> names_;  // of params_
  BackwardArrivals arrivals_;
  std::size_t next_launch_ = 0;
  DdpStepStats step_stats_, last_stats_;
  mutable std::mutex mu_;  // hooks may run on autograd device threads
};

DistributedDataParallel::Reducer::Reducer(Context& ctx, torch::nn::Module& module, DdpOptions options)
    : ctx_(ctx),
      module_(module),
      options_(options),
      distributed_(ctx.world_size() > 1),
      arrivals_(0, [this] { Finalize(); }) {
  LAKERUN_CHECK(options.bucket_cap_bytes > 0 && options.first_bucket_cap_bytes > 0,
                "DdpOptions: bucket caps must be positive, got bucket_cap_bytes=", options.bucket_cap_bytes,
                " first_bucket_cap_bytes=", options.first_bucket_cap_bytes);
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    if (!item.value().requires_grad()) continue;
    LAKERUN_CHECK(item.value().layout() == at::kStrided, "DistributedDataParallel: parameter '", item.key(),
                  "' is not a dense tensor");
    Param p;
    p.name = item.key();
    p.variable = item.value();
    params_.push_back(std::move(p));
  }
  BroadcastModuleState(ctx, module);
  BuildBuckets(options);
  if (distributed_ && options.shared_memory) SetUpSharedMemory();
  std::vector<at::Tensor> variables;
  for (const Param& p : params_) {
    variables.push_back(p.variable);
    names_.push_back(p.name);
  }
  arrivals_ = BackwardArrivals(params_.size(), [this] { Finalize(); });
  hooks_ = std::make_unique<GradAccumulatorHooks>("DistributedDataParallel", variables, names_,
                                                  [this](std::size_t i) { OnGradReady(i); });
}

DistributedDataParallel::Reducer::~Reducer() {
  hooks_.reset();
  // Never leave a collective running on buffers about to be freed. (Peers only read this rank's shared slot
  // through their own mapping of the segment, which outlives this one.)
  for (Bucket& b : buckets_) {
    if (b.work) {
      try {
        compat::Wait(b.work, ctx_.timeout());
      } catch (const std::exception&) {
      }
    }
  }
}

// Buckets as PlanBuckets lays them out; each gets a flat buffer when there is someone to all-reduce with.
void DistributedDataParallel::Reducer::BuildBuckets(const DdpOptions& options) {
  std::vector<at::Tensor> variables;
  for (const Param& p : params_) variables.push_back(p.variable);
  for (const PlannedBucket& planned :
       PlanBuckets(variables, options.first_bucket_cap_bytes, options.bucket_cap_bytes)) {
    Bucket b;
    b.params = planned.params;
    for (std::size_t k = 0; k < planned.params.size(); ++k) {
      params_[planned.params[k]].bucket = buckets_.size();
      params_[planned.params[k]].offset = planned.offsets[k];
    }
    const at::Tensor& first = params_[b.params.front()].variable;
    if (distributed_) b.flat = at::zeros({planned.numel}, first.options().requires_grad(false));
    b.pending = b.params.size();
    buckets_.push_back(std::move(b));
  }
}

// Buckets that qualify move into one shared segment: their flat buffer becomes this rank's slot there.
void DistributedDataParallel::Reducer::SetUpSharedMemory() {
  // Set-up talks through the process group's all-gather, which needs a CPU backend; a GPU job keeps NCCL throughout.
  if (!ctx_.device().is_cpu()) return;
  std::vector<SharedBufferSpec> specs;
  std::vector<Bucket*> shared_buckets;
  for (Bucket& b : buckets_) {
    if (b.flat.device().is_cpu() && SharedMemoryAllReduce::Supports(b.flat.scalar_type())) {
      specs.push_back({b.flat.scalar_type(), b.flat.numel()});
      shared_buckets.push_back(&b);
    }
  }
  if (specs.empty()) return;
  std::string why_not;
  shared_ = SharedMemoryAllReduce::Create(ctx_, specs, &why_not);
  if (!shared_) {
    if (ctx_.rank() == 0) {
      LAKERUN_LOG(Info) << "DistributedDataParallel: gradients go through " << ToString(ctx_.backend())
                        << ", not shared memory: " << why_not;
    }
    return;
  }
  for (std::size_t i = 0; i < shared_buckets.size(); ++i) {
    shared_buckets[i]->shared = static_cast<int>(i);
    shared_buckets[i]->flat = shared_->input(i).zero_();
  }
}

void DistributedDataParallel::Reducer::Launch(Bucket& bucket) {
  if (!distributed_) return;
  if (bucket.shared >= 0) {
    shared_->Start(static_cast<std::size_t>(bucket.shared));
    bucket.started = true;
    return;
  }
  try {
    std::vector<at::Tensor> tensors{bucket.flat};
    ::c10d::AllreduceOptions options;
    options.timeout = ctx_.timeout();
    bucket.work = ctx_.impl().backend->allreduce(tensors, options);
  } catch (const std::exception& e) {
    RethrowCollectiveError(ctx_, "DDP gradient all_reduce", e);
  }
}

// Buckets start in index order on every rank (c10d matches collectives by order, so the order must agree).
void DistributedDataParallel::Reducer::LaunchReadyBuckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    if (arrivals_.awaiting()) ++step_stats_.launched_before_last_gradient;
    Launch(buckets_[next_launch_++]);
  }
}

void DistributedDataParallel::Reducer::OnGradReady(std::size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sync_enabled || !arrivals_.Arrive(index)) return;
  Param& p = params_[index];
  Bucket& bucket = buckets_[p.bucket];
  if (distributed_) {
    const at::Tensor& grad = p.variable.grad();
    LAKERUN_CHECK_AS(DistError, grad.defined() && grad.layout() == at::kStrided, "DistributedDataParallel: rank ",
                     ctx_.rank(), ": parameter '", p.name, "' got an undefined or sparse gradient");
    bucket.flat.narrow(0, p.offset, grad.numel()).copy_(grad.reshape({-1}));
  }
  if (--bucket.pending == 0) LaunchReadyBuckets();
}

// Completes a launched bucket's all-reduce; afterwards flat holds the average over ranks.
void DistributedDataParallel::Reducer::WaitForBucket(Bucket& bucket) {
  if (bucket.shared >= 0) {
    if (!bucket.started) return;
    bucket.started = false;
    auto i = static_cast<std::size_t>(bucket.shared);
    {
      rdzv::ProgressReporter::Scope waiting(ctx_.impl().progress.get(), rdzv::Collective::kSharedMemoryReduce);
      shared_->Finish(i);
    }
    // Every peer has finished reading this rank's slot, so the average may overwrite it.
    at::div_out(bucket.flat, shared_->sum(i), at::scalar_tensor(ctx_.world_size(), at::kDouble));
    return;
  }
  if (!bucket.work) return;
  try {
    rdzv::ProgressReporter::Scope waiting(ctx_.impl().progress.get(), rdzv::Collective::kGradientAllReduce);
    compat::Wait(bucket.work, ctx_.timeout());
  } catch (const std::exception& e) {
    RethrowCollectiveError(ctx_, "DDP gradient all_reduce", e);
  }
  bucket.flat.div_(ctx_.world_size());
}

void DistributedDataParallel::Reducer::Reset() {
  arrivals_.Reset();
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
    b.started = false;
  }
  next_launch_ = 0;
  step_stats_ = DdpStepStats{};
}

void DistributedDataParallel::Reducer::Finalize() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!arrivals_.in_backward()) return;
  std::vector<std::string> unused, doubled;
  arrivals_.Misuse(names_, &unused, &doubled);
  bool fail = !doubled.empty() || (!unused.empty() && !options_.find_unused_parameters);
  if (fail) {
    // Leave nothing in flight, then report. Buckets holding an unused parameter were never launched on any rank
    // that saw the same graph, so peers fail the same way instead of waiting.
    for (Bucket& b : buckets_) {
      try {
        WaitForBucket(b);
      } catch (const std::exception&) {
      }
    }
    Reset();
    ThrowGradientMisuse("DistributedDataParallel", ctx_.rank(), unused, doubled,
                        "Make every parameter take part in the loss, or set DdpOptions::find_unused_parameters");
  }
  // find_unused_parameters: a missing gradient counts as zero; a parameter no rank used keeps its .grad.
  step_stats_.buckets = static_cast<int>(buckets_.size());
  step_stats_.unused_parameters = static_cast<int>(unused.size());
  arrivals_.Close();  // launches from here on overlap nothing
  at::Tensor used_count;
  if (!unused.empty() || options_.find_unused_parameters) {
    if (distributed_) {
      for (std::size_t i = 0; i < params_.size(); ++i) {
        const Param& p = params_[i];
        if (!arrivals_.arrived(i)) buckets_[p.bucket].flat.narrow(0, p.offset, p.variable.numel()).zero_();
      }
    }
    for (Bucket& b : buckets_) b.pending = 0;
    LaunchReadyBuckets();
    used_count = at::empty({static_cast<int64_t>(params_.size())}, at::TensorOptions().dtype(at::kInt));
    int* used = used_count.data_ptr<int>();
    for (std::size_t i = 0; i < params_.size(); ++i) used[i] = arrivals_.arrived(i) ? 1 : 0;
    if (distributed_) {
      at::Tensor on_device = used_count.to(ctx_.device());
      AllReduce(ctx_, on_device, ReduceOp::kSum);
      used_count = on_device.cpu();
    }
  }
  LAKERUN_INTERNAL_ASSERT(next_launch_ == buckets_.size(), "DDP: ", buckets_.size() - next_launch_,
                          " buckets never launched");
  if (distributed_) {
    at::NoGradGuard no_grad;
    for (Bucket& b : buckets_) {
      try {
        WaitForBucket(b);
      } catch (...) {
        Reset();
        throw;
      }
      for (std::size_t q : b.params) {
        Param& p = params_[q];
        if (used_count.defined() && used_count.data_ptr<int>()[q] == 0) continue;
        at::Tensor averaged = b.flat.narrow(0, p.offset, p.variable.numel()).view_as(p.variable);
        at::Tensor& grad = p.variable.mutable_grad();
        if (grad.defined()) {
          grad.copy_(averaged);
        } else {
          grad = averaged.clone();
        }
      }
    }
  }
  last_stats_ = step_stats_;
  Reset();
  lock.unlock();
  if (distributed_ && options_.broadcast_buffers) {
    for (at::Tensor& buffer : module_.buffers(true)) {
      if (buffer.defined()) Broadcast(ctx_, buffer, 0);
    }
  }
}

std::vector<std::vector<std::string>> DistributedDataParallel::Reducer::BucketNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::vector<std::string>> names;
  for (const Bucket& b : buckets_) {
    names.emplace_back();
    for (std::size_t q : b.params) names.back().push_back(params_[q].name);
  }
  return names;
}

DdpStepStats DistributedDataParallel::Reducer::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_stats_;
}

std::string DistributedDataParallel::Reducer::Transport() const {
  if (!distributed_) return "none";
  bool any_shared = false, any_group = false;
  for (const Bucket& b : buckets_) (b.shared >= 0 ? any_shared : any_group) = true;
  if (any_shared && any_group) return std::string("shared memory + ") + ToString(ctx_.backend());
  return any_shared ? "shared memory" : ToString(ctx_.backend());
}

DistributedDataParallel::DistributedDataParallel(Context& ctx, std::shared_ptr<torch::nn::Module> module,
                                                 DdpOptions options)
    : module_(std::move(module)) {
  LAKERUN_CHECK(module_ != nullptr, "DistributedDataParallel: null module on rank ", ctx.rank());
  reducer_ = std::make_unique<Reducer>(ctx, *module_, options);
}

DistributedDataParallel::~DistributedDataParallel() = default;

void DistributedDataParallel::FinishGradientSync() { reducer_->Finalize(); }

std::vector<std::vector<std::string>> DistributedDataParallel::BucketParameterNames() const {
  return reducer_->BucketNames();
}

DdpStepStats DistributedDataParallel::LastStepStats() const { return reducer_->Stats(); }

std::string DistributedDataParallel::GradientTransport() const { return reducer_->Transport(); }

DistributedDataParallel::NoSyncScope::NoSyncScope(DistributedDataParallel& ddp)
    : ddp_(ddp), previous_(ddp.reducer_->sync_enabled) {
  ddp_.reducer_->sync_enabled = false;
}

DistributedDataParallel::NoSyncScope::~NoSyncScope() { ddp_.reducer_->sync_enabled = previous_; }

}  // namespace lakerun::dist
