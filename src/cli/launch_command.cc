// `lakerun launch -n N [options] -- PROGRAM [ARGS...]` (docs/launch.md); the implementation is lakerun::launch.
//
// The command also ends the tracking runs a rank left RUNNING when it died where no handler runs (SIGKILL, the OOM
// killer): the ranks announce their runs in a directory the command makes (lakerun/track/open_runs.h), and after
// each attempt the runs left there are ended as their rank's exit says. lakerun::launch links no tracking code, so
// the two meet here, in the one executable that links both.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "lakerun/launch/command.h"
#include "lakerun/launch/launcher.h"
#include "lakerun/track/open_runs.h"

namespace {

using lakerun::launch::AttemptReport;
using lakerun::launch::LaunchOptions;
using lakerun::launch::RankExit;
using lakerun::track::RunStatus;

// A rank the launcher gave up on (it did not exit after SIGKILL) or never heard of was killed, as far as its runs go.
RunStatus StatusOf(const AttemptReport& report, int rank) {
  const bool known = rank >= 0 && rank < static_cast<int>(report.exits.size()) && report.exits[rank].has_value();
  if (!known) return RunStatus::kKilled;
  const RankExit& exit = *report.exits[rank];
  return lakerun::track::StatusAfterProcessEnd(exit.exit_code, exit.signal);
}

int RunLaunch(int argc, char** argv) {
  std::unique_ptr<lakerun::track::OpenRunsDir> open_runs;  // made once the flags are known good; removed on return
  return lakerun::launch::RunLaunchCommandWith(argc, argv, [&open_runs](LaunchOptions& options) {
    open_runs = std::make_unique<lakerun::track::OpenRunsDir>();
    options.extra_env[lakerun::track::kRunInfoDirVariable] = open_runs->path();
    options.after_attempt = [dir = open_runs.get()](const AttemptReport& report) {
      return dir->EndRunsLeftOpen([&report](int rank) { return StatusOf(report, rank); });
    };
  });
}

}  // namespace

LAKERUN_REGISTER_COMMAND("launch", "start N ranks of a program on this machine (torchrun-compatible)", RunLaunch);
