// lakerun._launch and lakerun._StoreClient: lakerun's launcher and rendezvous store for lakerun.distributed
// (python/lakerun/distributed.py runs the caller's side, python/lakerun/_rank.py a rank's).
//
// Store layout (one store per _launch call, hosted by the caller):
//   _PAYLOAD_KEY                     the payload bytes the caller passed (the pickled function and arguments)
//   _result_key(attempt, rank)       the record rank `rank` of attempt `attempt` wrote (its result or its error)
//
// _launch releases the GIL for the whole supervision. Python's SIGINT handler is set aside meanwhile
// (LaunchOptions::take_signal_handlers), so Ctrl-C reaches the launcher, which stops every rank; once they are gone
// the handler is back and the signal is delivered to this process again: Python's default raises
// KeyboardInterrupt in the caller.
//
// start_method "fork" (LaunchOptions::start_method = kFork): one rank process is started as a template; _rank.py
// imports torch, cloudpickle and this package, then calls _fork_point(), where the template forks every rank, so the
// interpreter starts and torch loads once instead of once per rank.
#include <pybind11/stl.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/fork_point.h"
#include "lakerun/base/rank_environment.h"
#include "lakerun/launch/launcher.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"
#include "python/bindings.h"

namespace lakerun::python {
namespace {

constexpr char kPayloadKey[] = "/lakerun/python/payload";

std::string ResultKey(int attempt, int rank) {
  return "/lakerun/python/attempt_" + std::to_string(attempt) + "/rank_" + std::to_string(rank);
}

// Seconds from Python (None: no limit) to the launcher's milliseconds (0: no limit).
std::chrono::milliseconds Millis(std::optional<double> seconds, const char* what) {
  if (!seconds) return std::chrono::milliseconds(0);
  LAKERUN_CHECK_AS(ConfigError, std::isfinite(*seconds) && *seconds > 0, "distributed: ", what,
                   " must be a positive number of seconds or None, got ", *seconds);
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(*seconds * 1000)));
}

struct LaunchArgs {
  std::vector<std::string> command;
  int processes = 1;
  bool use_gpu = false;
  int max_restarts = 0;
  std::optional<double> timeout_s;
  double grace_period_s = 5;
  std::map<std::string, std::string> extra_env;
  launch::StartMethod start_method = launch::StartMethod::kExec;
  int stdout_fd = 1, stderr_fd = 2;  // where the prefixed lines go
};

launch::StartMethod ParseStartMethod(const std::string& name) {
  if (name == "exec") return launch::StartMethod::kExec;
  if (name == "fork") return launch::StartMethod::kFork;
  LAKERUN_THROW(ConfigError, "distributed: start_method must be 'exec' or 'fork', got '", name, "'");
}

py::dict Outcome(const launch::LaunchResult& result, rdzv::StoreServer& store) {
  py::list records;
  for (int rank = 0; rank < result.processes; ++rank) {
    std::optional<std::string> record = store.TryGet(ResultKey(result.restarts, rank));
    if (record) {
      records.append(py::bytes(*record));
    } else {
      records.append(py::none());
    }
  }
  py::dict out;
  out["records"] = records;
  out["exit_code"] = result.exit_code;
  out["restarts"] = result.restarts;
  out["timed_out"] = result.timed_out;
  out["interrupted_by"] = result.interrupted_by;
  if (result.failure) {
    py::dict failure;
    failure["rank"] = result.failure->rank;
    failure["exit_code"] = result.failure->exit_code;
    failure["signal"] = result.failure->signal;
    failure["description"] = result.failure->Describe();
    failure["stderr_tail"] = result.failure_stderr_tail;
    out["failure"] = failure;
  } else {
    out["failure"] = py::none();
  }
  return out;
}

// Runs `args.command` on args.processes ranks with `payload` in the store; returns how they ended (Outcome) once
// every rank is gone. A signal that stopped the launcher is delivered to this process again before returning; if
// its Python handler raises (KeyboardInterrupt), that exception propagates instead.
py::dict LaunchRanks(const LaunchArgs& args, const py::bytes& payload) {
  launch::LaunchOptions options;
  options.processes = args.processes;
  options.command = args.command;
  options.use_gpu = args.use_gpu;
  options.max_restarts = args.max_restarts;
  options.timeout = Millis(args.timeout_s, "timeout");
  options.grace_period = Millis(args.grace_period_s, "grace_period");
  options.extra_env = args.extra_env;
  options.take_signal_handlers = true;
  options.start_method = args.start_method;
  options.stdout_fd = args.stdout_fd;
  options.stderr_fd = args.stderr_fd;
  std::string bytes = payload;
  std::unique_ptr<rdzv::StoreServer> store;
  launch::LaunchResult result;
  {
    py::gil_scoped_release release;
    rdzv::StoreServerOptions store_options;
    store_options.secret = rdzv::GenerateSecret();  // only this call's ranks receive it
    store = rdzv::StoreServer::Start(store_options);
    store->Set(kPayloadKey, bytes);
    options.store = store.get();
    options.store_secret = store_options.secret;
    std::fflush(nullptr);  // C stdio written before the ranks' prefixed lines
    result = launch::Launch(options);
  }
  if (result.interrupted_by != 0) {
    ::raise(result.interrupted_by);  // to the handler Launch put back (Python's: noted, run below)
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  return Outcome(result, *store);
}

// The fork point of a rank started with start_method="fork" (lakerun/base/fork_point.h): in the template, forks the
// ranks and returns in each of them with Python's fork hooks run, as os.fork() does, and returns the process
// environment (which the fork set to the rank's) so that os.environ can follow it; None in a process started
// without fork start, where it returns at once. Call it with no other thread running.
py::object ForkPoint() {
  const pid_t before = ::getpid();
  PyOS_BeforeFork();
  lakerun::ForkPoint();
  if (::getpid() == before) {
    PyOS_AfterFork_Parent();
    return py::none();
  }
  PyOS_AfterFork_Child();
  py::dict environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    // Decoded as os.environ decodes it: the file-system encoding, surrogateescape.
    const std::string name(*entry, static_cast<size_t>(eq - *entry));
    environment[py::reinterpret_steal<py::str>(PyUnicode_DecodeFSDefaultAndSize(name.data(), name.size()))] =
        py::reinterpret_steal<py::str>(PyUnicode_DecodeFSDefault(eq + 1));
  }
  return environment;
}

