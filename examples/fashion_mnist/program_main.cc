#include "program_main.h"

#include <c10/util/Exception.h>

#include <cstdio>
#include <exception>

#include "lakerun/base/error.h"

namespace lakerun::examples {

int RunProgramMain(const char* name, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "%s: torch error: %s\n", name, e.what_without_backtrace());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  }
  return 1;
}

}  // namespace lakerun::examples
