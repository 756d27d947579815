// The function API (function.h): Run() on the caller's side, MaybeRunRank() on the ranks' side.
//
// Store layout (one store per Run, hosted by the caller, with a secret of its own that only its ranks receive):
//   /lakerun/function/args                 the argument bytes
//   /lakerun/function/attempt_<n>/rank_<r> 'R' + result bytes, or 'E' + the exception's message
#include "lakerun/launch/function.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "lakerun/base/fork_point.h"
#include "lakerun/launch/launcher.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"

namespace lakerun::launch {
namespace {

constexpr char kFunctionEnv[] = "LAKERUN_FUNCTION";
constexpr char kMaxPayloadEnv[] = "LAKERUN_FUNCTION_MAX_PAYLOAD";
constexpr char kArgsKey[] = "/lakerun/function/args";
constexpr std::chrono::seconds kRankStoreTimeout{120};

std::string ResultKey(int attempt, int rank) {
  return "/lakerun/function/attempt_" + std::to_string(attempt) + "/rank_" + std::to_string(rank);
}

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, RankFunction>& Registry() {
  static std::map<std::string, RankFunction> registry;
  return registry;
}

std::optional<RankFunction> Lookup(const std::string& name) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(name);
  if (it == Registry().end()) return std::nullopt;
  return it->second;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

// argv of this process, from /proc/self/cmdline.
std::vector<std::string> OwnArgv() {
  std::vector<std::string> argv;
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) LAKERUN_THROW(IoError, "launch: cannot read /proc/self/cmdline");
  std::string data;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    if (end == std::string::npos) end = data.size();
    argv.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  if (argv.empty()) argv.push_back("/proc/self/exe");
  return argv;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(v, &end, 10);
  if (*end != '\0') LAKERUN_THROW(ConfigError, "launch: environment variable ", name, "='", v, "' is not an integer");
  return static_cast<int>(value);
}

std::string EnvString(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') LAKERUN_THROW(ConfigError, "launch: environment variable ", name, " is not set");
  return v;
}

// The rank side; returns the exit status.
int RunRank(const std::string& name) {
  int rank = -1;
  try {
    rank = EnvInt("RANK", -1);
    const int attempt = EnvInt("LAKERUN_RESTART_COUNT", 0);
    const char* limit_env = std::getenv(kMaxPayloadEnv);
    const size_t limit = limit_env != nullptr ? std::strtoull(limit_env, nullptr, 10) : kDefaultMaxPayloadBytes;
    rdzv::StoreClientOptions client;
    client.host = EnvString("MASTER_ADDR");
    client.port = EnvInt(rdzv::kStorePortVariable, 0);
    client.connect_timeout = kRankStoreTimeout;
    client.secret = rdzv::SecretFromEnvironment(ProcessEnvironment()).value_or("");
    auto store = rdzv::StoreClient::Connect(client);
    const std::string args = store->Get(kArgsKey, kRankStoreTimeout);
    std::string record;
    std::optional<RankFunction> fn = Lookup(name);
    if (!fn) {
      record = "Efunction '" + name + "' is not registered in this program (registered: " +
               JoinNames(RegisteredFunctions()) + ")";
    } else {
      try {
        std::string result = (*fn)(args);
        if (result.size() > limit) {
          record = "Eresult of " + std::to_string(result.size()) + " bytes exceeds the limit of " +
                   std::to_string(limit) + " bytes (RunOptions::max_payload_bytes)";
        } else {
          record = "R" + result;
        }
      } catch (const std::exception& e) {
        record = std::string("E") + e.what();
      } catch (...) {
        record = "Ean exception that is not a std::exception";
      }
    }
    store->Set(ResultKey(attempt, rank), record);
    // A set has no reply in c10d's protocol. A request that has one, served after it on the same connection, makes
    // sure the result is in the store before this process exits and the caller, seeing the exit, looks for it.
    store->Add(ResultKey(attempt, rank) + "/written", 1);
    if (record[0] == 'R') return 0;
    // Also on stderr, so the launcher's failure report quotes it.
    std::fprintf(stderr, "function '%s' failed on rank %d: %s\n", name.c_str(), rank, record.c_str() + 1);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[lakerun] rank %d: function '%s' could not run: %s\n", rank, name.c_str(), e.what());
    return 1;
  }
}

}  // namespace

