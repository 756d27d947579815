#include <lakerun/dist/collectives.h>

#include <lakerun/base/error.h>

#include "dist/context_impl.h"

#include <ATen/ATen.h>

#include <cstring>

namespace lakerun::dist {
namespace {

::c10d::ReduceOp ToC10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean: return ::c10d::ReduceOp::SUM;
    case ReduceOp::kMax: return ::c10d::ReduceOp::MAX;
    case ReduceOp::kMin: return ::c10d::ReduceOp::MIN;
  }
  return ::c10d::ReduceOp::SUM;
}

const char* OpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMean: return "mean";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

// Runs one c10d collective to completion, turning c10d failures into lakerun errors. `describe` builds the
// operation's name only when it failed (no string work on the fast path).
template <typename Describe, typename Launch>
void Run(Context& ctx, rdzv::Collective kind, Describe&& describe, Launch&& launch) {
  try {
    compat::WorkPtr work = launch(*ctx.impl().backend);
    rdzv::ProgressReporter::Scope waiting(ctx.impl().progress.get(), kind);
    compat::Wait(work, ctx.timeout());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    RethrowCollectiveError(ctx, describe(), e);
  }
}

bool Distributed(const Context& ctx) { return ctx.world_size() > 1; }

// Byte payloads and their sizes are built in host memory and travel as tensors on the group's device (as
// torch.distributed's *_object collectives do on NCCL): `.to(ctx.device())` there and `.cpu()` back, both no-ops on a
// CPU group.
at::Tensor EmptyOnGroupDevice(const Context& ctx, at::IntArrayRef sizes, at::ScalarType dtype) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).device(ctx.device()));
}

// Gloo reads tensors as flat dense buffers: give it a contiguous one and copy back if needed.
template <typename Body>
void OnContiguous(at::Tensor& tensor, Body&& body) {
  if (tensor.is_contiguous()) {
    body(tensor);
  } else {
    at::Tensor dense = tensor.contiguous();
    body(dense);
    tensor.copy_(dense);
  }
}

}  // namespace

// NCCL only moves CUDA tensors; Gloo takes both. A CPU tensor handed to an NCCL group would fail inside c10d with a
// message that names neither the call nor the rank.
void CheckDeviceFor(const Context& ctx, const at::Tensor& tensor, const char* what) {
  LAKERUN_CHECK(!ctx.device().is_cuda() || tensor.is_cuda(), what, ": the tensor is on ", tensor.device().str(),
                " but the process group (", ToString(ctx.backend()), ") moves tensors on ", ctx.device().str(),
                " (rank ", ctx.rank(), ")");
}

void Barrier(Context& ctx) {
  if (!Distributed(ctx)) return;
  // An all-reduce of one element rather than c10d's barrier: Gloo's barrier takes no per-call timeout in 1.13.
  at::Tensor token = at::zeros({1}, at::TensorOptions().dtype(at::kInt).device(ctx.device()));
  Run(ctx, rdzv::Collective::kBarrier, [] { return std::string("barrier"); }, [&](compat::Backend& pg) {
    std::vector<at::Tensor> tensors{token};
    ::c10d::AllreduceOptions options;
    options.timeout = ctx.timeout();
    return pg.allreduce(tensors, options);
  });
}

void Broadcast(Context& ctx, at::Tensor& tensor, int root) {
  LAKERUN_CHECK(root >= 0 && root < ctx.world_size(), "Broadcast: root=", root, " is not a rank of a world of ",
                ctx.world_size(), " (rank ", ctx.rank(), ")");
  LAKERUN_CHECK(tensor.defined(), "Broadcast: undefined tensor on rank ", ctx.rank());
  if (!Distributed(ctx)) return;
  CheckDeviceFor(ctx, tensor, "Broadcast");
  OnContiguous(tensor, [&](at::Tensor& t) {
    const auto describe = [&] { return StrCat("broadcast of ", t.nbytes(), " bytes from rank ", root); };
    Run(ctx, rdzv::Collective::kBroadcast, describe, [&](compat::Backend& pg) {
      std::vector<at::Tensor> tensors{t};
      ::c10d::BroadcastOptions options;
      options.rootRank = root;
      options.timeout = ctx.timeout();
      return pg.broadcast(tensors, options);
    });
  });
}

void AllReduce(Context& ctx, at::Tensor& tensor, ReduceOp op) {
  LAKERUN_CHECK(tensor.defined(), "AllReduce: undefined tensor on rank ", ctx.rank());
  LAKERUN_CHECK(op != ReduceOp::kMean || at::isFloatingType(tensor.scalar_type()),
                "AllReduce(mean) needs a floating-point tensor, got ", tensor.scalar_type(), " on rank ", ctx.rank());
  if (!Distributed(ctx)) return;
  CheckDeviceFor(ctx, tensor, "AllReduce");
  OnContiguous(tensor, [&](at::Tensor& t) {
    const auto describe = [&] { return StrCat("all_reduce(", OpName(op), ") of ", t.nbytes(), " bytes"); };
    Run(ctx, rdzv::Collective::kAllReduce, describe, [&](compat::Backend& pg) {
      std::vector<at::Tensor> tensors{t};
      ::c10d::AllreduceOptions options;
      options.reduceOp = ToC10d(op);
      options.timeout = ctx.timeout();
      return pg.allreduce(tensors, options);
    });
  });
  if (op == ReduceOp::kMean) tensor.div_(ctx.world_size());
}

double AllReduceDouble(Context& ctx, double value, ReduceOp op) {
  if (!Distributed(ctx)) return value;
  at::Tensor t = at::full({1}, value, at::TensorOptions().dtype(at::kDouble).device(ctx.device()));
  AllReduce(ctx, t, op);
  return t.item<double>();
}

