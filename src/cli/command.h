// The `lakerun` command's registry of sub-commands.
//
// Each sub-command lives in its own `src/cli/<name>_command.cc` and registers itself:
//
//   int RunTableHead(int argc, char** argv);  // argv[0] is "lakerun table head"
//   LAKERUN_REGISTER_COMMAND("table head", "print the first rows of a table", RunTableHead);
//
// A name may have two words ("table head"); `lakerun table head ...` picks the longest registered match.
// A command returns the process exit code; lakerun::Error escaping it is printed as "lakerun: error: ..." (exit 1).
#pragma once

#include <string>
#include <vector>

namespace lakerun::cli {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  std::string name;
  std::string summary;
  CommandFn run;
};

bool RegisterCommand(Command command);
const std::vector<Command>& Commands();

}  // namespace lakerun::cli

#define LAKERUN_CLI_CONCAT_INNER(a, b) a##b
#define LAKERUN_CLI_CONCAT(a, b) LAKERUN_CLI_CONCAT_INNER(a, b)
#define LAKERUN_REGISTER_COMMAND(name, summary, fn)                                 \
  static const bool LAKERUN_CLI_CONCAT(lakerun_command_registered_, __LINE__) =     \
      ::lakerun::cli::RegisterCommand({name, summary, fn})
