// The `lakerun launch` sub-command, as a function so that the CLI registers it and tests can run it directly.
#pragma once

namespace lakerun::launch {

/// `lakerun launch -n N [options] -- PROGRAM [ARGS...]`; argv[0] is the command's name. Flags take torchrun's
/// spellings too (--nproc_per_node=2). Returns the exit status (LaunchResult::exit_code; 2 for a flag value CLI11
/// cannot read). Throws ConfigError for an unknown flag (naming the nearest known one) or a bad option value.
int RunLaunchCommand(int argc, char** argv);

}  // namespace lakerun::launch
