#include "lakerun_testing/emulators.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/ports.h"

namespace lakerun::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kStartTimeout{20};
constexpr int kStartAttempts = 3;  // a free port can be taken by someone else before the emulator binds it

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The node binary: $LAKERUN_NODE, else the first `node` on PATH; empty when none.
std::string FindNode() {
  if (const char* env = std::getenv("LAKERUN_NODE"); env != nullptr && *env) {
    return ::access(env, X_OK) == 0 ? env : "";
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

/// {node, script} for the npm package `package`'s bin `script_in_package`; empty with *why_not when not installed.
std::vector<std::string> NodeProgram(const std::string& package, const std::string& script_in_package,
                                     std::string* why_not) {
  const std::string node = FindNode();
  if (node.empty()) {
    *why_not = StrCat(package, " cannot run: node is not on PATH (or $LAKERUN_NODE is not executable); ",
                      "run scripts/setup.sh");
    return {};
  }
  const std::string script = StrCat(SourceDir(), "/tests/interop/node_modules/", package, "/", script_in_package);
  if (!IsFile(script)) {
    *why_not = StrCat(package, " not installed (no ", script, "): run scripts/setup.sh (npm ci in tests/interop)");
    return {};
  }
  return {node, script};
}

bool PortAnswers(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

std::string LogTail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  return text.size() > 2000 ? "..." + text.substr(text.size() - 2000) : text;
}

using ArgvForPort = std::function<std::vector<std::string>(int port)>;

/// Starts argv_for(port) on a fresh free port until it listens there (bounded); throws IoError naming `name` and
/// the end of its log when it exits first on every attempt, or does not listen in time.
std::unique_ptr<Child> StartListening(const std::string& name, const ArgvForPort& argv_for, const std::string& cwd,
                                      const std::string& log_path, int* port) {
  std::string last_failure;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    *port = FreeLoopbackPort();
    ChildOptions options;
    options.cwd = cwd;
    options.append_log = attempt > 0;
    auto child = std::make_unique<Child>(argv_for(*port), log_path, options);
    const auto deadline = Clock::now() + kStartTimeout;
    while (!PortAnswers(*port)) {
      if (child->Ended()) break;
      if (Clock::now() > deadline) {
        LAKERUN_THROW(IoError, name, " did not listen on 127.0.0.1:", *port, " within ", kStartTimeout.count(),
                      " s; its log (", log_path, ") ends with:\n", LogTail(log_path));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!child->Ended()) return child;
    last_failure = child->Wait(std::chrono::seconds(1)).Describe();
  }
  LAKERUN_THROW(IoError, name, " exited before listening (", last_failure, ") ", kStartAttempts,
                " times; its log (", log_path, ") ends with:\n", LogTail(log_path));
}

std::string DataDir(const std::string& dir) {
  const std::string data = JoinPath(dir, "data");
  LocalFileSystem().CreateDirs(data);
  return data;
}

}  // namespace

EmulatorProcess::EmulatorProcess(std::unique_ptr<Child> child, int port, std::string endpoint, std::string log_path)
    : child_(std::move(child)), port_(port), endpoint_(std::move(endpoint)), log_path_(std::move(log_path)) {}
EmulatorProcess::EmulatorProcess(EmulatorProcess&&) noexcept = default;
EmulatorProcess& EmulatorProcess::operator=(EmulatorProcess&&) noexcept = default;
EmulatorProcess::~EmulatorProcess() = default;  // ~Child SIGKILLs the group

pid_t EmulatorProcess::pid() const { return child_ != nullptr ? child_->pid() : -1; }

bool EmulatorProcess::Running() { return child_ != nullptr && !child_->Ended(); }

void EmulatorProcess::Stop() {
  if (!Running()) return;
  child_->Signal(SIGTERM);
  child_->Wait(std::chrono::seconds(5));
}

void EmulatorProcess::Kill() {
  if (!Running()) return;
  child_->Signal(SIGKILL);
  child_->Wait(std::chrono::seconds(5));
}

std::optional<S3Emulator> StartS3Emulator(const std::string& dir, std::vector<std::string> buckets,
                                          std::string* why_not) {
  const std::vector<std::string> program = NodeProgram("s3rver", "bin/s3rver.js", why_not);
  if (program.empty()) return std::nullopt;
  const std::string data = DataDir(dir);
  const auto argv_for = [&](int port) {
    // s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 (Node 17 and later) keeps in its
    // legacy provider: without it every paged listing fails with HTTP 500.
    std::vector<std::string> argv = {program[0], "--openssl-legacy-provider"};
    argv.insert(argv.end(), program.begin() + 1, program.end());
    for (const char* arg : {"--address", "127.0.0.1", "--silent", "--directory"}) argv.emplace_back(arg);
    argv.push_back(data);
    argv.push_back("--port");
    argv.push_back(std::to_string(port));
    for (const auto& bucket : buckets) {
      argv.push_back("--configure-bucket");
      argv.push_back(bucket);
    }
    return argv;
  };
  int port = 0;
  const std::string log = JoinPath(dir, "emulator.log");
  auto child = StartListening("s3rver", argv_for, dir, log, &port);
  return S3Emulator(std::move(child), port, StrCat("http://127.0.0.1:", port), log);
}

std::optional<AzureEmulator> StartAzureEmulator(const std::string& dir, std::string* why_not) {
  const std::vector<std::string> program = NodeProgram("azurite", "dist/src/blob/main.js", why_not);
  if (program.empty()) return std::nullopt;
  const std::string data = DataDir(dir);
  const auto argv_for = [&](int port) {
    std::vector<std::string> argv = program;
    for (const char* arg : {"--blobHost", "127.0.0.1", "--silent", "--skipApiVersionCheck", "--loose",
                            "--disableTelemetry", "--location"}) {
      argv.emplace_back(arg);
    }
    argv.push_back(data);
    argv.push_back("--blobPort");
    argv.push_back(std::to_string(port));
    return argv;
  };
  int port = 0;
  const std::string log = JoinPath(dir, "emulator.log");
  auto child = StartListening("azurite-blob", argv_for, dir, log, &port);
  return AzureEmulator(std::move(child), port, StrCat("http://127.0.0.1:", port, "/devstoreaccount1"), log);
}

}  // namespace lakerun::testing
