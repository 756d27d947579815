#include "launch/proc_inspect.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "launch/process.h"

namespace lakerun::launch::internal {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

ProcessState StateOf(char letter) {
  switch (letter) {
    case 'R': return ProcessState::kRunning;
    case 'S':
    case 'I': return ProcessState::kSleeping;
    case 'D': return ProcessState::kDiskSleep;
    case 'T': return ProcessState::kStopped;
    case 't': return ProcessState::kTraced;
    case 'Z':
    case 'X': return ProcessState::kZombie;
    default: return ProcessState::kUnknown;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<int> Threads(int pid) {
  std::vector<int> tids;
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (dir == nullptr) return tids;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') tids.push_back(std::atoi(entry->d_name));
  }
  ::closedir(dir);
  std::sort(tids.begin(), tids.end());
  return tids;
}

// Every thread's kernel stack, threads with the same stack once.
void KernelStacks(int pid, std::vector<std::string>* lines) {
  std::vector<std::pair<std::string, std::vector<int>>> stacks;  // stack text, its threads
  for (int tid : Threads(pid)) {
    const std::string stack = ReadFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stack");
    if (stack.empty()) continue;
    auto same = std::find_if(stacks.begin(), stacks.end(), [&](const auto& s) { return s.first == stack; });
    if (same == stacks.end()) stacks.push_back({stack, {tid}});
    else same->second.push_back(tid);
  }
  if (stacks.empty()) {
    lines->push_back("kernel stack: /proc/" + std::to_string(pid) + "/task/*/stack is not readable (needs root)");
    return;
  }
  for (const auto& [stack, tids] : stacks) {
    std::string head = "kernel stack of thread" + std::string(tids.size() > 1 ? "s" : "");
    for (int tid : tids) head += " " + std::to_string(tid);
    lines->push_back(head + ":");
    std::istringstream in(stack);
    for (std::string line; std::getline(in, line);) lines->push_back("  " + line);
  }
}

// Reads `fd` until EOF or `deadline`; false when the deadline came first.
bool ReadUntil(int fd, Clock::time_point deadline, std::string* out) {
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out->append(buffer, static_cast<size_t>(n));
  }
}

// `gdb -p PID -batch`'s backtraces of every thread, bounded.
void UserStacks(int pid, milliseconds bound, std::vector<std::string>* lines) {
  std::string gdb;
  try {
    gdb = ResolveProgram("gdb");
  } catch (const std::exception&) {
    lines->push_back("user-space stacks: gdb is not installed");
    return;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return;
  SpawnRequest request;
  request.path = gdb;
  request.argv = {"gdb", "-p", std::to_string(pid), "-batch", "-nx", "-q", "-ex", "set debuginfod enabled off",
                  "-ex", "thread apply all bt 30"};
  request.env = {"PATH=/usr/bin:/bin", "DEBUGINFOD_URLS=", "LC_ALL=C"};
  request.stdout_fd = pipe_fds[1];
  request.stderr_fd = pipe_fds[1];
  Child child;
  try {
    child = SpawnInOwnGroup(request);
  } catch (const std::exception& e) {
    lines->push_back(std::string("user-space stacks: ") + e.what());
  }
  ::close(pipe_fds[1]);
  std::string output;
  const bool finished = child.pid > 0 && ReadUntil(pipe_fds[0], Clock::now() + bound, &output);
  ::close(pipe_fds[0]);
  if (child.pid <= 0) return;
  KillGroup(child.pid, SIGKILL);
  int status;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (child.pidfd >= 0) ::close(child.pidfd);
  lines->push_back("user-space stacks (gdb -p " + std::to_string(pid) + "):");
  // gdb prints the newest thread first; the main thread (Thread 1) goes first here, before the cut at max_lines.
  std::vector<std::vector<std::string>> threads;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Thread ", 0) == 0) threads.emplace_back();
    if (!threads.empty() && (line.rfind("Thread ", 0) == 0 || line.rfind("#", 0) == 0)) {
      threads.back().push_back("  " + line);
    }
  }
  const size_t kept = threads.size();
  for (auto thread = threads.rbegin(); thread != threads.rend(); ++thread) {
    lines->insert(lines->end(), thread->begin(), thread->end());
  }
  if (!finished) lines->push_back("  (gdb gave no complete answer within " + std::to_string(bound.count()) + " ms)");
  else if (kept == 0) lines->push_back("  (gdb printed no backtrace; ptrace not permitted?)");
}

}  // namespace

ProcessSample SampleProcess(int pid) {
  ProcessSample sample;
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so fields count from the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return sample;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 3) sample.state = StateOf(field.empty() ? '?' : field[0]);
    if (i == 14) sample.cpu_ticks = std::atoll(field.c_str());
    if (i == 15) {
      sample.cpu_ticks += std::atoll(field.c_str());
      break;
    }
  }
  std::istringstream io(ReadFile("/proc/" + std::to_string(pid) + "/io"));
  std::string name;
  int64_t value = 0, bytes = 0;
  int found = 0;
  while (io >> name >> value) {
    if (name == "rchar:" || name == "wchar:") {
      bytes += value;
      ++found;
    }
  }
  if (found == 2) sample.io_bytes = bytes;
  return sample;
}

std::vector<std::string> CaptureStacks(int pid, milliseconds bound, size_t max_lines) {
  std::vector<std::string> lines;
  KernelStacks(pid, &lines);
  UserStacks(pid, bound, &lines);
  if (lines.size() > max_lines) {
    const size_t cut = lines.size() - max_lines;
    lines.resize(max_lines);
    lines.push_back("(" + std::to_string(cut) + " more lines not shown)");
  }
  return lines;
}

}  // namespace lakerun::launch::internal
