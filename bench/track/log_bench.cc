// track_bench: what logging 100,000 metric points costs the training thread, and how long until they are stored.
//
//   track_bench [--points N]
//
// Four measurements in one run, on this machine:
//   file store, lakerun (async, batched)  vs  file store, one synchronous append per point (how mlflow.log_metric
//                                             writes to a file store: open, append, close on the caller's thread)
//   HTTP,       lakerun (async, log-batch) vs  HTTP, one synchronous log-metric request per point
// The HTTP server is an in-process cpp-httplib stub on 127.0.0.1 that counts the metric objects in each body, so
// the figures are the client's cost plus loopback, not an MLflow server's. "calling thread" is the time spent in
// LogMetric calls; "durable" is until Flush() returned (file store: appended; HTTP: acknowledged by the server).
// The target is 100,000 points in under 1 s. Synchronous peers run on fewer points and are scaled per point.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include "lakerun/base/file_system.h"
#include "lakerun/track/store.h"
#include "lakerun/track/tracker.h"
#include "track/test_http_server.h"

using namespace lakerun::track;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of the calling thread: on a shared machine wall time also counts time spent waiting for a core.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Figures {
  double calling_ms = 0;
  double calling_cpu_ms = 0;
  double durable_ms = 0;
};

Figures LogAsync(const std::string& uri, long points) {
  TrackerOptions options;
  options.handle_signals = false;
  options.experiment_name = "bench";
  options.detect_git_commit = false;
  Tracker tracker(uri, options);
  lakerun::track::Run run = tracker.StartRun();
  const double cpu_start = ThreadCpuMs();
  const auto start = Clock::now();
  for (long i = 0; i < points; ++i) run.LogMetric("train/loss", 1.0 / static_cast<double>(i + 1), i);
  const auto logged = Clock::now();
  const double cpu_logged = ThreadCpuMs();
  run.Flush();
  const auto flushed = Clock::now();
  run.End();
  return {Ms(logged - start), cpu_logged - cpu_start, Ms(flushed - start)};
}

// One store call per point on the calling thread.
double LogSyncPerPoint(const std::string& uri, long points) {
  auto store = OpenStore(uri);
  std::string exp;
  if (auto e = store->GetExperimentByName("bench-sync")) {
    exp = e->experiment_id;
  } else {
    exp = store->CreateExperiment("bench-sync");
  }
  CreateRunRequest request;
  request.experiment_id = exp;
  const RunInfo run = store->CreateRun(request);
  const auto start = Clock::now();
  for (long i = 0; i < points; ++i) {
    store->LogBatch(run.run_id, {{"train/loss", 1.0 / static_cast<double>(i + 1), 1795336210725 + i, i}}, {}, {});
  }
  return Ms(Clock::now() - start);
}

void Report(const char* what, long points, const Figures& f, double sync_ms, long sync_points) {
  const double sync_per_point_us = sync_ms * 1000.0 / static_cast<double>(sync_points);
  const double sync_scaled_ms = sync_per_point_us * static_cast<double>(points) / 1000.0;
  std::printf("%-10s lakerun async: calling thread %8.1f ms wall, %.1f ms CPU (%.2f us/point), durable after "
              "%8.1f ms; target 1000 ms: %s (%.1fx)\n",
              what, f.calling_ms, f.calling_cpu_ms, f.calling_cpu_ms * 1000.0 / static_cast<double>(points),
              f.durable_ms, f.durable_ms < 1000.0 ? "met" : "MISSED", 1000.0 / f.durable_ms);
  std::printf("%-10s peer, sync per point (%ld pts): %.1f us/point => %.0f ms for %ld points on the calling thread; "
              "lakerun's calling thread is %.0fx less, durable %.1fx sooner\n",
              what, sync_points, sync_per_point_us, sync_scaled_ms, points, sync_scaled_ms / f.calling_ms,
              sync_scaled_ms / f.durable_ms);
}

}  // namespace

int main(int argc, char** argv) {
  long points = 100000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--points")) points = std::atol(argv[i + 1]);
  }
  char tmpl[] = "/tmp/track-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  std::printf("track_bench: %ld metric points, %u hardware threads\n", points, std::thread::hardware_concurrency());

  // File store.
  const Figures file = LogAsync("file:" + dir + "/mlruns", points);
  const long file_sync_points = std::min<long>(points, 20000);
  const double file_sync = LogSyncPerPoint("file:" + dir + "/mlruns", file_sync_points);
  Report("file store", points, file, file_sync, file_sync_points);

  // HTTP: an in-process stub MLflow server on loopback.
  std::atomic<long> received{0};
  testing::TestHttpServer server([&](const testing::RecordedRequest& r) -> testing::CannedResponse {
    if (r.path.find("get-by-name") != std::string::npos) return {404, R"({"error_code":"RESOURCE_DOES_NOT_EXIST"})"};
    if (r.path.find("experiments/create") != std::string::npos) return {200, R"({"experiment_id":"1"})"};
    if (r.path.find("runs/create") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"r1","experiment_id":"1","status":"RUNNING"}}})"};
    }
    if (r.path.find("log-batch") != std::string::npos) {
      // Count the metric objects without a full parse: the figures are the client's, not a server's JSON cost.
      long n = 0;
      for (size_t pos = r.body.find("{\"key\":"); pos != std::string::npos; pos = r.body.find("{\"key\":", pos + 1)) {
        ++n;
      }
      received += n;
    }
    return {200, "{}"};
  });
  const Figures http = LogAsync(server.url(), points);
  const long http_received = received.load();
  const long http_sync_points = std::min<long>(points, 2000);
  const double http_sync = LogSyncPerPoint(server.url(), http_sync_points);
  Report("http", points, http, http_sync, http_sync_points);
  std::printf("http       stub server received %ld of %ld points from the async run\n", http_received, points);

  lakerun::LocalFileSystem().RemoveAll(dir);
  return http_received == points ? 0 : 1;
}
