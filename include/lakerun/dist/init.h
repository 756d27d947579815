// Joining a distributed job: find out where this process runs, rendezvous with its peers, create the process group.
//
//   lakerun::dist::Context& ctx = lakerun::dist::Init();          // reads the environment once
//   if (ctx.rank() == 0) ...;  model->to(ctx.device());
//
// Init() detects the engine from the environment, in this order (docs/dist.md has every variable; the detection is
// lakerun::DetectRankEnvironment, lakerun/base/rank_environment.h, shared with tracking):
//   1. lakerun's launcher (LAKERUN_LAUNCHER=1)   2. torchrun / plain env (RANK + WORLD_SIZE)
//   3. Open MPI (OMPI_COMM_WORLD_*)              4. MPICH / Intel MPI (PMI_RANK + PMI_SIZE)
//   5. a Slurm job step (SLURM_PROCID with SLURM_STEP_ID, not the batch step)
//   6. nothing: a single process (world size 1, no store, no process group).
// MPI comes before Slurm because `salloc mpirun` ranks inherit the MPI daemons' Slurm variables.
//
// Every wait is bounded by InitOptions::timeout: a peer that never arrives is a CommTimeout naming the missing ranks.
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "lakerun/base/rank_environment.h"

namespace lakerun::dist {

/// Who started this process (decides where rank, world size and the rendezvous address come from); detected by
/// lakerun::DetectRankEnvironment (lakerun/base/rank_environment.h), which tracking uses too.
using Launcher = ::lakerun::Launcher;
/// "none", "lakerun", "torchrun", "openmpi", "pmi", "slurm".
using ::lakerun::LauncherName;

/// The process group's backend: kAuto (NCCL when CUDA is available and compiled in, else Gloo), kGloo, kNccl; a
/// job of one process has none (kNone). Spelled "auto", "gloo", "nccl", "none", as torch.distributed does.
enum class Backend { kAuto, kGloo, kNccl, kNone };
const char* ToString(Backend backend);
/// Reads "auto", "gloo" or "nccl" (from a flag, a variable, a config string). Throws ConfigError naming `what`,
/// listing the choices.
Backend ParseBackend(std::string_view what, std::string_view text);

struct InitOptions {
  /// Bounds connecting to the store, waiting for peers and every collective.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  /// kAuto, kGloo or kNccl (kNone is not a request).
  Backend backend = Backend::kAuto;
  /// Gloo's network device when GLOO_SOCKET_IFNAME is not set: an interface name ("eth0") or a local IP address.
  /// Empty: the local address that routes to MASTER_ADDR.
  std::string gloo_interface;
  /// With a CUDA backend, make this rank's GPU the current device: cuda:0 when the rank sees one GPU (`lakerun launch
  /// --use-gpu` gives each rank its own), else cuda:LOCAL_RANK (every GPU of the node visible, as under torchrun).
  bool set_cuda_device = true;
};

/// One rank's membership of a job: its place in the job and the process group collectives run on.
/// Created by Init(); collectives (collectives.h) and DistributedDataParallel (ddp.h) take it by reference.
/// When this rank passed each step of Init(), in CLOCK_REALTIME nanoseconds (comparable across the processes of one
/// host); 0 for a step not taken (world size 1 has no store or group). For diagnosing slow start-up.
struct InitTimeline {
  int64_t entered_ns = 0;          ///< Init() called (under fork start: in the template, before the fork)
  int64_t forked_ns = 0;           ///< past the fork point: this rank's process exists (= entered without fork start)
  int64_t store_connected_ns = 0;  ///< connected to the rendezvous store
  int64_t peers_arrived_ns = 0;    ///< every rank has announced itself in the store
  int64_t group_ready_ns = 0;      ///< the process group is created (Gloo: every pair of ranks connected)
};

class Context {
 public:
  class Impl;
  explicit Context(std::unique_ptr<Impl> impl);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int rank() const;
  int world_size() const;
  /// Rank among the processes on this node, and their number.
  int local_rank() const;
  int local_world_size() const;
  Launcher launcher() const;
  /// kGloo or kNccl; kNone at world size 1.
  Backend backend() const;
  /// Where this rank's tensors live: cuda:local_rank with NCCL, else cpu.
  c10::Device device() const;
  /// The timeout every collective of this context is bounded by.
  std::chrono::milliseconds timeout() const;
  /// The rendezvous endpoint ("host:port"); empty at world size 1.
  const std::string& master_endpoint() const;
  /// When Init() passed each of its steps on this rank.
  const InitTimeline& init_timeline() const;

  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Detects the environment, connects to the rendezvous store, checks that every peer arrived and creates the
/// process group. Idempotent: a second call returns the same Context (its options are ignored).
/// Throws ConfigError for inconsistent variables (naming the variable and value), CommTimeout when peers or the
/// store do not show up within options.timeout, DistError when the process group cannot be created.
Context& Init(const InitOptions& options = {});
/// True once Init() succeeded and until Shutdown().
bool IsInitialized();
/// The context Init() created; throws DistError if Init() was not called.
Context& CurrentContext();
/// Destroys the global context (process group, store connection). Safe to call when not initialized.
void Shutdown();

}  // namespace lakerun::dist
