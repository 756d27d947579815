// Runs the Node oracle scripts of tests/interop from C++ tests, bounded by a timeout.
#pragma once

#include <string>
#include <vector>

namespace lakerun::interop {

struct NodeResult {
  int exit_code = -1;      ///< the script's exit status; -1 when it was killed or did not start
  bool timed_out = false;  ///< killed (with its whole process group) after the timeout
  std::string output;      ///< stdout and stderr, interleaved (last 64 KiB)
};

/// The tests/interop directory of the source tree.
std::string InteropDir();

/// Empty when Node and the npm packages are usable; otherwise the reason (no node on PATH, no node_modules)
/// followed by what to run ("scripts/setup.sh").
std::string OracleProblem();

/// Whether LAKERUN_SKIP_INTEROP=1 is set: the only way interop tests may skip instead of failing.
bool SkipInteropRequested();

/// Runs `node <InteropDir()>/<script> args...` in its own process group with cwd InteropDir(); waits at most
/// `timeout_s` seconds, then kills the group (SIGKILL) and reaps it. Never throws for a failing script.
NodeResult RunNode(const std::string& script, const std::vector<std::string>& args, int timeout_s);

}  // namespace lakerun::interop
