// DistributedDataParallel: gradient buckets, autograd hooks, overlapped all-reduce, finalization at backward's end.
#include <lakerun/dist/ddp.h>

#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>
#include <lakerun/dist/collectives.h>

#include "dist/context_impl.h"
#include "dist/shared_memory_allreduce.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <atomic>
#include <map>
#include <mutex>

namespace lakerun::dist {
namespace {

// Tensors that may share one flat buffer: same dtype, same device.
std::string GroupKey(const at::Tensor& t) { return StrCat(t.scalar_type(), "/", t.device()); }

}  // namespace

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
    std::shared_ptr<torch::autograd::Node> accumulator;  // a variable only holds it weakly: keep it alive
    uintptr_t hook_key = 0;
    bool ready = false;
    bool twice = false;  // received a second gradient in the same synchronized backward
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
  void BroadcastState(torch::nn::Module& module);

  Context& ctx_;
  torch::nn::Module& module_;
  DdpOptions options_;
  bool distributed_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  std::unique_ptr<SharedMemoryAllReduce> shared_;  // null: every bucket goes through the process group
  std::size_t next_launch_ = 0;
  std::size_t ready_count_ = 0;  // parameters whose gradient arrived in this backward
  DdpStepStats step_stats_, last_stats_;
  bool in_backward_ = false;  // a synchronized backward saw a gradient and has not been finalized yet
  mutable std::mutex mu_;     // hooks may run on autograd device threads
};

DistributedDataParallel::Reducer::Reducer(Context& ctx, torch::nn::Module& module, DdpOptions options)
    : ctx_(ctx), module_(module), options_(options), distributed_(ctx.world_size() > 1) {
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
  BroadcastState(module);
  BuildBuckets(options);
  if (distributed_ && options.shared_memory) SetUpSharedMemory();
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Param& p = params_[i];
    p.accumulator = torch::autograd::impl::grad_accumulator(p.variable);
    LAKERUN_INTERNAL_ASSERT(p.accumulator != nullptr, "parameter ", p.name, " has no gradient accumulator");
    p.hook_key = p.accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          OnGradReady(i);
          return outputs;
        }));
  }
}

