#include "dist/context_impl.h"

#include <time.h>

#include <lakerun/base/choices.h>
#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>

#include "dist/cuda_device.h"
#include "dist/gloo_device.h"
#include "dist/gpu_sharing.h"
#include "dist/rendezvous.h"

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <unistd.h>

#include <cstdlib>
#endif

namespace lakerun::dist {
namespace {
constexpr NamedValue<Backend> kBackends[] = {
    {Backend::kAuto, "auto"}, {Backend::kGloo, "gloo"}, {Backend::kNccl, "nccl"}, {Backend::kNone, "none"}};
constexpr NamedValue<Backend> kRequestableBackends[] = {
    {Backend::kAuto, "auto"}, {Backend::kGloo, "gloo"}, {Backend::kNccl, "nccl"}};
}  // namespace

const char* ToString(Backend backend) { return NameOf(backend, kBackends); }
Backend ParseBackend(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kRequestableBackends);
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;
int Context::rank() const { return impl_->env.rank; }
int Context::world_size() const { return impl_->env.world_size; }
int Context::local_rank() const { return impl_->env.local_rank; }
int Context::local_world_size() const { return impl_->env.local_world_size; }
Launcher Context::launcher() const { return impl_->env.launcher; }
Backend Context::backend() const { return impl_->backend_kind; }
c10::Device Context::device() const { return impl_->device; }
std::chrono::milliseconds Context::timeout() const { return impl_->timeout; }
const std::string& Context::master_endpoint() const { return impl_->endpoint; }
const InitTimeline& Context::init_timeline() const { return impl_->timeline; }

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

namespace {

Backend ResolveBackend(Backend requested, int local_rank) {
  LAKERUN_CHECK_AS(ConfigError, requested != Backend::kNone,
                   "InitOptions::backend='none' is not a request: use auto, gloo or nccl");
#ifdef USE_C10D_NCCL
  bool cuda = c10::cuda::device_count() > 0;
#else
  bool cuda = false;
#endif
  if (requested == Backend::kAuto) return cuda ? Backend::kNccl : Backend::kGloo;
  if (requested == Backend::kNccl) {
    LAKERUN_CHECK_AS(ConfigError, cuda, "InitOptions::backend='nccl' but ",
#ifdef USE_C10D_NCCL
                     "no CUDA device is visible",
#else
                     "this libtorch was built without NCCL",
#endif
                     " (local rank ", local_rank, ")");
  }
  return requested;
}

#ifdef USE_C10D_NCCL
// This rank's GPU (ChooseCudaDevice), made current unless the caller opted out.
c10::Device UseRankDevice(const RankEnv& env, const InitOptions& options) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const auto index = static_cast<c10::DeviceIndex>(
      ChooseCudaDevice(env.local_rank, c10::cuda::device_count(), visible != nullptr ? visible : ""));
  if (options.set_cuda_device) c10::cuda::set_device(index);
  return c10::Device(c10::kCUDA, index);
}

// "0000:3c:00.0 of host n1": where a user finds the GPU.
std::string GpuName(c10::Device device) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return compat::CudaPciAddress(device.index()) + " of host " + (host[0] != '\0' ? host : "?");
}
#endif

}  // namespace

