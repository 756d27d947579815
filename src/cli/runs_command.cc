// `lakerun runs list|show|compare` (docs/tracking.md); the implementation is lakerun/track/runs_cli.h.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "lakerun/track/runs_cli.h"

namespace {

std::vector<std::string> Args(int argc, char** argv) { return std::vector<std::string>(argv + 1, argv + argc); }

int RunsList(int argc, char** argv) { return lakerun::track::RunsListMain(Args(argc, argv), std::cout); }
int RunsShow(int argc, char** argv) { return lakerun::track::RunsShowMain(Args(argc, argv), std::cout); }
int RunsCompare(int argc, char** argv) { return lakerun::track::RunsCompareMain(Args(argc, argv), std::cout); }

}  // namespace

LAKERUN_REGISTER_COMMAND("runs list", "list tracked runs: status, duration, key params, latest metrics", RunsList);
LAKERUN_REGISTER_COMMAND("runs show", "show a run's params, tags and metric histories", RunsShow);
LAKERUN_REGISTER_COMMAND("runs compare", "compare runs side by side", RunsCompare);
