// Peak memory per rank for a large model's state under DDP, ZeRO-1, ZeRO-2 and ZeRO-3 (ShardedDataParallel), with
// Adam.
//
//   bench_dist_sharded_memory [--millions M] [--ranks N] [--steps S] [--contenders ddp,zero1,zero2,zero3]
//                             [--limit-bytes-per-param B]
//
// Default: an MLP of 8 square layers of 3,584 (102.8 M parameters, fp32), 4 ranks on this host, 3 steps of a batch
// of 8. For each contender the program starts N fresh rank processes (so peaks do not mix), and each rank reports
// its peak resident set (VmHWM) above what it held after lakerun::dist::Init and libtorch's start (the baseline),
// before the model existed. Rank 0 prints the largest rank's figure as bytes per parameter beside what ZeRO's paper
// predicts for Adam in fp32 (parameters 4, gradients 4, Adam's two moments 8; level 1 divides the moments by N,
// level 2 the gradients too, level 3 the parameters too), plus what each keeps for transport (DDP: its buckets; ZeRO:
// chunk copies and slots; level 3 also the units gathered at once: each layer is a unit, at most 3 hold values).
//
// With --limit-bytes-per-param B, each rank caps its private writable memory (RLIMIT_DATA: heap, anonymous mappings,
// thread stacks; not the address space glibc only reserves) at what it holds after the baseline plus B bytes per
// parameter of the model: a contender whose state needs more fails to allocate, and the program
// exits non-zero naming it (the test dist.zero3_trains_under_a_memory_limit runs DDP and ZeRO-3 under such a cap).
// The model is built whole on every rank before it is wrapped (4 bytes per parameter for a moment, also under
// ZeRO-3), so B must leave room for that.
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/ddp.h>
#include <lakerun/dist/init.h>
#include <lakerun/dist/sharded.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include <malloc.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../common/local_ranks.h"

namespace {

namespace dist = lakerun::dist;

constexpr const char* kContenderVariable = "LAKERUN_BENCH_CONTENDER";
constexpr int kLayers = 8;

// VmRSS or VmHWM of this process, in bytes.
int64_t StatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string name;
  int64_t kib = 0;
  std::string unit;
  while (status >> name) {
    if (name == field + ":") {
      status >> kib >> unit;
      return kib * 1024;
    }
    std::getline(status, unit);
  }
  return -1;
}

// The smallest width (a multiple of 64) at which kLayers square layers hold at least `millions` million parameters.
int64_t Width(double millions) {
  int64_t width = 64;
  while (static_cast<double>(kLayers) * static_cast<double>(width * width + width) < millions * 1e6) width += 64;
  return width;
}

// Caps this process's private writable memory at what it has now plus `budget` bytes.
void LimitDataSegment(int64_t budget) {
  const int64_t data = StatusBytes("VmData");
  struct rlimit limit;
  limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(data + budget);
  if (::setrlimit(RLIMIT_DATA, &limit) != 0) std::perror("setrlimit(RLIMIT_DATA)");
}

