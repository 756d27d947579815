#include "node_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::interop {
namespace {

bool IsDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The node binary: $LAKERUN_NODE, else the first `node` on PATH; empty when none.
std::string FindNode() {
  if (const char* env = std::getenv("LAKERUN_NODE"); env && *env) return ::access(env, X_OK) == 0 ? env : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

std::string InteropDir() { return lakerun::testing::SourceDir() + "/tests/interop"; }

bool SkipInteropRequested() {
  const char* v = std::getenv("LAKERUN_SKIP_INTEROP");
  return v && std::string(v) == "1";
}

std::string OracleProblem() {
  if (FindNode().empty()) {
    return "node is not on PATH (or $LAKERUN_NODE is not executable); run scripts/setup.sh (or set "
           "LAKERUN_SKIP_INTEROP=1 to skip interop tests)";
  }
  for (const char* pkg : {"@duckdb/node-api", "parquet-wasm", "apache-arrow", "hyparquet", "hyparquet-writer",
                          "hyparquet-compressors"}) {
    if (!IsDir(InteropDir() + "/node_modules/" + pkg)) {
      return "tests/interop/node_modules/" + std::string(pkg) +
             " is missing; run scripts/setup.sh (it runs `npm ci` in tests/interop), or set LAKERUN_SKIP_INTEROP=1 "
             "to skip interop tests";
    }
  }
  return "";
}

NodeResult RunNode(const std::string& script, const std::vector<std::string>& args, int timeout_s) {
  NodeResult result;
  const std::string node = FindNode();
  lakerun::testing::TempDir log_dir;
  const std::string log_path = log_dir.Join("node.log");
  std::vector<std::string> argv_s = {node, InteropDir() + "/" + script};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string dir = InteropDir();

  pid_t pid = ::fork();
  if (pid < 0) {
    result.output = "fork failed";
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    if (::chdir(dir.c_str()) != 0) _exit(126);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the kill below cannot race the child's setpgid
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // anything the script left behind in its group
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  std::ifstream in(log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  result.output = ss.str();
  if (result.output.size() > 65536) result.output = result.output.substr(result.output.size() - 65536);
  return result;
}

}  // namespace lakerun::interop
