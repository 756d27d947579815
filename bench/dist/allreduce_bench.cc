// All-reduce through lakerun::dist::AllReduce vs a raw c10d ProcessGroupGloo, 2 ranks on loopback, float32.
//
//   bench_dist_allreduce [--reps-scale X]
//
// The program starts its two ranks itself (re-executing with RANK/WORLD_SIZE/MASTER_* set). Each rank has both a
// lakerun Context and a raw ProcessGroupGloo (own store prefix, same Gloo device: the loopback address), and for
// every size alternates one lakerun and one raw all-reduce per repetition, so load changes hit both alike.
// Rank 0 prints per-size medians and three ratios raw_time / lakerun_time (1.00 = parity; target >= 0.95):
// of the medians, the median of per-repetition pairs (robust to load drifting during the run), and of the best runs.
// A third contender, DDP's shared-memory transport (SharedMemoryAllReduce, used when every rank is on one host),
// runs in the same repetitions: Start + Finish + copying the sum back into this rank's slot (in place, like Gloo);
// its column "raw/shm" is raw_time / shm_time of the medians.
#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/init.h>

#include "dist/c10d_compat.h"
#include "dist/context_impl.h"
#include "dist/shared_memory_allreduce.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/local_ranks.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int RunRank(double scale) {
  at::set_num_threads(1);
  lakerun::dist::InitOptions options;
  options.timeout = std::chrono::minutes(2);
  lakerun::dist::Context& ctx = lakerun::dist::Init(options);
  auto& impl = ctx.impl();
  auto raw = lakerun::dist::compat::MakeGlooBackend(
      lakerun::dist::compat::MakePrefixStore("bench/raw", impl.store), ctx.rank(), ctx.world_size(),
      {::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")}, options.timeout);

  struct Size {
    const char* name;
    int64_t bytes;
    int reps;
  };
  const Size sizes[] = {{"4 KB", 4 << 10, 400},   {"64 KB", 64 << 10, 300}, {"1 MB", 1 << 20, 100},
                        {"16 MB", 16 << 20, 20},  {"64 MB", 64 << 20, 8},   {"256 MB", 256 << 20, 5}};
  if (ctx.rank() == 0) {
    std::printf("all-reduce, 2 ranks, Gloo on loopback, float32; median of interleaved reps\n");
    std::printf("%-8s %6s %12s %12s %10s %10s %11s %11s %11s %10s %9s\n", "size", "reps", "lakerun us", "raw us",
                "lr GB/s", "raw GB/s", "ratio med", "ratio pair", "ratio best", "shm us", "raw/shm");
  }
  for (const Size& s : sizes) {
    int reps = std::max(3, static_cast<int>(s.reps * scale));
    at::Tensor t = at::zeros({s.bytes / 4}, at::kFloat);  // zeros: sums stay finite across reps
    std::vector<double> ours, theirs, pairs;  // pairs: raw / lakerun of the two runs of one repetition
    std::vector<double> shm_times;
    std::string why_not;
    auto shm = lakerun::dist::SharedMemoryAllReduce::Create(ctx, {{at::kFloat, s.bytes / 4}}, &why_not);
    LAKERUN_CHECK(shm != nullptr, "shared-memory all-reduce unavailable: ", why_not);
    auto shm_allreduce = [&] {
      shm->Start(0);
      shm->Finish(0);
      shm->input(0).copy_(shm->sum(0));
    };
    for (int warm = 0; warm < 2; ++warm) {
      lakerun::dist::AllReduce(ctx, t);
      std::vector<at::Tensor> v{t};
      raw->allreduce(v)->wait();
      shm_allreduce();
    }
    for (int i = 0; i < reps; ++i) {
      // Alternate which goes first so neither always follows the other.
      for (int k = 0; k < 2; ++k) {
        bool lakerun_turn = (i + k) % 2 == 0;
        auto start = Clock::now();
        if (lakerun_turn) {
          lakerun::dist::AllReduce(ctx, t);
        } else {
          std::vector<at::Tensor> v{t};
          raw->allreduce(v)->wait(options.timeout);
        }
        double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        (lakerun_turn ? ours : theirs).push_back(us);
      }
      pairs.push_back(theirs.back() / ours.back());
      auto start = Clock::now();
      shm_allreduce();
      shm_times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    double c = lakerun::dist::AllReduceDouble(ctx, Median(shm_times), lakerun::dist::ReduceOp::kMax);
    // Rank 0 reports the slower rank's view: reduce each median with max.
    double a = lakerun::dist::AllReduceDouble(ctx, Median(ours), lakerun::dist::ReduceOp::kMax);
    double b = lakerun::dist::AllReduceDouble(ctx, Median(theirs), lakerun::dist::ReduceOp::kMax);
    double pair = lakerun::dist::AllReduceDouble(ctx, Median(pairs), lakerun::dist::ReduceOp::kMean);
    double best_a = lakerun::dist::AllReduceDouble(ctx, *std::min_element(ours.begin(), ours.end()),
                                                   lakerun::dist::ReduceOp::kMax);
    double best_b = lakerun::dist::AllReduceDouble(ctx, *std::min_element(theirs.begin(), theirs.end()),
                                                   lakerun::dist::ReduceOp::kMax);
    if (ctx.rank() == 0) {
      std::printf("%-8s %6d %12.1f %12.1f %10.3f %10.3f %11.3f %11.3f %11.3f %10.1f %9.2f\n", s.name, reps, a, b,
                  s.bytes / a / 1e3, s.bytes / b / 1e3, b / a, pair, best_b / best_a, c, b / c);
      std::fflush(stdout);
    }
  }
  lakerun::dist::Barrier(ctx);
  lakerun::dist::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double scale = 1.0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--reps-scale") scale = std::atof(argv[i + 1]);
  }
  try {
    if (std::getenv("RANK") == nullptr) return lakerun::bench::RunLocalRanks(2, argv);
    return RunRank(scale);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
