// Starting and stopping rank processes (private to lakerun::launch).
//
// A rank is started with vfork+execve, never through a shell. Between vfork and execve the child only makes system
// calls: it becomes the leader of its own process group, sets PR_SET_PDEATHSIG(SIGKILL) and then checks that its
// parent is still the launcher (closing the race where the launcher dies before the flag is set), wires its
// stdout/stderr to the given pipes and stdin to /dev/null, marks every other descriptor close-on-exec, resets the
// signals the launcher handles, and execs.
// An exec failure is reported to the parent through the shared address space and thrown as IoError.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace lakerun::launch::internal {

struct SpawnRequest {
  /// Program path as execve wants it (ResolveProgram output).
  std::string path;
  /// argv, argv[0] included.
  std::vector<std::string> argv;
  /// The complete environment, "KEY=VALUE".
  std::vector<std::string> env;
  /// Descriptors that become the child's stdout and stderr.
  int stdout_fd = -1;
  int stderr_fd = -1;
  /// If >= 0, this descriptor becomes descriptor 3 of the child and survives exec (fork start's socket).
  int pass_fd = -1;
  /// If >= 0 (the orphan guard's pipe, OrphanGuard::registration_fd()), the child writes its process-group id there
  /// as one int32 before exec, so its group is watched before the program can start processes of its own.
  int register_fd = -1;
};

struct Child {
  pid_t pid = -1;  ///< also its process group id
  int pidfd = -1;  ///< readable when the child exits; -1 where pidfd_open is unavailable
};

/// Starts the child (see the file comment). Throws IoError naming the program and errno.
Child SpawnInOwnGroup(const SpawnRequest& request);

/// Resolves PROGRAM like execvp: a name with '/' is used as is, otherwise the first executable match in PATH.
/// Throws ConfigError naming the program when nothing executable is found.
std::string ResolveProgram(const std::string& program);

/// A close-on-exec pidfd for `pid` (readable once it exits), or -1 where pidfd_open is unavailable.
int OpenPidfd(pid_t pid);

/// Sends `sig` to the process group `pgid`; a group that no longer exists is not an error.
void KillGroup(pid_t pgid, int sig);

/// "SIGKILL", "SIGSEGV", ..., or "signal 42".
std::string SignalName(int sig);

/// The environment of this process as "KEY=VALUE" entries.
std::vector<std::string> CurrentEnvironment();

}  // namespace lakerun::launch::internal
