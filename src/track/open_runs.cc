// Announcements of open runs (lakerun/track/open_runs.h): written and withdrawn by the process logging a run, read
// by the launcher's side once the process is gone.
//
// An announcement is DIR/<run id>.<pid>.run, written atomically, one "key=value" line each: run_id, tracking_uri,
// rank, host, pid, process_start.
#include "lakerun/track/open_runs.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/base/logging.h"
#include "track/ids.h"
#include "track/open_run_file.h"
#include "track/system_tags.h"

namespace lakerun::track {
namespace {

constexpr const char kSuffix[] = ".run";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

OpenRunFile ParseOpenRun(const std::string& path, const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  OpenRunFile run;
  run.path = path;
  run.run_id = fields["run_id"];
  run.tracking_uri = fields["tracking_uri"];
  run.host = fields["host"];
  run.process_start = fields["process_start"];
  LAKERUN_CHECK_AS(CorruptDataError, !run.run_id.empty() && !run.tracking_uri.empty(), path,
                   ": not an announcement of a run (no run_id or tracking_uri line)");
  try {
    run.rank = std::stoi(fields["rank"]);
    run.pid = std::stoll(fields["pid"]);
  } catch (const std::exception&) {
    LAKERUN_THROW(CorruptDataError, path, ": rank '", fields["rank"], "' or pid '", fields["pid"],
                  "' is not a number");
  }
  return run;
}

}  // namespace

std::string AnnounceOpenRun(const std::string& run_id, const std::string& tracking_uri, int rank) {
  const char* dir = std::getenv(kRunInfoDirVariable);
  if (dir == nullptr || *dir == '\0') return "";
  const ProcessIdentity process = CurrentProcessIdentity();
  const std::string path = JoinPath(dir, run_id + "." + std::to_string(process.pid) + kSuffix);
  const std::string text = "run_id=" + run_id + "\ntracking_uri=" + tracking_uri + "\nrank=" + std::to_string(rank) +
                           "\nhost=" + process.host + "\npid=" + std::to_string(process.pid) +
                           "\nprocess_start=" + process.start + "\n";
  try {
    LocalFileSystem().WriteAtomically(path, text);
  } catch (const Error& e) {
    LAKERUN_LOG(Warning) << "tracking run " << run_id << ": cannot announce it in " << kRunInfoDirVariable << "="
                         << dir << " (" << e.what() << "); should this process be killed, its launcher will not "
                         << "end the run";
    return "";
  }
  return path;
}

void WithdrawOpenRun(const std::string& path) {
  if (path.empty()) return;
  try {
    LocalFileSystem().Remove(path);
  } catch (const Error&) {
    // The launcher checks the store before it ends a run: a run ended here stays as it is.
  }
}

std::vector<OpenRunFile> ListOpenRuns(const std::string& dir) {
  std::vector<OpenRunFile> out;
  FileSystem& fs = LocalFileSystem();
  if (!fs.Exists(dir)) return out;
  for (const auto& entry : fs.List(dir)) {
    if (entry.is_directory || !EndsWith(entry.name, kSuffix)) continue;  // also skips unfinished atomic writes
    const std::string path = JoinPath(dir, entry.name);
    try {
      out.push_back(ParseOpenRun(path, fs.ReadFile(path)));
    } catch (const Error& e) {
      LAKERUN_LOG(Warning) << "skipping a run announcement: " << e.what();
    }
  }
  return out;
}

RunStatus StatusAfterProcessEnd(int exit_code, int signal) {
  switch (signal) {
    case 0: return exit_code == 0 ? RunStatus::kFinished : RunStatus::kFailed;
    case SIGKILL:
    case SIGTERM:
    case SIGINT:
    case SIGHUP:
    case SIGQUIT:
    case SIGPIPE:
    case SIGALRM:
    case SIGXCPU:
    case SIGUSR1:
    case SIGUSR2: return RunStatus::kKilled;
    default: return RunStatus::kFailed;
  }
}

bool EndRunLeftRunning(Store& store, const std::string& run_id, RunStatus status, int64_t now_ms) {
  const RunRecord run = store.GetRun(run_id);
  if (run.info.status != RunStatus::kRunning || run.info.lifecycle_stage != "active") return false;
  bool any = false;
  int64_t last = run.info.start_time_ms;
  for (const auto& [key, latest] : run.latest_metrics) {
    // The latest point by step is not the last one logged: a restarted attempt logs earlier steps again.
    for (const Metric& point : store.GetMetricHistory(run_id, key)) {
      last = std::max(last, point.timestamp_ms);
      any = true;
    }
  }
  store.UpdateRun(run_id, status, any ? last : now_ms);
  return true;
}

OpenRunsDir::OpenRunsDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/lakerun-runs-XXXXXX";
  LAKERUN_CHECK_AS(IoError, ::mkdtemp(pattern.data()) != nullptr, "cannot make the directory ", pattern,
                   " where the ranks announce their tracking runs");
  path_ = pattern;
}

OpenRunsDir::~OpenRunsDir() {
  try {
    LocalFileSystem().RemoveAll(path_);
  } catch (...) {
  }
}

std::vector<std::string> OpenRunsDir::EndRunsLeftOpen(const std::function<RunStatus(int rank)>& status_of) {
  std::vector<std::string> lines;
  std::map<std::string, std::unique_ptr<Store>> stores;  // by URI: the runs of one job share one, mostly
  const int64_t now = SystemClockMs();
  for (const OpenRunFile& run : ListOpenRuns(path_)) {
    if (CheckRecordedProcess(run.host, run.pid, run.process_start).state == ProcessState::kAlive) continue;
    const RunStatus status = status_of(run.rank);
    const std::string who = "rank " + std::to_string(run.rank) + " (pid " + std::to_string(run.pid) + ")";
    try {
      std::unique_ptr<Store>& store = stores[run.tracking_uri];
      if (!store) store = OpenStore(run.tracking_uri);
      if (EndRunLeftRunning(*store, run.run_id, status, now)) {
        lines.push_back("tracking: " + who + " ended without ending its run " + run.run_id + " in " +
                        run.tracking_uri + "; marked it " + std::string(RunStatusName(status)));
      }
    } catch (const std::exception& e) {
      lines.push_back("warning: tracking: cannot end the run " + run.run_id + " that " + who + " left RUNNING in " +
                      run.tracking_uri + ": " + e.what());
    }
    WithdrawOpenRun(run.path);
  }
  return lines;
}

}  // namespace lakerun::track
