#include "track/system_tags.h"

#include <pwd.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lakerun::track {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

bool IsHexCommit(const std::string& s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string ParentOf(const std::string& dir) {
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return dir.substr(0, slash);
}

// The git directory for a work tree root: ".git" itself, or the target of a "gitdir: ..." file (worktrees).
std::optional<std::string> GitDirAt(const std::string& root) {
  const std::string dot_git = root + "/.git";
  if (auto head = ReadSmallFile(dot_git + "/HEAD")) return dot_git;
  if (auto file = ReadSmallFile(dot_git)) {
    std::string text = Trim(*file);
    if (text.rfind("gitdir: ", 0) == 0) {
      std::string dir = text.substr(8);
      if (!dir.empty() && dir.front() != '/') dir = root + "/" + dir;
      return dir;
    }
  }
  return std::nullopt;
}

std::optional<std::string> ResolveRef(const std::string& git_dir, const std::string& ref) {
  // Linked worktrees keep shared refs in the directory named by "commondir".
  std::string common = git_dir;
  if (auto c = ReadSmallFile(git_dir + "/commondir")) {
    std::string dir = Trim(*c);
    common = dir.front() == '/' ? dir : git_dir + "/" + dir;
  }
  for (const std::string& base : {git_dir, common}) {
    if (auto value = ReadSmallFile(base + "/" + ref)) {
      std::string commit = Trim(*value);
      if (IsHexCommit(commit)) return commit;
    }
  }
  if (auto packed = ReadSmallFile(common + "/packed-refs")) {
    std::istringstream lines(*packed);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#' || line[0] == '^') continue;
      const size_t space = line.find(' ');
      if (space != std::string::npos && Trim(line.substr(space + 1)) == ref && IsHexCommit(line.substr(0, space))) {
        return line.substr(0, space);
      }
    }
  }
  return std::nullopt;
}

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

// The pid namespace's inode, from the link "pid:[4026531836]"; "" when unreadable.
std::string PidNamespace() {
  char buf[64];
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  const std::string link(buf, static_cast<size_t>(n));
  const size_t open = link.find('[');
  const size_t close = link.find(']');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return "";
  return link.substr(open + 1, close - open - 1);
}

std::string BootId() {
  auto text = ReadSmallFile("/proc/sys/kernel/random/boot_id");
  return text ? Trim(*text) : "";
}

struct ProcStat {
  char state = '?';
  std::string start_ticks;
};

// State and start time of `pid` in this pid namespace; nullopt when no such process. The command name (field 2) is
// in parentheses and may hold spaces and ')': the fields are counted after its last ')'.
std::optional<ProcStat> ReadProcStat(int64_t pid) {
  auto text = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  const size_t close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text->substr(close + 1));
  ProcStat stat;
  std::string field;
  for (int number = 3; fields >> field; ++number) {  // field 3 is the state, field 22 the start time
    if (number == 3) stat.state = field.empty() ? '?' : field[0];
    if (number == 22) {
      stat.start_ticks = field;
      break;
    }
  }
  return stat;
}

}  // namespace

std::string CurrentUser() {
  for (const char* name : {"LOGNAME", "USER", "LNAME", "USERNAME"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value) return value;
  }
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return "unknown";
}

std::string CurrentSourceName() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> GitCommitOf(const std::string& start) {
  std::string dir = start;
  if (dir.empty() || dir.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return std::nullopt;
    dir = dir.empty() || dir == "." ? std::string(cwd) : std::string(cwd) + "/" + dir;
  }
  for (int depth = 0; depth < 64; ++depth) {
    if (auto git_dir = GitDirAt(dir)) {
      auto head = ReadSmallFile(*git_dir + "/HEAD");
      if (!head) return std::nullopt;
      std::string text = Trim(*head);
      if (text.rfind("ref: ", 0) == 0) return ResolveRef(*git_dir, text.substr(5));
      if (IsHexCommit(text)) return text;
      return std::nullopt;
    }
    if (dir == "/") break;
    dir = ParentOf(dir);
  }
  return std::nullopt;
}

ProcessIdentity CurrentProcessIdentity() {
  ProcessIdentity id;
  id.host = Hostname();
  id.pid = static_cast<int64_t>(::getpid());
  const std::string boot = BootId();
  const std::string pid_namespace = PidNamespace();
  const auto stat = ReadProcStat(id.pid);
  if (!boot.empty() && !pid_namespace.empty() && stat && !stat->start_ticks.empty()) {
    id.start = boot + ":" + pid_namespace + ":" + stat->start_ticks;
  }
  return id;
}

ProcessCheck CheckRecordedProcess(const std::string& host, int64_t pid, const std::string& start) {
  if (host.empty() || pid <= 0 || host != Hostname()) return {};
  const size_t first = start.find(':');
  const size_t second = first == std::string::npos ? std::string::npos : start.find(':', first + 1);
  if (second == std::string::npos) return {};  // nothing to tell a reused pid by
  if (start.substr(0, first) != BootId()) return {ProcessState::kGone, "the host restarted since"};
  if (start.substr(first + 1, second - first - 1) != PidNamespace()) return {};  // another container's pid
  const auto stat = ReadProcStat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return {ProcessState::kGone, ""};
  if (stat->start_ticks != start.substr(second + 1)) {
    return {ProcessState::kGone, "the pid now belongs to another process"};
  }
  return {ProcessState::kAlive, ""};
}

}  // namespace lakerun::track