DistributedDataParallel::Reducer::~Reducer() {
  for (Param& p : params_) {
    if (p.accumulator) p.accumulator->del_post_hook(p.hook_key);
  }
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

// Rank 0's parameters and buffers to every rank, one flat broadcast per dtype.
void DistributedDataParallel::Reducer::BroadcastState(torch::nn::Module& module) {
  if (!distributed_) return;
  std::map<std::string, std::vector<at::Tensor>> groups;
  for (const at::Tensor& t : module.parameters(true)) groups[GroupKey(t)].push_back(t);
  for (const at::Tensor& t : module.buffers(true)) {
    if (t.defined()) groups[GroupKey(t)].push_back(t);
  }
  at::NoGradGuard no_grad;
  for (auto& [key, tensors] : groups) {
    std::vector<at::Tensor> flat_parts;
    for (const at::Tensor& t : tensors) flat_parts.push_back(t.reshape({-1}));
    at::Tensor flat = at::cat(flat_parts);
    Broadcast(ctx_, flat, 0);
    int64_t offset = 0;
    for (at::Tensor& t : tensors) {
      t.copy_(flat.narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  }
}

// Reverse registration order; one bucket per (dtype, device) at a time; a bucket closes once it reaches its cap.
void DistributedDataParallel::Reducer::BuildBuckets(const DdpOptions& options) {
  std::map<std::string, std::size_t> open;  // (dtype, device) -> index of its open bucket in buckets_
  std::vector<int64_t> bucket_bytes;
  for (std::size_t k = params_.size(); k-- > 0;) {
    Param& p = params_[k];
    std::string key = GroupKey(p.variable);
    auto it = open.find(key);
    if (it == open.end()) {
      buckets_.emplace_back();
      bucket_bytes.push_back(0);
      it = open.emplace(key, buckets_.size() - 1).first;
    }
    std::size_t b = it->second;
    p.bucket = b;
    p.offset = 0;
    for (std::size_t q : buckets_[b].params) p.offset += params_[q].variable.numel();
    buckets_[b].params.push_back(k);
    bucket_bytes[b] += p.variable.numel() * p.variable.element_size();
    int64_t cap = b == 0 ? options.first_bucket_cap_bytes : options.bucket_cap_bytes;
    if (bucket_bytes[b] >= cap) open.erase(it);
  }
  for (Bucket& b : buckets_) {
    int64_t numel = 0;
    for (std::size_t q : b.params) numel += params_[q].variable.numel();
    const at::Tensor& first = params_[b.params.front()].variable;
    if (distributed_) b.flat = at::zeros({numel}, first.options().requires_grad(false));
    b.pending = b.params.size();
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
    if (ready_count_ < params_.size()) ++step_stats_.launched_before_last_gradient;
    Launch(buckets_[next_launch_++]);
  }
}

void DistributedDataParallel::Reducer::OnGradReady(std::size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sync_enabled) return;
  if (!in_backward_) {
    in_backward_ = true;
    // Runs once the whole backward pass is done; an exception from it propagates out of backward().
    torch::autograd::Engine::get_default_engine().queue_callback([this] { Finalize(); });
  }
  Param& p = params_[index];
  if (p.ready) {
    p.twice = true;
    return;
  }
  p.ready = true;
  ++ready_count_;
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
  for (Param& p : params_) p.ready = p.twice = false;
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
    b.started = false;
  }
  next_launch_ = 0;
  ready_count_ = 0;
  step_stats_ = DdpStepStats{};
  in_backward_ = false;
}

void DistributedDataParallel::Reducer::Finalize() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!in_backward_) return;
  std::vector<std::string> unused, doubled;
  for (const Param& p : params_) {
    if (!p.ready) unused.push_back(p.name);
    if (p.twice) doubled.push_back(p.name);
  }
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
    std::string names;
    const std::vector<std::string>& list = doubled.empty() ? unused : doubled;
    for (std::size_t i = 0; i < list.size() && i < 16; ++i) names += (i ? ", '" : "'") + list[i] + "'";
    if (list.size() > 16) names += StrCat(" and ", list.size() - 16, " more");
    if (!doubled.empty()) {
      LAKERUN_THROW(DistError, "DistributedDataParallel: rank ", ctx_.rank(), ": parameter(s) ", names,
                    " received gradients twice in one synchronized backward; accumulate inside NoSync() instead");
    }
    LAKERUN_THROW(DistError, "DistributedDataParallel: rank ", ctx_.rank(), ": ", unused.size(), " parameter(s) ",
                  "received no gradient in this backward: ", names,
                  ". Make every parameter take part in the loss, or set DdpOptions::find_unused_parameters");
  }
  // find_unused_parameters: a missing gradient counts as zero; a parameter no rank used keeps its .grad.
  step_stats_.buckets = static_cast<int>(buckets_.size());
  step_stats_.unused_parameters = static_cast<int>(unused.size());
  ready_count_ = params_.size();  // launches from here on overlap nothing
  at::Tensor used_count;
  if (!unused.empty() || options_.find_unused_parameters) {
    if (distributed_) {
      for (Param& p : params_) {
        if (!p.ready) buckets_[p.bucket].flat.narrow(0, p.offset, p.variable.numel()).zero_();
      }
    }
    for (Bucket& b : buckets_) b.pending = 0;
    LaunchReadyBuckets();
    used_count = at::empty({static_cast<int64_t>(params_.size())}, at::TensorOptions().dtype(at::kInt));
    int* used = used_count.data_ptr<int>();
    for (std::size_t i = 0; i < params_.size(); ++i) used[i] = params_[i].ready ? 1 : 0;
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
