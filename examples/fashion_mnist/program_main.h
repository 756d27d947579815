// The examples' main(): runs the program and turns an escaping exception into one line on stderr and exit code 1.
#pragma once

namespace lakerun::examples {

/// Returns run(argc, argv), or 1 after printing "<name>: error: ..." (lakerun and std errors) or
/// "<name>: torch error: ..." (c10::Error, without its backtrace).
int RunProgramMain(const char* name, int (*run)(int, char**), int argc, char** argv);

}  // namespace lakerun::examples