int RunRank(double millions, int steps, double limit_bytes_per_param) {
  // Tensors of 1 MB and more are mapped and unmapped on their own: glibc's dynamic threshold would otherwise keep
  // freed temporaries in the heap, and the resident set would count them as if they were still held.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  at::set_num_threads(1);
  const std::string contender = std::getenv(kContenderVariable);
  dist::InitOptions options;
  options.timeout = std::chrono::minutes(10);
  dist::Context& ctx = dist::Init(options);
  at::manual_seed(7);
  const int64_t width = Width(millions);
  at::Tensor x = at::randn({8, width});
  at::Tensor y = at::randn({8, width});
  // OpenBLAS maps its 128 MB work buffer at the first matrix product: before the baseline, not inside the model's
  // figures (nor a limit's budget, where OpenBLAS would retry the mapping forever).
  (void)at::mm(at::ones({512, 512}), at::ones({512, 512}));
  dist::Barrier(ctx);
  const int64_t baseline = StatusBytes("VmRSS");
  if (limit_bytes_per_param > 0) {
    LimitDataSegment(static_cast<int64_t>(limit_bytes_per_param * kLayers * static_cast<double>(width * width + width)));
  }

  auto net = std::make_shared<torch::nn::SequentialImpl>();
  for (int i = 0; i < kLayers; ++i) net->push_back(torch::nn::Linear(width, width));
  int64_t params = 0;
  for (const auto& p : net->parameters()) params += p.numel();
  auto adam = std::make_shared<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-4));
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  std::unique_ptr<dist::ShardedDataParallel> sdp;
  // Gradients and parameters travel through Gloo, as between hosts: a rank's resident set then counts its own
  // buffers only (shared-memory slots would count once in every rank that maps them).
  if (contender == "ddp") {
    dist::DdpOptions ddp_options;
    ddp_options.shared_memory = false;
    ddp = std::make_unique<dist::DistributedDataParallel>(ctx, net, ddp_options);
  } else {
    dist::ShardedOptions sharded;
    sharded.shared_memory = false;
    sharded.stage = contender == "zero1"   ? dist::ZeroStage::kOptimizerState
                    : contender == "zero2" ? dist::ZeroStage::kGradients
                                           : dist::ZeroStage::kParameters;
    sharded.unit_min_params = width * width;  // level 3: each layer is a unit
    std::vector<std::shared_ptr<torch::optim::Optimizer>> optimizers{adam};
    sdp = std::make_unique<dist::ShardedDataParallel>(ctx, net, optimizers, sharded);
  }
  const int64_t wrapped = StatusBytes("VmHWM") - baseline;  // the peak of building and wrapping the model
  for (int step = 0; step < steps; ++step) {
    adam->zero_grad();
    at::mse_loss(net->forward(x), y).backward();
    if (sdp) {
      sdp->Step();
    } else {
      adam->step();
    }
  }
  const int64_t peak = StatusBytes("VmHWM") - baseline;
  const int64_t held = StatusBytes("VmRSS") - baseline;
  int64_t transport = 0;
  if (sdp) transport = sdp->Memory().chunk_bytes + sdp->Memory().transport_bytes;
  if (sdp && sdp->stage() == dist::ZeroStage::kParameters) transport += sdp->Memory().peak_resident_parameter_bytes;
  if (ddp) transport = params * 4;  // its buckets: one flat buffer covering every parameter
  const std::vector<std::string> peaks = dist::AllGatherBytes(ctx, std::to_string(peak));
  const std::vector<std::string> helds = dist::AllGatherBytes(ctx, std::to_string(held));
  const std::vector<std::string> wrappeds = dist::AllGatherBytes(ctx, std::to_string(wrapped));
  if (ctx.rank() == 0) {
    int64_t largest = 0, largest_held = 0;
    for (const std::string& p : peaks) largest = std::max<int64_t>(largest, std::atoll(p.c_str()));
    for (const std::string& h : helds) largest_held = std::max<int64_t>(largest_held, std::atoll(h.c_str()));
    int64_t largest_wrapped = 0;
    for (const std::string& w : wrappeds) largest_wrapped = std::max<int64_t>(largest_wrapped, std::atoll(w.c_str()));
    const int n = ctx.world_size();
    const double predicted = contender == "ddp"     ? 16.0
                             : contender == "zero1" ? 4.0 + 4.0 + 8.0 / n
                             : contender == "zero2" ? 4.0 + 4.0 / n + 8.0 / n
                                                    : 16.0 / n;
    std::printf("%-6s %5.1f M params, %d ranks, bytes/param per rank (largest rank): peak %5.2f (%5.2f while "
                "building and wrapping), held after the steps %5.2f; ZeRO predicts %5.2f (parameters, gradients, "
                "Adam state) + transport and copies %5.2f\n",
                contender.c_str(), params / 1e6, n, static_cast<double>(largest) / params,
                static_cast<double>(largest_wrapped) / params, static_cast<double>(largest_held) / params, predicted,
                static_cast<double>(transport) / params);
    std::fflush(stdout);
  }
  dist::Barrier(ctx);
  dist::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double millions = 100, limit = 0;
  int ranks = 4, steps = 3;
  std::string contenders = "ddp,zero1,zero2,zero3";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--millions") millions = std::atof(argv[i + 1]);
    if (std::string(argv[i]) == "--ranks") ranks = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--steps") steps = std::max(1, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--contenders") contenders = argv[i + 1];
    if (std::string(argv[i]) == "--limit-bytes-per-param") limit = std::atof(argv[i + 1]);
  }
  try {
    if (std::getenv("RANK") != nullptr) return RunRank(millions, steps, limit);
    int failed = 0;
    for (std::size_t at = 0; at < contenders.size();) {
      const std::size_t comma = std::min(contenders.find(',', at), contenders.size());
      const std::string contender = contenders.substr(at, comma - at);
      at = comma + 1;
      if (contender != "ddp" && contender != "zero1" && contender != "zero2" && contender != "zero3") {
        std::fprintf(stderr, "--contenders: '%s' is not one of ddp, zero1, zero2, zero3\n", contender.c_str());
        return 2;
      }
      ::setenv(kContenderVariable, contender.c_str(), 1);
      const int rc = lakerun::bench::RunLocalRanks(ranks, argv, std::chrono::minutes(20));
      if (rc != 0) std::printf("%-6s FAILED (exit %d)\n", contender.c_str(), rc);
      std::fflush(stdout);
      failed |= rc;
    }
    return failed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
