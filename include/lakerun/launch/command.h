// The `lakerun launch` sub-command, as a function so that the CLI registers it and tests can run it directly.
#pragma once

namespace lakerun::launch {

/// `lakerun launch -n N [options] -- PROGRAM [ARGS...]`; argv[0] is the command's name. Returns the exit status
/// (LaunchResult::exit_code; 2 for bad flags). Throws lakerun::Error for bad option values.
int RunLaunchCommand(int argc, char** argv);

}  // namespace lakerun::launch
