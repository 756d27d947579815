// fashion_mnist_ddp: PyTorch's MNIST CNN trained on Fashion-MNIST, on one process or on every rank of a job.
//
//   ./fashion_mnist_ddp                                # one process
//   lakerun launch -n 2 -- ./fashion_mnist_ddp         # two ranks, gradients averaged with lakerun's DDP
//
// See examples/fashion_mnist/README.md and --help.
#include <dlfcn.h>
#include <sys/resource.h>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dataset.h"
#include "experiment_log.h"
#include "lakerun/base/error.h"
#include "lakerun/base/run_main.h"
#include "lakerun/dist/collectives.h"
#include "lakerun/dist/init.h"
#include "lakerun/dist/lr_scaling.h"
#include "options.h"
#include "train_loop.h"

namespace lakerun::examples {
namespace {

// --threads, else OMP_NUM_THREADS, else 1 (one process per core is faster than threads on a busy box).
int ResolveThreads(const ExampleOptions& options) {
  if (options.threads > 0) return options.threads;
  if (const char* env = std::getenv("OMP_NUM_THREADS"); env != nullptr && *env) {
    const int n = std::atoi(env);
    LAKERUN_CHECK_AS(ConfigError, n >= 1, "OMP_NUM_THREADS must be a positive integer, got '", env, "'");
    return n;
  }
  return 1;
}

void SetThreads(int threads) {
  at::set_num_threads(threads);
  // Debian's libtorch calls BLAS through libblas.so.3; when that is OpenBLAS's pthread build it starts one thread
  // per core unless told otherwise, which oversubscribes the cores when every core runs a rank.
  using SetFn = void (*)(int);
  if (auto set = reinterpret_cast<SetFn>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

// The reference for reported times: BENCH_T0 (Unix seconds, set by a benchmark driver before it started the
// command), else now.
std::chrono::system_clock::time_point StartTime() {
  if (const char* env = std::getenv("BENCH_T0"); env != nullptr && *env) {
    char* end = nullptr;
    const double seconds = std::strtod(env, &end);
    LAKERUN_CHECK_AS(ConfigError, end != env && *end == '\0' && seconds > 0, "BENCH_T0 must be Unix seconds, got '",
                     env, "'");
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds)));
  }
  return std::chrono::system_clock::now();
}

double PeakRssMb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::string Json(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

int Run(int argc, char** argv) {
  const auto start = StartTime();
  const ExampleOptions options = ParseOptions(argc, argv);
  if (options.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  const int threads = ResolveThreads(options);
  SetThreads(threads);

  dist::Context& ctx = dist::Init();
  FashionMnistOptions data_options;
  data_options.data_dir = options.data_dir;
  data_options.mean = options.mean;
  data_options.std = options.std;
  const FashionMnist data = LoadFashionMnist(data_options);
  if (ctx.rank() == 0) {
    std::printf("fashion_mnist_ddp: %d rank(s) (launcher %s, backend %s), %d thread(s) per rank, "
                "batch %lld per rank\n",
                ctx.world_size(), dist::LauncherName(ctx.launcher()), dist::ToString(ctx.backend()), threads,
                static_cast<long long>(options.batch_size));
    std::fflush(stdout);
  }
  ExperimentLog experiment(options, ctx.world_size(),
                           dist::ScaleLearningRate(options.lr, ctx.world_size(), options.scale_lr));
  std::shared_ptr<torch::nn::Module> trained;
  const TrainResult result = Train(options, ctx, data, start, &experiment, &trained);
  if (experiment.active() && trained) {
    const std::string where = experiment.Finish(*trained);
    std::printf("Tracked: %s\n", where.c_str());
    std::fflush(stdout);
  }

  // Every rank's peak RSS, gathered on every rank (cheap: a few bytes).
  const std::vector<std::string> rss = dist::AllGatherBytes(ctx, Json(PeakRssMb()));
  if (ctx.rank() == 0) {
    std::string rss_list;
    for (size_t r = 0; r < rss.size(); ++r) rss_list += (r ? "," : "") + rss[r];
    std::printf("Steady throughput: %.1f samples/s (%d rank(s)), %.2f ms/step, %.2f CPU ms/step; "
                "peak RSS MB per rank: [%s]\n",
                result.steady_samples_per_s, result.world_size, result.steady_step_ms, result.cpu_ms_per_step,
                rss_list.c_str());
    std::printf("RESULT {\"impl\":\"lakerun\",\"world_size\":%d,\"threads\":%d,\"lr\":%s,\"batch_size\":%lld,"
                "\"steps\":%lld,\"epochs_completed\":%lld,\"test_loss\":%s,\"test_accuracy\":%s,"
                "\"steady_samples_per_s\":%s,\"steady_step_ms\":%s,\"cpu_ms_per_step\":%s,\"train_s\":%s,"
                "\"first_step_done_s\":%s,\"time_to_target_s\":%s,\"total_s\":%s,\"peak_rss_mb\":[%s]}\n",
                result.world_size, threads, Json(result.lr).c_str(), static_cast<long long>(options.batch_size),
                static_cast<long long>(result.steps), static_cast<long long>(result.epochs_completed),
                Json(result.test.average_loss).c_str(), Json(result.test.accuracy()).c_str(),
                Json(result.steady_samples_per_s).c_str(), Json(result.steady_step_ms).c_str(),
                Json(result.cpu_ms_per_step).c_str(), Json(result.train_seconds).c_str(),
                Json(result.first_step_done_s).c_str(),
                result.time_to_target_s ? Json(*result.time_to_target_s).c_str() : "null",
                Json(std::chrono::duration<double>(std::chrono::system_clock::now() - start).count()).c_str(),
                rss_list.c_str());
    std::fflush(stdout);
  }
  dist::Shutdown();
  return 0;
}

}  // namespace
}  // namespace lakerun::examples

int main(int argc, char** argv) {
  return lakerun::RunMain(argc, argv, lakerun::examples::Run);  // an error: a message and exit code 1
}
