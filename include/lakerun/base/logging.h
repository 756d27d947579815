// Minimal leveled logging to stderr.
//
//   LAKERUN_LOG(Info) << "rank " << rank << " joined";
//
// The threshold comes from LAKERUN_LOG_LEVEL (debug, info, warning, error; default info). Each line is written with
// one write(2), so lines from threads and processes do not interleave mid-line.
#pragma once

#include <sstream>
#include <string>

namespace lakerun {

enum class LogLevel { Debug = 0, Info = 1, Warning = 2, Error = 3 };

/// Current threshold (read once from LAKERUN_LOG_LEVEL).
LogLevel MinLogLevel();
void SetMinLogLevel(LogLevel level);
/// Writes "[lakerun <level>] <message>\n" to stderr if `level` passes the threshold.
void Log(LogLevel level, const std::string& message);

namespace detail {
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  ~LogLine() { Log(level_, out_.str()); }
  template <typename T>
  LogLine& operator<<(const T& value) {
    out_ << value;
    return *this;
  }

 private:
  LogLevel level_;
  std::ostringstream out_;
};
}  // namespace detail

}  // namespace lakerun

#define LAKERUN_LOG(level)                                                \
  if (::lakerun::LogLevel::level < ::lakerun::MinLogLevel()) {            \
  } else                                                                  \
    ::lakerun::detail::LogLine(::lakerun::LogLevel::level)