RankFunctionError::RankFunctionError(int rank, const std::string& function, const std::string& message)
    : DistError("rank " + std::to_string(rank) + ": function '" + function + "' failed: " + message),
      rank_(rank),
      rank_message_(message) {}

bool RegisterFunction(const std::string& name, RankFunction fn) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  LAKERUN_CHECK(!name.empty(), "launch: RegisterFunction: empty name");
  LAKERUN_CHECK(fn != nullptr, "launch: RegisterFunction: function '", name, "' is empty");
  LAKERUN_CHECK(Registry().emplace(name, std::move(fn)).second, "launch: function '", name,
                "' is registered twice");
  return true;
}

std::vector<std::string> RegisteredFunctions() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::string> names;
  for (const auto& [name, fn] : Registry()) names.push_back(name);
  return names;
}

std::vector<std::string> Run(const RunOptions& options, const std::string& function, const std::string& args) {
  LAKERUN_CHECK(Lookup(function).has_value(), "launch: function '", function,
                "' is not registered in this program (LAKERUN_REGISTER_FUNCTION); registered: ",
                JoinNames(RegisteredFunctions()));
  LAKERUN_CHECK(args.size() <= options.max_payload_bytes, "launch: arguments for function '", function, "' are ",
                args.size(), " bytes, more than the limit of ", options.max_payload_bytes,
                " bytes (RunOptions::max_payload_bytes)");
  rdzv::StoreServerOptions store_options;
  store_options.secret = rdzv::GenerateSecret();
  auto store = rdzv::StoreServer::Start(store_options);
  store->Set(kArgsKey, args);

  LaunchOptions launch;
  launch.processes = options.processes;
  launch.command = OwnArgv();
  launch.command[0] = "/proc/self/exe";
  launch.grace_period = options.grace_period;
  launch.max_restarts = options.max_restarts;
  launch.show_ranks = options.show_ranks;
  launch.log_dir = options.log_dir;
  launch.use_gpu = options.use_gpu;
  launch.timeout = options.timeout;
  launch.start_method = options.start_method;
  launch.store = store.get();
  launch.store_secret = store_options.secret;
  launch.extra_env[kFunctionEnv] = function;
  launch.extra_env[kMaxPayloadEnv] = std::to_string(options.max_payload_bytes);
  std::cout.flush();
  std::fflush(stdout);
  const LaunchResult result = Launch(launch);

  if (result.exit_code == 0) {
    std::vector<std::string> results;
    for (int rank = 0; rank < result.processes; ++rank) {
      std::optional<std::string> record = store->TryGet(ResultKey(result.restarts, rank));
      if (!record || record->empty() || (*record)[0] != 'R') {
        LAKERUN_THROW(DistError, "launch: rank ", rank, " exited with code 0 without a result for function '",
                      function, "' (does main() call lakerun::launch::MaybeRunRank(argc, argv) first?)");
      }
      results.push_back(record->substr(1));
    }
    return results;
  }
  if (result.failure) {
    const int rank = result.failure->rank;
    std::optional<std::string> record = store->TryGet(ResultKey(result.restarts, rank));
    if (record && !record->empty() && (*record)[0] == 'E') throw RankFunctionError(rank, function, record->substr(1));
    std::string message = "launch: function '" + function + "': rank " + std::to_string(rank) + " " +
                          result.failure->Describe();
    for (const auto& line : result.failure_stderr_tail) message += "\n  | " + line;
    throw DistError(message);
  }
  if (result.timed_out) {
    LAKERUN_THROW(CommTimeout, "launch: function '", function, "' ran past the timeout of ", options.timeout.count(),
                  " ms on ", result.processes, " ranks");
  }
  LAKERUN_THROW(DistError, "launch: function '", function, "' was interrupted by signal ", result.interrupted_by,
                " (exit code ", result.exit_code, ")");
}

void MaybeRunRank(int argc, char** argv) {
  const char* name = std::getenv(kFunctionEnv);
  if (name == nullptr || *name == '\0') return;
  ::lakerun::ForkPoint();  // RunOptions::start_method == kFork: the ranks are forked here
  const std::string function = name;
  ::unsetenv(kFunctionEnv);  // a function that calls Run() itself starts its own, fresh ranks
  const int code = RunRank(function);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::exit(code);
}

}  // namespace lakerun::launch
