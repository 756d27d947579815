// dist_init_probe: joins the job its environment describes (lakerun::dist::Init), all-reduces rank + 1 and prints
//   probe launcher=<name> rank=<r> world=<w> local=<l>/<lw> sum=<s>
//   probe backend=<gloo|nccl|none> device=<cpu|cuda:i>
// Exit codes: 0 success, 3 CommTimeout, 4 other lakerun::Error, 5 anything else. Used by dist_init_test.
// LAKERUN_PROBE_TIMEOUT_MS bounds every wait (default 20000); LAKERUN_PROBE_BACKEND sets InitOptions::backend.
// LAKERUN_PROBE_DDP_STEPS=N then trains a small model with DistributedDataParallel for N steps and prints
//   ddp transport=<GradientTransport()> checksum=<sum of the parameters>
// (LAKERUN_PROBE_DDP_SHM=0 turns shared memory off); LAKERUN_PROBE_EXIT_RANK=r makes rank r _exit(7) just before the
// backward of step LAKERUN_PROBE_EXIT_STEP (default 1), a peer dying in the middle of training.
#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/ddp.h>
#include <lakerun/dist/init.h>

#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != 0 ? std::atoi(value) : fallback;
}

void TrainWithDdp(lakerun::dist::Context& ctx, int steps) {
  at::manual_seed(ctx.rank() + 1);  // different initial weights: the constructor's broadcast must fix that
  auto net = std::make_shared<torch::nn::LinearImpl>(64, 8);
  lakerun::dist::DdpOptions options;
  options.shared_memory = EnvInt("LAKERUN_PROBE_DDP_SHM", 1) != 0;
  lakerun::dist::DistributedDataParallel ddp(ctx, net, options);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.01));
  const int exit_rank = EnvInt("LAKERUN_PROBE_EXIT_RANK", -1), exit_step = EnvInt("LAKERUN_PROBE_EXIT_STEP", 1);
  for (int step = 0; step < steps; ++step) {
    at::Tensor x = at::sin(at::arange(32 * 64, at::kFloat).reshape({32, 64})).mul(0.1 * (ctx.rank() + 1 + step));
    sgd.zero_grad();
    at::Tensor loss = net->forward(x).pow(2).mean();
    if (ctx.rank() == exit_rank && step == exit_step) _exit(7);
    loss.backward();
    sgd.step();
  }
  double checksum = 0;
  for (const at::Tensor& p : net->parameters()) checksum += p.sum().item<double>();
  std::printf("ddp transport=%s checksum=%.9g\n", ddp.GradientTransport().c_str(), checksum);
  std::fflush(stdout);
}

}  // namespace

int main() {
  try {
    lakerun::dist::InitOptions options;
    const char* timeout = std::getenv("LAKERUN_PROBE_TIMEOUT_MS");
    options.timeout = std::chrono::milliseconds(timeout ? std::atol(timeout) : 20000);
    if (const char* backend = std::getenv("LAKERUN_PROBE_BACKEND")) {
      options.backend = lakerun::dist::ParseBackend("LAKERUN_PROBE_BACKEND", backend);
    }
    lakerun::dist::Context& ctx = lakerun::dist::Init(options);
    int64_t sum = lakerun::dist::AllReduceInt64(ctx, ctx.rank() + 1);
    std::printf("probe launcher=%s rank=%d world=%d local=%d/%d sum=%lld\n", LauncherName(ctx.launcher()),
                ctx.rank(), ctx.world_size(), ctx.local_rank(), ctx.local_world_size(),
                static_cast<long long>(sum));
    std::printf("probe backend=%s device=%s\n", ToString(ctx.backend()), ctx.device().str().c_str());
    std::fflush(stdout);
    if (int steps = EnvInt("LAKERUN_PROBE_DDP_STEPS", 0); steps > 0) TrainWithDdp(ctx, steps);
    lakerun::dist::Barrier(ctx);
    lakerun::dist::Shutdown();
    return 0;
  } catch (const lakerun::CommTimeout& e) {
    std::printf("error CommTimeout: %s\n", e.what());
    return 3;
  } catch (const lakerun::Error& e) {
    std::printf("error Error: %s\n", e.what());
    return 4;
  } catch (const std::exception& e) {
    std::printf("error other: %s\n", e.what());
    return 5;
  }
}
