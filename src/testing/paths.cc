#include "lakerun_testing/paths.h"

#include <cstdlib>
#include <stdexcept>

#include "lakerun/base/file_system.h"

namespace lakerun::testing {
namespace {
// The environment wins (tests run from another tree); else the trees this test binary was configured in.
std::string FromEnv(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  if (value != nullptr && *value) return value;
  return fallback;
}

std::string Search(const std::string& dir, const std::string& name, int depth) {
  if (depth > 4) return "";
  const auto entries = LocalFileSystem().List(dir);
  for (const auto& entry : entries) {
    if (!entry.is_directory && entry.name == name) return JoinPath(dir, entry.name);
  }
  for (const auto& entry : entries) {
    if (entry.is_directory && entry.name != "CMakeFiles" && entry.name[0] != '.') {
      std::string found = Search(JoinPath(dir, entry.name), name, depth + 1);
      if (!found.empty()) return found;
    }
  }
  return "";
}
}  // namespace

std::string SourceDir() { return FromEnv("LAKERUN_SOURCE_DIR", LAKERUN_DEFAULT_SOURCE_DIR); }
std::string BinaryDir() { return FromEnv("LAKERUN_BINARY_DIR", LAKERUN_DEFAULT_BINARY_DIR); }

std::string BuiltProgram(const std::string& name) {
  std::string found = Search(BinaryDir(), name, 0);
  if (found.empty()) throw std::runtime_error("built program '" + name + "' not found under " + BinaryDir());
  return found;
}

}  // namespace lakerun::testing
