// The C++ rank of the launch benchmark: joins the job exactly as the launcher's contract says (a TCPStore client at
// MASTER_ADDR:MASTER_PORT, PrefixStore "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>", ProcessGroupGloo), does one
// all-reduce and prints, in CLOCK_REALTIME nanoseconds:
//   BENCH rank=<r> t_main=<entering main> t_ready=<process group created> t_done=<all-reduce finished> sum=<...>
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string Env(const char* name, const char* fallback = nullptr) {
  const char* v = std::getenv(name);
  if (v != nullptr) return v;
  if (fallback != nullptr) return fallback;
  std::fprintf(stderr, "bench_launch_rank: %s is not set (run me under a launcher)\n", name);
  std::exit(2);
}

}  // namespace

int main() {
  const long long t_main = NowNs();
  const int rank = std::stoi(Env("RANK"));
  const int world = std::stoi(Env("WORLD_SIZE"));
  const std::string addr = Env("MASTER_ADDR");
  const std::chrono::milliseconds timeout(std::chrono::seconds(120));

  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(std::stoi(Env("MASTER_PORT")));
  store_options.isServer = false;
  store_options.waitWorkers = false;
  store_options.timeout = timeout;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  store_options.useLibUV = false;  // a client's libuv flag only checks that libtorch has libuv (src/dist/c10d_compat.h)
#endif
  auto tcp = c10::make_intrusive<c10d::TCPStore>(addr, store_options);
  auto store = c10::make_intrusive<c10d::PrefixStore>(
      "/worker/attempt_" + Env("TORCHELASTIC_RESTART_COUNT", "0"), tcp);
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = timeout;
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(addr));
  auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
  const long long t_ready = NowNs();

  std::vector<at::Tensor> tensors = {at::full({1}, static_cast<double>(rank + 1))};
  group->allreduce(tensors)->wait();
  const long long t_done = NowNs();
  std::printf("BENCH rank=%d t_main=%lld t_ready=%lld t_done=%lld sum=%g\n", rank, t_main, t_ready, t_done,
              tensors[0].item<double>());
  std::fflush(stdout);
  return 0;
}
