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

}  // namespace lakerun::track
