// The program run_main_test starts: `run_main_program MODE` fails (or not) in the way MODE names, inside
// lakerun::RunMain.
#include <cstring>
#include <stdexcept>

#include "lakerun/base/error.h"
#include "lakerun/base/run_main.h"

namespace {

int Run(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "lakerun-error") == 0) LAKERUN_THROW(ConfigError, "flag --epochs: expected a number, got 'x'");
  if (std::strcmp(mode, "std-error") == 0) throw std::out_of_range("vector index 9 out of range");
  if (std::strcmp(mode, "unknown") == 0) throw 42;
  if (std::strcmp(mode, "exit-3") == 0) return 3;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, Run); }
