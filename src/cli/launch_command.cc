// `lakerun launch -n N [options] -- PROGRAM [ARGS...]` (docs/launch.md); the implementation is lakerun::launch.
#include "cli/command.h"
#include "lakerun/launch/command.h"

LAKERUN_REGISTER_COMMAND("launch", "start N ranks of a program on this machine (torchrun-compatible)",
                         lakerun::launch::RunLaunchCommand);
