// track_crash_child: a training process that dies in the ways crash_test.cc checks.
//
//   track_crash_child throw    ROOT   logs 1000 points, then throws; main catches it (the stack unwinds)
//   track_crash_child uncaught ROOT   logs 1000 points, then throws with no handler (std::terminate, no unwinding)
//   track_crash_child signal   ROOT   starts a run and a nested run, prints "run <parent>" and "run <child>", then
//                                    logs to the nested run forever, printing "logged N" every 500, until a signal
//                                    (SIGTERM, SIGINT) ends it
//   track_crash_child kill9    ROOT   under `lakerun launch`: rank 0 logs 100 points to the job's run, prints
//                                    "run <id>", flushes, then dies of SIGKILL in the attempts listed in
//                                    LAKERUN_TEST_KILL_ATTEMPTS ("0,2"; unset: every attempt) and ends the run
//                                    normally in the others; every other rank exits at once
//
// Each mode prints "run <id>" first.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "lakerun/track/tracker.h"

using lakerun::track::Run;
using lakerun::track::Tracker;
using lakerun::track::TrackerOptions;

namespace {

Tracker MakeTracker(const std::string& root) {
  TrackerOptions options;
  options.experiment_name = "crash";
  options.detect_git_commit = false;
  return Tracker("file:" + root, options);
}

void LogThenThrow(Tracker& tracker) {
  Run run = tracker.StartRun();
  std::printf("run %s\n", run.run_id().c_str());
  std::fflush(stdout);
  for (int i = 0; i < 1000; ++i) run.LogMetric("loss", 1.0 / (i + 1), i);
  throw std::runtime_error("loss is NaN");
}

// Whether LAKERUN_TEST_KILL_ATTEMPTS (a comma-separated list; unset: every attempt) names this attempt.
bool KilledInThisAttempt() {
  const char* list = std::getenv("LAKERUN_TEST_KILL_ATTEMPTS");
  if (list == nullptr) return true;
  const char* attempt = std::getenv("LAKERUN_RESTART_COUNT");
  const std::string padded = "," + std::string(list) + ",";
  return padded.find("," + std::string(attempt != nullptr ? attempt : "0") + ",") != std::string::npos;
}

int LogThenKill9(Tracker& tracker) {
  if (!tracker.enabled()) return 0;  // not rank 0
  Run run = tracker.StartRun();
  std::printf("run %s\n", run.run_id().c_str());
  std::fflush(stdout);
  const char* attempt = std::getenv("LAKERUN_RESTART_COUNT");
  const int first_step = 100 * (attempt != nullptr ? std::atoi(attempt) : 0);
  for (int i = 0; i < 100; ++i) run.LogMetric("loss", 1.0 / (i + 1), first_step + i);
  run.Flush();
  if (KilledInThisAttempt()) std::raise(SIGKILL);  // no handler runs: the run stays RUNNING
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: track_crash_child throw|uncaught|signal|kill9 ROOT\n");
    return 2;
  }
  const std::string mode = argv[1];
  Tracker tracker = MakeTracker(argv[2]);
  if (mode == "throw") {
    try {
      LogThenThrow(tracker);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "training failed: %s\n", e.what());
      return 3;
    }
  } else if (mode == "uncaught") {
    LogThenThrow(tracker);
  } else if (mode == "kill9") {
    return LogThenKill9(tracker);
  } else if (mode == "signal") {
    Run parent = tracker.StartRun();
    Run run = tracker.StartNestedRun(parent);
    std::printf("run %s\nrun %s\n", parent.run_id().c_str(), run.run_id().c_str());
    std::fflush(stdout);
    for (long i = 0;; ++i) {
      run.LogMetric("loss", static_cast<double>(i), i);
      if ((i + 1) % 500 == 0) {
        std::printf("logged %ld\n", i + 1);
        std::fflush(stdout);
      }
    }
  }
  return 2;
}
