// The process's side of lakerun/track/open_runs.h: announcing the runs it logs in LAKERUN_RUN_INFO_DIR.
#pragma once

#include <string>

namespace lakerun::track {

/// Announces `run_id`, logged by this process as `rank` to the store at `tracking_uri`, when kRunInfoDirVariable is
/// set. Returns the announcement's path for WithdrawOpenRun, or "" when the variable is unset or the file could not
/// be written (a warning: tracking goes on without it).
std::string AnnounceOpenRun(const std::string& run_id, const std::string& tracking_uri, int rank);

/// Removes an announcement once its run has ended; "" does nothing. A failure is ignored: the launcher ends only runs
/// that the store still shows RUNNING.
void WithdrawOpenRun(const std::string& path);

}  // namespace lakerun::track
