// Runs left RUNNING by a process that died where no handler runs (SIGKILL, the kernel's OOM killer): how
// `lakerun launch` ends them.
//
// The `lakerun` command gives every rank LAKERUN_RUN_INFO_DIR, a directory it makes for the job (OpenRunsDir). A
// Tracker in a process with that variable announces there each run it starts or continues: one small file per run
// and process, naming the store (a file store by its absolute path), the run, the rank and the process. The process
// takes the file away when it ends the run: End(), the destructor, a handled signal, std::terminate. Once every rank
// of an attempt is gone, what is left names the runs nobody ended; OpenRunsDir::EndRunsLeftOpen ends each that its
// store still shows RUNNING, as its rank's exit says, at the time of its last logged point. A restarted attempt that
// continues the job's run sets it RUNNING again and announces it anew, so a job that then succeeds ends FINISHED.
//
// lakerun::launch knows nothing of this (it links no tracking code): the `lakerun` command joins the two through
// LaunchOptions::after_attempt (src/cli/launch_command.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lakerun/track/store.h"
#include "lakerun/track/types.h"

namespace lakerun::track {

/// The variable naming the directory of announcements. Unset: nothing is announced.
inline constexpr const char* kRunInfoDirVariable = "LAKERUN_RUN_INFO_DIR";

/// A run some process announced and has not ended.
struct OpenRunFile {
  std::string path;          ///< the announcement itself
  std::string run_id;
  std::string tracking_uri;  ///< absolute for a file store: the process may have changed its directory
  int rank = 0;
  std::string host;          ///< the process, as its runs' tags record it (tracker.h: kHostTag, ...)
  int64_t pid = 0;
  std::string process_start;
};

/// The announcements in `dir`; one that cannot be read or parsed is skipped with a warning naming it.
std::vector<OpenRunFile> ListOpenRuns(const std::string& dir);

/// The status of a run whose process ended without ending it, `signal` 0 meaning it exited with `exit_code`: KILLED
/// after a signal sent to stop it (SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGXCPU, SIGUSR1/2);
/// FAILED after any other signal (SIGSEGV, SIGABRT, SIGBUS, ...: a crash) or a non-zero exit; FINISHED after exit
/// code 0, as MLflow ends a run still active when its Python process exits.
RunStatus StatusAfterProcessEnd(int exit_code, int signal);

/// Ends `run_id` when its store still shows it RUNNING and not deleted: `status`, with as end time the latest
/// timestamp of its metric points (not before its start), or `now_ms` when it has none. Returns whether it did.
bool EndRunLeftRunning(Store& store, const std::string& run_id, RunStatus status, int64_t now_ms);

/// The launcher's side: a directory for one job's announcements, made under $TMPDIR (else /tmp) and removed, with
/// whatever is in it, on destruction. IoError when it cannot be made.
class OpenRunsDir {
 public:
  OpenRunsDir();
  ~OpenRunsDir();
  OpenRunsDir(const OpenRunsDir&) = delete;
  OpenRunsDir& operator=(const OpenRunsDir&) = delete;

  /// What kRunInfoDirVariable is set to for the ranks.
  const std::string& path() const { return path_; }

  /// After an attempt, every rank gone: ends each announced run its store still shows RUNNING, with the status
  /// `status_of(rank)` gives for the rank that announced it, and removes the announcements. A run whose process is
  /// still alive (a rank's escaped child) is left as it is. Returns one line per run ended, or that could not be
  /// (a store that cannot be reached: a warning), for the launcher to print.
  std::vector<std::string> EndRunsLeftOpen(const std::function<RunStatus(int rank)>& status_of);

 private:
  std::string path_;
};

}  // namespace lakerun::track
