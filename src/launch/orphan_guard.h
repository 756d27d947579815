// Kills the ranks' process groups if the launcher dies without cleaning up (private to lakerun::launch).
//
// PR_SET_PDEATHSIG kills a rank when the launcher dies, even by SIGKILL, but not the rank's own children. So at
// start the launcher forks a tiny guard process in its own session that holds the read end of a pipe. Each
// exec'd rank (and fork start's template) writes its own process-group id into the pipe between vfork and exec, so
// no rank program runs unwatched; the launcher writes the ids of ranks forked by a template before releasing them.
// When the pipe reaches end-of-file because the launcher died (its write end is close-on-exec, so no rank holds it),
// the guard SIGKILLs every group it was told about and exits. A launcher that finishes normally disarms the guard
// first. After fork the guard makes only system calls (read, killpg, close, _exit), so forking from a multi-threaded
// launcher is safe.
#pragma once

#include <sys/types.h>

namespace lakerun::launch::internal {

class OrphanGuard {
 public:
  /// Forks the guard; if that fails the launcher runs unguarded (PR_SET_PDEATHSIG still covers the ranks).
  OrphanGuard();
  /// Disarms the guard, which then exits without killing anything.
  ~OrphanGuard();
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;

  /// Watch the process group `pgid` (a rank that was just started).
  void Watch(pid_t pgid);
  /// The pipe Watch() writes to (-1 when inactive), for a child that registers its own group before exec
  /// (SpawnRequest::register_fd): a group watched only after its rank started could fork children that a launcher
  /// killed in between would leave behind.
  int registration_fd() const { return write_fd_; }
  bool active() const { return write_fd_ >= 0; }

 private:
  int write_fd_ = -1;
  pid_t guard_pid_ = -1;
};

}  // namespace lakerun::launch::internal