std::unique_ptr<Context> CreateContext(const RankEnv& env, compat::StorePtr store, const InitOptions& options) {
  LAKERUN_CHECK(options.timeout.count() > 0, "InitOptions::timeout must be positive, got ", options.timeout.count(),
                " ms");
  auto impl = std::make_unique<Context::Impl>();
  impl->env = env;
  impl->timeout = options.timeout;
  if (env.world_size == 1) {
#ifdef USE_C10D_NCCL
    // No process group, but tensors still belong on this rank's GPU.
    if (ResolveBackend(options.backend, env.local_rank) == Backend::kNccl) impl->device = UseRankDevice(env, options);
#endif
    return std::make_unique<Context>(std::move(impl));
  }

  LAKERUN_INTERNAL_ASSERT(store, "a store is needed at world size ", env.world_size);
  impl->endpoint = env.master_addr.empty() ? "<in-process store>"
                                           : env.master_addr + ":" + std::to_string(StorePort(env));
  impl->backend_kind = ResolveBackend(options.backend, env.local_rank);
  bool hosts_store = !env.use_agent_store && env.rank == 0 && !env.master_addr.empty();
#ifdef USE_C10D_NCCL
  c10::Device gpu(c10::kCPU);
  if (impl->backend_kind == Backend::kNccl) {
    gpu = UseRankDevice(env, options);
    PublishRankGpu(*store, env.rank, compat::CudaUuid(gpu.index()), GpuName(gpu));
  }
#endif
  WaitForPeers(*store, env.rank, env.world_size, options.timeout, impl->endpoint, hosts_store);
  impl->timeline.peers_arrived_ns = RealtimeNs();
  // Under `lakerun launch`: every blocking collective from here on is marked for the launcher's hang detection.
  impl->progress = rdzv::ProgressReporter::FromEnvironment();
#ifdef USE_C10D_NCCL
  if (impl->backend_kind == Backend::kNccl) {
    // Every rank reads the same verdict, so all take the same branch.
    const std::string shared = SharedGpuVerdict(*store);
    if (shared.empty()) {
      impl->device = gpu;
    } else {
      const std::string why = StrCat("NCCL needs a GPU of its own for every rank, but ", shared);
      LAKERUN_CHECK_AS(ConfigError, options.backend == Backend::kAuto, "rank ", env.rank, " of ", env.world_size,
                       ": InitOptions::backend='nccl': ", why,
                       "; start at most one rank per GPU (`lakerun launch --use-gpu` caps -n at the GPUs visible), "
                       "or use backend 'gloo'");
      if (env.rank == 0) {
        LAKERUN_LOG(Warning) << why << "; backend 'auto' uses Gloo on the CPU instead. Start at most one rank per "
                             << "GPU for NCCL (`lakerun launch --use-gpu` caps -n at the GPUs visible), or set "
                             << "backend 'gloo' to keep this choice without the warning.";
      }
      impl->backend_kind = Backend::kGloo;
    }
  }
#endif
  // The backend's own keys live apart from lakerun's rendezvous keys.
  compat::StorePtr pg_store = compat::MakePrefixStore("lakerun/pg/0", store);
  try {
    if (impl->backend_kind == Backend::kGloo) {
      GlooDeviceChoice choice = ChooseGlooDevices(env, options.gloo_interface);
      LAKERUN_LOG(Debug) << "rank " << env.rank << ": Gloo device from " << choice.description;
      impl->backend = compat::MakeGlooBackend(pg_store, env.rank, env.world_size, choice.devices, options.timeout);
    } else {
#ifdef USE_C10D_NCCL
      impl->backend = compat::MakeNcclBackend(pg_store, env.rank, env.world_size, options.timeout);
#endif
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    LAKERUN_THROW(DistError, "rank ", env.rank, " of ", env.world_size, ": creating the ", ToString(impl->backend_kind),
                  " process group through ", impl->endpoint, " failed: ", compat::Describe(e));
  }
  impl->timeline.group_ready_ns = RealtimeNs();
  impl->store = std::move(store);
  return std::make_unique<Context>(std::move(impl));
}

void RethrowCollectiveError(const Context& ctx, const std::string& what, const std::exception& error) {
  std::string message = error.what();
  bool timed_out = message.find("imed out") != std::string::npos || message.find("Timeout") != std::string::npos ||
                   message.find("timeout") != std::string::npos;
  std::string text = StrCat("rank ", ctx.rank(), " of ", ctx.world_size(), ": ", what, " failed",
                            timed_out ? StrCat(" (timeout ", ctx.timeout().count(), " ms)") : std::string(), ": ",
                            message);
  if (timed_out) throw CommTimeout(text);
  throw DistError(text);
}

}  // namespace lakerun::dist
