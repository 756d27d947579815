#include "dist/shard_collectives.h"

#include <lakerun/base/error.h>

#include "dist/context_impl.h"

#include <ATen/ATen.h>

#include <vector>

namespace lakerun::dist {
namespace {

bool OnNccl(const Context& ctx) { return ctx.backend() == Backend::kNccl; }

// Without a process group: the collective of one rank.
PendingShardOp LocalCopy(Context& ctx, const at::Tensor& from, const at::Tensor& to, const std::string& what) {
  return PendingShardOp(&ctx, compat::WorkPtr(), [from, out = at::Tensor(to)]() mutable { out.copy_(from); }, what,
                        rdzv::Collective::kNone);
}

void CheckShapes(const Context& ctx, const at::Tensor& whole, const at::Tensor& chunk, const char* what) {
  LAKERUN_CHECK(whole.is_contiguous() && chunk.is_contiguous() && whole.dim() == 1 && chunk.dim() == 1 &&
                    whole.numel() == chunk.numel() * ctx.world_size() && whole.scalar_type() == chunk.scalar_type(),
                what, ": needs 1-D contiguous tensors of one dtype, the whole ", ctx.world_size(),
                " times the chunk; got ", whole.sizes(), " and ", chunk.sizes(), " on rank ", ctx.rank());
  CheckDeviceFor(ctx, whole, what);
  CheckDeviceFor(ctx, chunk, what);
}

// Launches a collective, turning c10d failures into lakerun errors naming it.
template <typename Body>
compat::WorkPtr Launch(Context& ctx, const std::string& what, Body&& launch) {
  try {
    return launch(*ctx.impl().backend);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    RethrowCollectiveError(ctx, what, e);
  }
}

}  // namespace

PendingShardOp::PendingShardOp(Context* ctx, compat::WorkPtr work, std::function<void()> complete, std::string what,
                               rdzv::Collective kind)
    : ctx_(ctx), work_(std::move(work)), complete_(std::move(complete)), what_(std::move(what)), kind_(kind) {}

PendingShardOp::PendingShardOp(PendingShardOp&& other) noexcept { *this = std::move(other); }

PendingShardOp& PendingShardOp::operator=(PendingShardOp&& other) noexcept {
  if (this != &other) {
    if (pending()) {
      try {
        Wait();
      } catch (const std::exception&) {
      }
    }
    ctx_ = other.ctx_;
    work_ = std::move(other.work_);
    complete_ = std::move(other.complete_);
    what_ = std::move(other.what_);
    kind_ = other.kind_;
    other.complete_ = nullptr;
  }
  return *this;
}

PendingShardOp::~PendingShardOp() {
  if (!pending() || !work_) return;
  try {
    compat::Wait(work_, ctx_->timeout());
  } catch (const std::exception&) {
  }
}

void PendingShardOp::Wait() {
  if (!pending()) return;
  std::function<void()> complete = std::move(complete_);
  complete_ = nullptr;
  // Marked while blocked (the transfer, or a shared-memory slot's peers), as the other collectives are; a wait that
  // throws stays marked. Nothing to mark at world size 1 (no board) or for a local copy (kNone).
  rdzv::ProgressReporter::Scope waiting(kind_ == rdzv::Collective::kNone ? nullptr : ctx_->impl().progress.get(),
                                        kind_);
  if (work_) {
    compat::WorkPtr work = std::move(work_);
    try {
      compat::Wait(work, ctx_->timeout());
    } catch (const std::exception& e) {
      RethrowCollectiveError(*ctx_, what_, e);
    }
  }
  complete();
}

PendingShardOp StartReduceScatter(Context& ctx, const at::Tensor& input, const at::Tensor& output) {
  CheckShapes(ctx, input, output, "StartReduceScatter");
  const int world = ctx.world_size();
  const std::string what = StrCat("reduce_scatter of ", input.nbytes(), " bytes");
  if (!ctx.impl().backend) return LocalCopy(ctx, input, output, what);
  if (OnNccl(ctx)) {
    compat::WorkPtr work = Launch(ctx, what, [&](compat::Backend& pg) {
      at::Tensor in = input, out = output;
      ::c10d::ReduceScatterOptions options;
      options.timeout = ctx.timeout();
      return pg._reduce_scatter_base(out, in, options);
    });
    // input lives until the wait
    return PendingShardOp(&ctx, std::move(work), [input] {}, what, rdzv::Collective::kReduceScatter);
  }
  // Gloo: all-to-all, then the rank-order sum of what arrived.
  at::Tensor received = at::empty_like(input);
  compat::WorkPtr work = Launch(ctx, what + " (all_to_all)", [&](compat::Backend& pg) {
    at::Tensor in = input, out = received;
    std::vector<int64_t> equal_splits;
    ::c10d::AllToAllOptions options;
    options.timeout = ctx.timeout();
    return pg.alltoall_base(out, in, equal_splits, equal_splits, options);
  });
  const int64_t n = output.numel();
  auto sum = [input, received, out = at::Tensor(output), world, n]() mutable {
    at::NoGradGuard no_grad;
    at::add_out(out, received.narrow(0, 0, n), received.narrow(0, n, n));
    for (int q = 2; q < world; ++q) out.add_(received.narrow(0, q * n, n));
  };
  return PendingShardOp(&ctx, std::move(work), std::move(sum), what, rdzv::Collective::kReduceScatter);
}

PendingShardOp StartAllGather(Context& ctx, const at::Tensor& input, const at::Tensor& output) {
  CheckShapes(ctx, output, input, "StartAllGather");
  const std::string what = StrCat("all_gather of ", input.nbytes(), " bytes per rank");
  if (!ctx.impl().backend) return LocalCopy(ctx, input, output, what);
  compat::WorkPtr work = Launch(ctx, what, [&](compat::Backend& pg) {
    at::Tensor in = input, out = output;
    ::c10d::AllgatherOptions options;
    options.timeout = ctx.timeout();
    if (OnNccl(ctx)) return pg._allgather_base(out, in, options);
    if (in.scalar_type() == at::kBFloat16) {  // Gloo has no bfloat16; a gather copies bits, so half carries them
      in = in.view(at::kHalf);
      out = out.view(at::kHalf);
    }
    std::vector<std::vector<at::Tensor>> outputs(1);
    const int64_t n = input.numel();
    for (int r = 0; r < ctx.world_size(); ++r) outputs[0].push_back(out.narrow(0, r * n, n));
    std::vector<at::Tensor> inputs{in};
    return pg.allgather(outputs, inputs, options);
  });
  return PendingShardOp(&ctx, std::move(work), [] {}, what, rdzv::Collective::kAllGather);
}

}  // namespace lakerun::dist
