// Test support: N ranks as threads of one process, each with its own Context over one shared c10d HashStore.
#pragma once

#include <lakerun/dist/init.h>

#include <chrono>
#include <functional>
#include <memory>

namespace lakerun::dist::testing {

/// Runs body(ctx) for ranks 0..world-1 on one thread each, joins them all, then rethrows the lowest rank's
/// exception (if any). Every collective is bounded by `timeout`, so a rank that fails cannot hang the others.
/// `ranks_per_host` > 0 makes the ranks' environment describe world / ranks_per_host hosts (default: one host).
void RunRanks(int world, const std::function<void(Context&)>& body,
              std::chrono::milliseconds timeout = std::chrono::seconds(20), int ranks_per_host = 0);

}  // namespace lakerun::dist::testing
