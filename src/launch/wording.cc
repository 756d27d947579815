#include "launch/wording.h"

#include <cstdio>

namespace lakerun::launch::internal {
namespace {

std::string Format(const char* format, std::chrono::milliseconds ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), format, static_cast<double>(ms.count()) / 1000.0);
  return buffer;
}

}  // namespace

std::string Plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string Seconds(std::chrono::milliseconds ms) { return Format("%g s", ms); }

std::string WholeSeconds(std::chrono::milliseconds ms) { return Format("%.0f s", ms); }

}  // namespace lakerun::launch::internal
