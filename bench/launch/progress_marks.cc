// bench_progress_marks: what hang detection costs a rank per collective: one Enter/Leave pair on the launcher's
// progress board (lakerun/rdzv/progress.h), against an empty loop, single-threaded. Prints ns per pair.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lakerun/rdzv/progress.h"

namespace {

using Clock = std::chrono::steady_clock;

double NsPerIteration(long iterations, Clock::duration took) {
  return std::chrono::duration<double, std::nano>(took).count() / static_cast<double>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 20000000;
  lakerun::rdzv::ProgressBoard board(1);
  ::setenv(lakerun::rdzv::kProgressBoardEnv, board.Location().c_str(), 1);
  ::setenv(lakerun::rdzv::kProgressSlotEnv, "0", 1);
  auto reporter = lakerun::rdzv::ProgressReporter::FromEnvironment();
  if (!reporter) return 1;
  double best_marks = 1e9, best_empty = 1e9;
  for (int round = 0; round < 5; ++round) {
    auto start = Clock::now();
    for (long i = 0; i < iterations; ++i) {
      lakerun::rdzv::ProgressReporter::Scope in(reporter.get(), lakerun::rdzv::Collective::kAllReduce);
      asm volatile("" ::: "memory");
    }
    best_marks = std::min(best_marks, NsPerIteration(iterations, Clock::now() - start));
    start = Clock::now();
    for (long i = 0; i < iterations; ++i) asm volatile("" ::: "memory");
    best_empty = std::min(best_empty, NsPerIteration(iterations, Clock::now() - start));
  }
  std::printf("progress marks: %.1f ns per collective (Enter + Leave), empty loop %.1f ns; best of 5 rounds of %ld\n",
              best_marks - best_empty, best_empty, iterations);
  std::printf("collectives entered: %llu\n", static_cast<unsigned long long>(board.Read(0).entered));
  return 0;
}
