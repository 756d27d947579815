#include "lakerun/base/stale_temporaries.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"

namespace lakerun {
namespace {

constexpr int64_t kAbandonedAfterMs = 24 * 3600 * 1000;  // nothing written for a day: no writer is alive
constexpr int64_t kClockSlackMs = 1000;                   // the boot time /proc gives is in whole seconds

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// When the process `pid` started (ms since the epoch), from /proc; std::nullopt where /proc cannot say.
std::optional<int64_t> ProcessStartMs(long pid) {
  std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const size_t comm_end = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (comm_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(comm_end + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i < 22) continue;
    std::ifstream proc_stat("/proc/stat");
    for (std::string key; proc_stat >> key;) {
      long long boot_s = 0;
      if (key == "btime" && proc_stat >> boot_s) {
        const long ticks = ::sysconf(_SC_CLK_TCK);
        if (ticks <= 0 || !Digits(field)) return std::nullopt;
        return boot_s * 1000 + std::stoll(field) * 1000 / ticks;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<TemporaryName> ParseTemporaryName(const std::string& name) {
  for (const char* marker : {".tmp.", ".excl."}) {
    const size_t at = name.rfind(marker);
    if (at == std::string::npos || at == 0) continue;
    const std::string rest = name.substr(at + std::char_traits<char>::length(marker));
    const size_t dot = rest.find('.');
    if (dot == std::string::npos || dot > 9 || !Digits(rest.substr(0, dot)) || !Digits(rest.substr(dot + 1))) {
      continue;
    }
    return TemporaryName{name.substr(0, at), std::stol(rest.substr(0, dot))};
  }
  return std::nullopt;
}

bool TemporaryMayBeOwned(long pid, int64_t mtime_ms) {
  const bool known_time = mtime_ms > 0;
  if (known_time && NowMs() - mtime_ms >= kAbandonedAfterMs) return false;
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return false;
  if (!known_time) return true;
  const std::optional<int64_t> started = ProcessStartMs(pid);
  return !started || *started <= mtime_ms + kClockSlackMs;  // started later: a reused pid
}

void RemoveStaleTemporaries(FileSystem& fs, const std::string& dir,
                            const std::function<bool(const std::string& target)>& of_target, const std::string& what) {
  std::vector<FileInfo> entries;
  try {
    if (!fs.Exists(dir)) return;
    entries = fs.List(dir);
  } catch (const Error& e) {
    LAKERUN_LOG(Warning) << "temporaries of " << what << " in " << dir << " not cleaned: " << e.what();
    return;
  }
  for (const FileInfo& f : entries) {
    if (f.is_directory) continue;
    const std::optional<TemporaryName> temporary = ParseTemporaryName(f.name);
    if (!temporary || !of_target(temporary->target) || TemporaryMayBeOwned(temporary->pid, f.mtime_ms)) continue;
    const std::string path = JoinPath(dir, f.name);
    try {
      fs.Remove(path);
      LAKERUN_LOG(Info) << "removed " << path << ", left by " << what << " that never finished (pid "
                        << temporary->pid << " is gone or no longer that process)";
    } catch (const Error& e) {
      LAKERUN_LOG(Warning) << "could not remove the stale temporary " << path << ": " << e.what();
    }
  }
}

}  // namespace lakerun
