#include "lakerun/base/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace lakerun {
namespace {

LogLevel LevelFromEnv() {
  const char* value = std::getenv("LAKERUN_LOG_LEVEL");
  if (value == nullptr) return LogLevel::Info;
  if (!std::strcmp(value, "debug")) return LogLevel::Debug;
  if (!std::strcmp(value, "warning") || !std::strcmp(value, "warn")) return LogLevel::Warning;
  if (!std::strcmp(value, "error")) return LogLevel::Error;
  return LogLevel::Info;
}

std::atomic<int>& Threshold() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnv())};
  return level;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "?";
}

}  // namespace

LogLevel MinLogLevel() { return static_cast<LogLevel>(Threshold().load(std::memory_order_relaxed)); }
void SetMinLogLevel(LogLevel level) { Threshold().store(static_cast<int>(level)); }

void Log(LogLevel level, const std::string& message) {
  if (level < MinLogLevel()) return;
  std::string line = std::string("[lakerun ") + LevelName(level) + "] " + message;
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  // One write(2) per line keeps lines whole when threads or processes share stderr.
  ssize_t rc = ::write(STDERR_FILENO, line.data(), line.size());
  (void)rc;
}

}  // namespace lakerun
