#include "lakerun_testing/temp_dir.h"

#include <cstdlib>
#include <stdexcept>

#include "lakerun/base/file_system.h"

namespace lakerun::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/lakerun-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  try {
    LocalFileSystem().RemoveAll(path_);
  } catch (...) {
  }
}

}  // namespace lakerun::testing
