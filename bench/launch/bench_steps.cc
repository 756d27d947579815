// bench_launch_steps: a DDP-like step loop on lakerun::dist, timed inside the rank, for multinode_bench.py (the
// cost per collective of how the ranks were started: under `lakerun launch` node agents, or by hand).
//
// Each step is a linear layer's forward and weight gradient on a fixed batch (x: 32 x 1024, W: 1024 x 512, about
// 67 MFLOP), the mean all-reduce of the gradient (2 MiB of floats) and an SGD update. After --warmup untimed steps,
// --steps steps are timed one by one (steady clock); the rank prints
//   STEPS rank=<r> world=<w> steps=<n> median_us=<m> min_us=<a> max_us=<b> checksum=<sum of W>
// The checksum is the same on every rank when the all-reduces were (W starts equal everywhere, each rank's batch
// differs). usage: bench_launch_steps [--steps N] [--warmup N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lakerun/dist/collectives.h"
#include "lakerun/dist/init.h"

int main(int argc, char** argv) {
  int steps = 200, warmup = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) {
      steps = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--warmup") == 0) {
      warmup = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: bench_launch_steps [--steps N] [--warmup N]\n");
      return 2;
    }
  }
  if (steps < 1 || warmup < 0) {
    std::fprintf(stderr, "bench_launch_steps: --steps must be >= 1 and --warmup >= 0\n");
    return 2;
  }
  lakerun::dist::InitOptions options;
  options.backend = lakerun::dist::Backend::kGloo;
  options.timeout = std::chrono::seconds(120);
  lakerun::dist::Context& ctx = lakerun::dist::Init(options);

  at::Tensor w = at::sin(at::arange(1024 * 512, at::kFloat).reshape({1024, 512})).mul(0.01);
  const at::Tensor x = at::cos(at::arange(32 * 1024, at::kFloat).reshape({32, 1024})).mul(0.1 * (ctx.rank() + 1));
  std::vector<long long> step_us;
  step_us.reserve(steps);
  for (int step = 0; step < warmup + steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const at::Tensor out = at::mm(x, w);     // forward
    at::Tensor grad = at::mm(x.t(), out);    // d(0.5 |out|^2) / dW
    lakerun::dist::AllReduce(ctx, grad, lakerun::dist::ReduceOp::kMean);
    w.sub_(grad, 1e-4);
    const auto end = std::chrono::steady_clock::now();
    if (step >= warmup) {
      step_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(end - start).count());
    }
  }
  std::vector<long long> sorted = step_us;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  std::printf("STEPS rank=%d world=%d steps=%zu median_us=%.1f min_us=%lld max_us=%lld checksum=%.9g\n", ctx.rank(),
              ctx.world_size(), n, median, sorted.front(), sorted.back(), w.sum().item<double>());
  std::fflush(stdout);
  return 0;
}
