// The C++ rank of the launch benchmark on lakerun::dist: Init() (rendezvous through the launcher's store, Gloo
// process group) and one all-reduce; prints the same BENCH line as bench_rank.cc (CLOCK_REALTIME nanoseconds).
#include <time.h>

#include <cstdio>

#include "lakerun/dist/collectives.h"
#include "lakerun/dist/init.h"

namespace {
long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
}  // namespace

int main() {
  const long long t_main = NowNs();
  lakerun::dist::InitOptions options;
  options.backend = "gloo";
  options.timeout = std::chrono::seconds(120);
  lakerun::dist::Context& ctx = lakerun::dist::Init(options);
  const long long t_ready = NowNs();
  const double sum = lakerun::dist::AllReduceDouble(ctx, ctx.rank() + 1.0);
  const long long t_done = NowNs();
  std::printf("BENCH rank=%d t_main=%lld t_ready=%lld t_done=%lld sum=%g\n", ctx.rank(), t_main, t_ready, t_done, sum);
  std::fflush(stdout);
  return 0;
}
