// The `lakerun launch` sub-command, as a function so that the CLI registers it and tests can run it directly.
#pragma once

#include <functional>

namespace lakerun::launch {

/// `lakerun launch -n N [options] -- PROGRAM [ARGS...]`; argv[0] is the command's name. Flags take torchrun's
/// spellings too (--nproc_per_node=2). Returns the exit status (LaunchResult::exit_code; 2 for a flag value CLI11
/// cannot read). Throws ConfigError for an unknown flag (naming the nearest known one) or a bad option value.
int RunLaunchCommand(int argc, char** argv);

struct LaunchOptions;
/// RunLaunchCommand, with `customize` called on the options the flags gave, just before the launch (not for --help
/// or a usage error). The `lakerun` command adds there what links modules the launcher does not: the ending of the
/// tracking runs a rank left RUNNING (LaunchOptions::after_attempt).
int RunLaunchCommandWith(int argc, char** argv, const std::function<void(LaunchOptions&)>& customize);

}  // namespace lakerun::launch
