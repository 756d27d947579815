// The C++ rank of the launch benchmark on lakerun::dist: Init() (rendezvous through the launcher's store, Gloo
// process group) and one all-reduce. Prints the BENCH line of bench_rank.cc (CLOCK_REALTIME nanoseconds) plus
// Init()'s own timeline, so the driver can tell the launcher's share (spawning or forking the ranks, the store
// rendezvous) from the process group's (Gloo connecting every pair of ranks).
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
  options.backend = lakerun::dist::Backend::kGloo;
  options.timeout = std::chrono::seconds(120);
  lakerun::dist::Context& ctx = lakerun::dist::Init(options);
  const long long t_ready = NowNs();
  const double sum = lakerun::dist::AllReduceDouble(ctx, ctx.rank() + 1.0);
  const long long t_done = NowNs();
  const lakerun::dist::InitTimeline& t = ctx.init_timeline();
  std::printf("BENCH rank=%d t_main=%lld t_ready=%lld t_done=%lld sum=%g\n", ctx.rank(), t_main, t_ready, t_done, sum);
  std::printf("INIT rank=%d forked=%lld peers=%lld group=%lld\n", ctx.rank(), static_cast<long long>(t.forked_ns),
              static_cast<long long>(t.peers_arrived_ns), static_cast<long long>(t.group_ready_ns));
  std::fflush(stdout);
  return 0;
}