int64_t AllReduceInt64(Context& ctx, int64_t value, ReduceOp op) {
  LAKERUN_CHECK(op != ReduceOp::kMean, "AllReduceInt64 does not support mean (use AllReduceDouble), rank ",
                ctx.rank());
  if (!Distributed(ctx)) return value;
  at::Tensor t = at::full({1}, value, at::TensorOptions().dtype(at::kLong).device(ctx.device()));
  AllReduce(ctx, t, op);
  return t.item<int64_t>();
}

namespace {

// Every rank's payload size; throws on every rank alike when one exceeds the cap.
std::vector<int64_t> GatherSizes(Context& ctx, std::size_t size, std::size_t max_bytes, const char* what) {
  at::Tensor host = at::full({1}, static_cast<int64_t>(size), at::TensorOptions().dtype(at::kLong));
  at::Tensor mine = host.to(ctx.device());
  at::Tensor all = EmptyOnGroupDevice(ctx, {ctx.world_size()}, at::kLong);
  Run(ctx, rdzv::Collective::kAllGather, [&] { return StrCat(what, " (sizes)"); }, [&](compat::Backend& pg) {
    std::vector<std::vector<at::Tensor>> outputs{{}};
    for (int r = 0; r < ctx.world_size(); ++r) outputs[0].push_back(all.narrow(0, r, 1));
    std::vector<at::Tensor> inputs{mine};
    ::c10d::AllgatherOptions options;
    options.timeout = ctx.timeout();
    return pg.allgather(outputs, inputs, options);
  });
  all = all.cpu();
  std::vector<int64_t> sizes(all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + ctx.world_size());
  for (int r = 0; r < ctx.world_size(); ++r) {
    LAKERUN_CHECK(sizes[r] >= 0 && static_cast<std::size_t>(sizes[r]) <= max_bytes, what, ": rank ", r, " sent ",
                  sizes[r], " bytes, above the limit of ", max_bytes, " bytes (seen on rank ", ctx.rank(), ")");
  }
  return sizes;
}

}  // namespace

std::vector<std::string> AllGatherBytes(Context& ctx, const std::string& bytes, std::size_t max_bytes) {
  if (!Distributed(ctx)) {
    LAKERUN_CHECK(bytes.size() <= max_bytes, "AllGatherBytes: rank 0 sent ", bytes.size(),
                  " bytes, above the limit of ", max_bytes, " bytes");
    return {bytes};
  }
  std::vector<int64_t> sizes = GatherSizes(ctx, bytes.size(), max_bytes, "AllGatherBytes");
  int64_t width = std::max<int64_t>(1, *std::max_element(sizes.begin(), sizes.end()));
  at::Tensor host = at::zeros({width}, at::TensorOptions().dtype(at::kByte));
  if (!bytes.empty()) std::memcpy(host.data_ptr(), bytes.data(), bytes.size());
  at::Tensor mine = host.to(ctx.device());
  at::Tensor all = EmptyOnGroupDevice(ctx, {ctx.world_size(), width}, at::kByte);
  const auto describe = [&] { return StrCat("AllGatherBytes of ", width, " bytes per rank"); };
  Run(ctx, rdzv::Collective::kAllGather, describe, [&](compat::Backend& pg) {
    std::vector<std::vector<at::Tensor>> outputs{{}};
    for (int r = 0; r < ctx.world_size(); ++r) outputs[0].push_back(all[r]);
    std::vector<at::Tensor> inputs{mine};
    ::c10d::AllgatherOptions options;
    options.timeout = ctx.timeout();
    return pg.allgather(outputs, inputs, options);
  });
  all = all.cpu();
  std::vector<std::string> result;
  result.reserve(ctx.world_size());
  for (int r = 0; r < ctx.world_size(); ++r) {
    const char* row = static_cast<const char*>(all[r].data_ptr());
    result.emplace_back(row, static_cast<std::size_t>(sizes[r]));
  }
  return result;
}

std::string BroadcastBytes(Context& ctx, const std::string& bytes, int root, std::size_t max_bytes) {
  LAKERUN_CHECK(root >= 0 && root < ctx.world_size(), "BroadcastBytes: root=", root, " is not a rank of a world of ",
                ctx.world_size());
  if (!Distributed(ctx)) {
    LAKERUN_CHECK(bytes.size() <= max_bytes, "BroadcastBytes: rank 0 sent ", bytes.size(),
                  " bytes, above the limit of ", max_bytes, " bytes");
    return bytes;
  }
  at::Tensor size = at::full({1}, static_cast<int64_t>(ctx.rank() == root ? bytes.size() : 0),
                             at::TensorOptions().dtype(at::kLong).device(ctx.device()));
  Broadcast(ctx, size, root);
  int64_t n = size.item<int64_t>();
  // Every rank sees root's size, so every rank fails alike.
  LAKERUN_CHECK(n >= 0 && static_cast<std::size_t>(n) <= max_bytes, "BroadcastBytes: root rank ", root, " sent ", n,
                " bytes, above the limit of ", max_bytes, " bytes (seen on rank ", ctx.rank(), ")");
  at::Tensor host = at::zeros({std::max<int64_t>(n, 1)}, at::TensorOptions().dtype(at::kByte));
  if (ctx.rank() == root && n > 0) std::memcpy(host.data_ptr(), bytes.data(), bytes.size());
  at::Tensor payload = host.to(ctx.device());
  Broadcast(ctx, payload, root);
  payload = payload.cpu();
  return std::string(static_cast<const char*>(payload.data_ptr()), static_cast<std::size_t>(n));
}

}  // namespace lakerun::dist
