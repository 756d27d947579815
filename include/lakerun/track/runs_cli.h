// The `lakerun runs` sub-commands, as functions (src/cli/runs_command.cc registers them; tests call them directly).
//
//   lakerun runs list    [--experiment NAME] [--sort KEY[:asc|:desc]] [--columns LIST] [--tracking-uri URI]
//                                                                   a table of runs, newest first (report.h)
//   lakerun runs show    RUN [--tracking-uri URI]                   params, tags, metrics with sparklines
//   lakerun runs compare RUN RUN... [--tracking-uri URI]            runs side by side
//
// RUN is a run id, an id prefix, or a run name; one that several runs match is an error listing them. The tracking
// URI defaults to MLFLOW_TRACKING_URI, else ./mlruns; it may be a file store or an MLflow server. Bad usage (an
// unknown option, a missing value, a bad column or sort key) throws ConfigError naming the option; the return value
// is the exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace lakerun::track {

/// `args` excludes the program name.
int RunsListMain(const std::vector<std::string>& args, std::ostream& out);
int RunsShowMain(const std::vector<std::string>& args, std::ostream& out);
int RunsCompareMain(const std::vector<std::string>& args, std::ostream& out);

}  // namespace lakerun::track
