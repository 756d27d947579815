// The context MLflow records with a run: user, source program, git commit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lakerun::track {

/// The user name, as Python's getpass.getuser(): LOGNAME, USER, LNAME, USERNAME, else the passwd entry; "unknown".
std::string CurrentUser();
/// The running program's absolute path (/proc/self/exe), the analogue of MLflow's sys.argv[0].
std::string CurrentSourceName();
/// The commit checked out in the git work tree containing `dir` (searching upwards), read from .git/HEAD, the ref
/// files and packed-refs, without running git. std::nullopt outside a git tree or when HEAD cannot be resolved.
std::optional<std::string> GitCommitOf(const std::string& dir);

/// This process as the runs it logs record it (the tags lakerun.host, lakerun.pid, lakerun.process_start).
struct ProcessIdentity {
  std::string host;  ///< gethostname()
  int64_t pid = 0;
  /// "<boot id>:<pid namespace>:<start time>": the kernel's boot id (/proc/sys/kernel/random/boot_id), the inode of
  /// the pid namespace (/proc/self/ns/pid) and the start time in clock ticks after boot (field 22 of /proc/PID/stat).
  /// What tells this process from a later one given the same pid, from any process after the host restarted, and a
  /// pid of another container from one of ours. Empty where /proc does not tell.
  std::string start;
};
ProcessIdentity CurrentProcessIdentity();

/// What this host can tell about a process a run recorded.
enum class ProcessState {
  kAlive,    ///< it is still running here
  kGone,     ///< it ran on this host and has ended
  kUnknown,  ///< another host, another pid namespace, or nothing recorded to check against
};
struct ProcessCheck {
  ProcessState state = ProcessState::kUnknown;
  /// For kGone, how it is known when not by the pid alone: "the host restarted since", "the pid now belongs to another
  /// process"; else empty.
  std::string detail;
};
/// Checks the process recorded as `host`, `pid` and `start` (ProcessIdentity's fields) against this host's processes.
/// A zombie (ended, not yet reaped) counts as gone.
ProcessCheck CheckRecordedProcess(const std::string& host, int64_t pid, const std::string& start);

}  // namespace lakerun::track
