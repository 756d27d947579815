// What a Context holds: this rank's place in the job, the store, and the c10d backend collectives run on.
#pragma once

#include <lakerun/dist/init.h>
#include <lakerun/rdzv/progress.h>

#include "dist/c10d_compat.h"
#include "dist/rank_env.h"

#include <memory>
#include <string>

namespace lakerun::dist {

class Context::Impl {
 public:
  RankEnv env;
  Backend backend_kind = Backend::kNone;
  c10::Device device{c10::kCPU};
  std::chrono::milliseconds timeout{0};
  std::string endpoint;
  compat::StorePtr store;      // null at world size 1
  compat::BackendPtr backend;  // null at world size 1
  InitTimeline timeline;
  /// This rank's slot on its launcher's progress board (null when not under `lakerun launch`, or at world size 1).
  std::unique_ptr<rdzv::ProgressReporter> progress;
};

/// CLOCK_REALTIME in nanoseconds (InitTimeline's clock).
int64_t RealtimeNs();

/// Builds a Context over an existing store: checks every peer arrived, then creates the backend (Gloo, or NCCL
/// when options.backend asks for it or "auto" finds CUDA). Tests pass a shared HashStore and one thread per rank.
std::unique_ptr<Context> CreateContext(const RankEnv& env, compat::StorePtr store, const InitOptions& options);

/// InvalidArgument naming `what` and the rank when `tensor` is not on the device the group moves (a CPU tensor on an
/// NCCL group), before c10d fails with a message that names neither.
void CheckDeviceFor(const Context& ctx, const at::Tensor& tensor, const char* what);

/// Wraps an exception from c10d into DistError / CommTimeout naming the operation and the rank.
[[noreturn]] void RethrowCollectiveError(const Context& ctx, const std::string& what, const std::exception& error);

}  // namespace lakerun::dist