// A rank's authenticated connection to the caller's store, as the rank's environment names it (MASTER_ADDR,
// LAKERUN_RDZV_PORT, LAKERUN_RDZV_SECRET).
class StoreClient {
 public:
  explicit StoreClient(double timeout_s) {
    const EnvLookup env = ProcessEnvironment();
    rdzv::StoreClientOptions options;
    options.host = env("MASTER_ADDR").value_or("");
    LAKERUN_CHECK_AS(ConfigError, !options.host.empty(),
                     "lakerun.distributed rank: MASTER_ADDR is not set (a rank runs under lakerun.distributed)");
    options.port = ReadEnvInt(env, Launcher::kLakerun, rdzv::kStorePortVariable, std::nullopt, 1, 65535);
    options.secret = rdzv::SecretFromEnvironment(env).value_or("");
    options.connect_timeout = Millis(timeout_s, "store timeout");
    py::gil_scoped_release release;
    client_ = rdzv::StoreClient::Connect(options);
  }
  py::bytes Get(const std::string& key, double timeout_s) {
    std::string value;
    {
      py::gil_scoped_release release;
      value = client_->Get(key, Millis(timeout_s, "store timeout"));
    }
    return py::bytes(value);
  }
  void Set(const std::string& key, const py::bytes& value) {
    std::string bytes = value;
    py::gil_scoped_release release;
    client_->Set(key, bytes);
  }
  int64_t Add(const std::string& key, int64_t delta) {
    py::gil_scoped_release release;
    return client_->Add(key, delta);
  }

 private:
  std::unique_ptr<rdzv::StoreClient> client_;
};

}  // namespace

void RegisterLaunch(py::module_& m) {
  m.attr("_PAYLOAD_KEY") = kPayloadKey;
  m.def("_result_key", &ResultKey, py::arg("attempt"), py::arg("rank"),
        "The store key of the record rank `rank` of attempt `attempt` writes.");
  m.def(
      "_launch",
      [](std::vector<std::string> command, int processes, const py::bytes& payload, bool use_gpu, int max_restarts,
         std::optional<double> timeout, double grace_period, std::map<std::string, std::string> extra_env,
         const std::string& start_method, int stdout_fd, int stderr_fd) {
        LaunchArgs a;
        a.command = std::move(command);
        a.processes = processes;
        a.use_gpu = use_gpu;
        a.max_restarts = max_restarts;
        a.timeout_s = timeout;
        a.grace_period_s = grace_period;
        a.extra_env = std::move(extra_env);
        a.start_method = ParseStartMethod(start_method);
        a.stdout_fd = stdout_fd;
        a.stderr_fd = stderr_fd;
        return LaunchRanks(a, payload);
      },
      py::arg("command"), py::arg("processes"), py::arg("payload"), py::arg("use_gpu") = false,
      py::arg("max_restarts") = 0, py::arg("timeout") = py::none(), py::arg("grace_period") = 5.0,
      py::arg("extra_env") = std::map<std::string, std::string>{}, py::arg("start_method") = "exec",
      py::arg("stdout_fd") = 1, py::arg("stderr_fd") = 2,
      "Runs `command` on `processes` ranks under lakerun's launcher (torchrun's environment, rank-prefixed output, "
      "fail-fast, no orphans) with `payload` in its store; returns {records, exit_code, restarts, timed_out, "
      "interrupted_by, failure} once every rank is gone. The GIL is released meanwhile.");
  m.def("_fork_point", &ForkPoint,
        "A rank's fork point under start_method='fork': returns the rank's environment in each forked rank, None "
        "elsewhere.");
  py::class_<StoreClient>(m, "_StoreClient", "A rank's connection to the launcher's store.")
      .def(py::init<double>(), py::arg("timeout"))
      .def("get", &StoreClient::Get, py::arg("key"), py::arg("timeout"),
           "The value of `key`, waiting up to `timeout` seconds for it (lakerun.CommTimeout after).")
      .def("set", &StoreClient::Set, py::arg("key"), py::arg("value"))
      .def("add", &StoreClient::Add, py::arg("key"), py::arg("delta"));
}

}  // namespace lakerun::python
