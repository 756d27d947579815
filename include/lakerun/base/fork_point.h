// Fork start: `lakerun launch --start-method fork` starts the program once and forks the ranks from it.
//
// Loading libtorch costs every rank about half a second of CPU (dynamic linking, operator registration, page
// faults). Under fork start the program is exec'd once, as a *template*; when the template reaches ForkPoint() it
// forks one process per rank, which share the already-loaded libraries and everything the program built before
// that point (copy-on-write). The ranks then continue from ForkPoint() with their own environment (RANK,
// LOCAL_RANK, ...), their own process group and output, supervised like exec-started ranks.
//
// It lives in base, not launch, so that lakerun::dist::Init() can be the fork point: dist and launch are independent
// modules. The launcher's side is lakerun::launch (launcher.h, StartMethod::kFork).
//
// Contract for programs (docs/launch.md):
//  - call ForkPoint() before starting any thread: a fork copies only the calling thread. lakerun::dist::Init() and
//    lakerun::launch::MaybeRunRank() call it first thing, so programs that start with either need nothing more;
//  - code before the fork point runs once, as rank 0 (its environment and output are rank 0's); every rank inherits
//    its state, so nothing rank-specific may be computed there;
//  - with threads running at the fork point the launcher fails with an error naming them, instead of forking.
//    Threads that fork-safe libraries stop in their pthread_atfork handlers (OpenBLAS's pool) do not count.
#pragma once

namespace lakerun {

/// Outside a fork start: returns at once. In a fork-start template: forks the ranks and returns in each of them;
/// the template itself never returns (it exits once every rank has been forked).
void ForkPoint();

}  // namespace lakerun
