#include "lakerun/base/run_main.h"

#include <cstdio>
#include <exception>
#include <string>

#include "lakerun/base/error.h"

namespace lakerun {
namespace {

std::string ProgramName(int argc, char** argv) {
  if (argc < 1 || argv == nullptr || argv[0] == nullptr) return "program";
  const std::string path = argv[0];
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int Fail(int argc, char** argv, const char* message) {
  std::fprintf(stderr, "%s: error: %s\n", ProgramName(argc, argv).c_str(), message);
  std::fflush(stderr);
  return 1;
}

}  // namespace

int RunMain(int argc, char** argv, const std::function<int(int, char**)>& fn) {
  try {
    return fn(argc, argv);
  } catch (const Error& e) {
    return Fail(argc, argv, e.what());
  } catch (const std::exception& e) {
    return Fail(argc, argv, e.what());
  } catch (...) {
    return Fail(argc, argv, "unknown exception");
  }
}

}  // namespace lakerun
