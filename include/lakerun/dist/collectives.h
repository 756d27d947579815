// Collectives over a Context: every rank of the context must make the same calls in the same order.
//
//   AllReduce(ctx, loss_sum, ReduceOp::kSum);                 // in place, every rank gets the result
//   double mean_acc = AllReduceDouble(ctx, acc, ReduceOp::kMean);
//   std::vector<std::string> names = AllGatherBytes(ctx, my_host);
//
// Each call blocks until done or until ctx.timeout() passes (CommTimeout, naming the operation and rank); a failed
// peer is a DistError. At world size 1 every call is a cheap local no-op.
//
// Devices: on an NCCL group (ctx.device() is CUDA) the tensors given to Broadcast and AllReduce must be CUDA tensors
// (InvalidArgument otherwise, before anything is sent); Gloo takes CPU tensors. The scalar and byte forms take host
// values on every backend and stage them through ctx.device() themselves.
#pragma once

#include <lakerun/dist/init.h>

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::dist {

enum class ReduceOp { kSum, kMean, kMax, kMin };

/// Default bound on one rank's payload in AllGatherBytes / BroadcastBytes.
inline constexpr std::size_t kDefaultMaxObjectBytes = 1 << 20;

/// Returns once every rank has called it.
void Barrier(Context& ctx);

/// Overwrites `tensor` on every rank with root's (same shape and dtype everywhere).
void Broadcast(Context& ctx, at::Tensor& tensor, int root = 0);

/// Reduces `tensor` element-wise across ranks, in place. kMean divides the sum by world_size (floating types only).
void AllReduce(Context& ctx, at::Tensor& tensor, ReduceOp op = ReduceOp::kSum);
/// Scalar forms (reduced in double / int64 precision).
double AllReduceDouble(Context& ctx, double value, ReduceOp op = ReduceOp::kSum);
int64_t AllReduceInt64(Context& ctx, int64_t value, ReduceOp op = ReduceOp::kSum);

/// Every rank's `bytes`, indexed by rank. Sizes may differ between ranks. If any rank's payload exceeds
/// `max_bytes`, every rank throws InvalidArgument naming the offending rank and size.
std::vector<std::string> AllGatherBytes(Context& ctx, const std::string& bytes,
                                        std::size_t max_bytes = kDefaultMaxObjectBytes);

/// Root's `bytes` on every rank (other ranks' argument is ignored). Same size cap as AllGatherBytes.
std::string BroadcastBytes(Context& ctx, const std::string& bytes, int root = 0,
                           std::size_t max_bytes = kDefaultMaxObjectBytes);

}  // namespace lakerun::dist
