#include "lakerun/launch/gpu.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "launch/process.h"

namespace lakerun::launch {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> FromProc() {
  std::vector<std::string> names;
  DIR* dir = ::opendir("/proc/driver/nvidia/gpus");
  if (dir == nullptr) return {};
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  std::vector<std::string> ids;
  for (size_t i = 0; i < names.size(); ++i) ids.push_back(std::to_string(i));
  return ids;
}

// Runs `nvidia-smi -L` with a 10 s bound and counts its "GPU n:" lines.
std::vector<std::string> FromNvidiaSmi() {
  std::string path;
  try {
    path = internal::ResolveProgram("nvidia-smi");
  } catch (const std::exception&) {
    return {};
  }
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {};
  internal::SpawnRequest request;
  request.path = path;
  request.argv = {"nvidia-smi", "-L"};
  request.env = internal::CurrentEnvironment();
  request.stdout_fd = out[1];
  request.stderr_fd = out[1];
  internal::Child child;
  try {
    child = internal::SpawnInOwnGroup(request);
  } catch (const std::exception&) {
    ::close(out[0]);
    ::close(out[1]);
    return {};
  }
  ::close(out[1]);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(out[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(out[0]);
  internal::KillGroup(child.pid, SIGKILL);
  int status;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (child.pidfd >= 0) ::close(child.pidfd);
  std::vector<std::string> ids;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.compare(pos, 4, "GPU ") == 0) ids.push_back(std::to_string(ids.size()));
    pos = end + 1;
  }
  return ids;
}

}  // namespace

std::vector<std::string> ParseCudaVisibleDevices(const std::string& value) {
  std::vector<std::string> ids;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    const std::string id = Trim(value.substr(start, end - start));
    if (id.empty() || id[0] == '-') break;  // CUDA ignores everything from the first invalid entry on
    ids.push_back(id);
    start = end + 1;
  }
  return ids;
}

VisibleGpus DetectVisibleGpus() {
  VisibleGpus gpus;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    gpus.ids = ParseCudaVisibleDevices(env);
    gpus.source = "CUDA_VISIBLE_DEVICES";
    return gpus;
  }
  gpus.ids = FromProc();
  if (!gpus.ids.empty()) {
    gpus.source = "/proc/driver/nvidia/gpus";
    return gpus;
  }
  gpus.ids = FromNvidiaSmi();
  gpus.source = "nvidia-smi -L";
  return gpus;
}

}  // namespace lakerun::launch
