#include "dist/sharded_gradients.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>

#include <ATen/ATen.h>

namespace lakerun::dist {

ShardedGradients::ShardedGradients(Context& ctx, torch::nn::Module& module, std::vector<at::Tensor> params,
                                   std::vector<std::string> names, const std::vector<ShardedBucket>& buckets,
                                   std::vector<at::Tensor> chunks, ShardTransport& transport,
                                   bool broadcast_buffers, std::function<void(std::size_t)> on_bucket_complete)
    : ctx_(ctx),
      module_(module),
      transport_(transport),
      broadcast_buffers_(broadcast_buffers),
      on_bucket_complete_(std::move(on_bucket_complete)),
      chunks_(std::move(chunks)),
      names_(names),
      arrivals_(params.size(), [this] { Finalize(); }) {
  for (std::size_t i = 0; i < params.size(); ++i) params_.push_back(Param{params[i], names[i]});
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    Bucket bucket;
    bucket.params = buckets[b].params;
    bucket.padded_numel = buckets[b].padded_numel(ctx.world_size());
    bucket.dtype = buckets[b].dtype;
    bucket.pending = bucket.params.size();
    for (std::size_t k = 0; k < bucket.params.size(); ++k) {
      params_[bucket.params[k]].bucket = b;
      params_[bucket.params[k]].offset = buckets[b].offsets[k];
    }
    buckets_.push_back(std::move(bucket));
  }
  hooks_ = std::make_unique<GradAccumulatorHooks>("ShardedDataParallel", params, names,
                                                  [this](std::size_t i) { OnGradReady(i); });
}

ShardedGradients::~ShardedGradients() {
  hooks_.reset();
  for (std::size_t b = 0; b < next_launch_; ++b) {
    try {
      transport_.FinishReduceScatter(b);  // nothing in flight may outlive the chunks
    } catch (const std::exception&) {
    }
  }
}

void ShardedGradients::OnGradReady(std::size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sync_enabled || !arrivals_.Arrive(index)) return;
  Param& p = params_[index];
  Bucket& bucket = buckets_[p.bucket];
  at::Tensor& grad = p.variable.mutable_grad();
  LAKERUN_CHECK_AS(DistError, grad.defined() && grad.layout() == at::kStrided, "ShardedDataParallel: rank ",
                   ctx_.rank(), ": parameter '", p.name, "' got an undefined or sparse gradient");
  if (!bucket.flat.defined()) {
    bucket.flat = at::empty({bucket.padded_numel}, grad.options().dtype(bucket.dtype));  // the chunks' dtype
    int64_t used = 0;
    for (std::size_t q : bucket.params) used += params_[q].variable.numel();
    bucket.flat.narrow(0, used, bucket.padded_numel - used).zero_();
  }
  bucket.flat.narrow(0, p.offset, grad.numel()).copy_(grad.reshape({-1}));
  grad.reset();  // the bucket holds it now; the full gradient need not outlive this hook
  if (--bucket.pending == 0) {
    if (on_bucket_complete_) on_bucket_complete_(p.bucket);
    LaunchReadyBuckets();
  }
}

// Buckets start in index order on every rank (c10d matches collectives by order).
void ShardedGradients::LaunchReadyBuckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    if (arrivals_.awaiting()) ++step_stats_.launched_before_last_gradient;
    Bucket& b = buckets_[next_launch_];
    transport_.StartReduceScatter(next_launch_, b.flat, chunks_[next_launch_]);
    b.flat = at::Tensor();  // the transport holds what it still needs
    ++next_launch_;
  }
}

void ShardedGradients::Reset() {
  arrivals_.Reset();
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.flat = at::Tensor();
  }
  next_launch_ = 0;
  step_stats_ = ShardedStepStats{};
}

void ShardedGradients::Finalize() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!arrivals_.in_backward()) return;
  std::vector<std::string> unused, doubled;
  arrivals_.Misuse(names_, &unused, &doubled);
  if (!unused.empty() || !doubled.empty()) {
    // Leave nothing in flight, then report. Buckets holding an unused parameter were never launched on any rank
    // that saw the same graph, so peers fail the same way instead of waiting.
    for (std::size_t b = 0; b < next_launch_; ++b) {
      try {
        transport_.FinishReduceScatter(b);
      } catch (const std::exception&) {
      }
    }
    Reset();
    ThrowGradientMisuse("ShardedDataParallel", ctx_.rank(), unused, doubled,
                        "Make every parameter take part in the loss (sharded data parallel has no "
                        "find_unused_parameters)");
  }
  LAKERUN_INTERNAL_ASSERT(next_launch_ == buckets_.size(), "ShardedDataParallel: ", buckets_.size() - next_launch_,
                          " buckets never launched");
  step_stats_.buckets = static_cast<int>(buckets_.size());
  at::NoGradGuard no_grad;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    try {
      transport_.FinishReduceScatter(b);
    } catch (...) {
      Reset();
      throw;
    }
    if (ctx_.world_size() > 1) chunks_[b].div_(ctx_.world_size());
  }
  has_gradients_ = true;
  ++generation_;
  last_stats_ = step_stats_;
  Reset();
  lock.unlock();
  if (ctx_.world_size() > 1 && broadcast_buffers_) {
    for (at::Tensor& buffer : module_.buffers(true)) {
      if (buffer.defined()) Broadcast(ctx_, buffer, 0);
    }
  }
}

ShardedStepStats ShardedGradients::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_stats_;
}

}  // namespace lakerun::dist
