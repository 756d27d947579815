// Run a registered function on N local ranks and get every rank's result (the `@distributed` model).
//
//   std::string Train(const std::string& args) { ...; return result_bytes; }
//   LAKERUN_REGISTER_FUNCTION(train, Train);
//
//   int main(int argc, char** argv) {
//     lakerun::launch::MaybeRunRank(argc, argv);   // a re-executed rank runs its function here and exits
//     lakerun::launch::RunOptions options;
//     options.processes = 4;
//     std::vector<std::string> results = lakerun::launch::Run(options, "train", args);
//   }
//
// Run() re-executes the current binary (/proc/self/exe, same argv) once per rank under Launch() (launcher.h), so
// every rank has the launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR, ...) and may call lakerun::dist::init.
// The rank finds LAKERUN_FUNCTION in its environment inside MaybeRunRank, fetches the arguments from the store,
// calls the function, stores its result (or its exception's message) and exits. Run() returns the results indexed
// by rank, or throws RankFunctionError for the first rank whose function threw, or DistError if a rank died.
//
// Size limit: arguments and each result are at most RunOptions::max_payload_bytes (default 64 MiB). Larger
// arguments throw InvalidArgument before any rank starts; a larger result fails that rank with a message naming
// its size and the limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/launch/launcher.h"

namespace lakerun::launch {

/// A rank function: serialized arguments in, serialized result out. Exceptions reach the caller of Run().
using RankFunction = std::function<std::string(const std::string& args)>;

/// Registers `fn` under `name` (normally through LAKERUN_REGISTER_FUNCTION). Throws InvalidArgument on a duplicate.
bool RegisterFunction(const std::string& name, RankFunction fn);
/// Names of the registered functions, sorted.
std::vector<std::string> RegisteredFunctions();

inline constexpr size_t kDefaultMaxPayloadBytes = size_t{64} << 20;

struct RunOptions {
  /// Number of ranks.
  int processes = 1;
  /// Whole-group restarts after a failure.
  int max_restarts = 0;
  /// Limit on the argument bytes and on each rank's result bytes.
  size_t max_payload_bytes = kDefaultMaxPayloadBytes;
  /// One GPU per rank (gpu.h).
  bool use_gpu = false;
  /// SIGTERM-to-SIGKILL grace when stopping ranks.
  std::chrono::milliseconds grace_period{std::chrono::seconds(5)};
  /// Wall-clock limit of each attempt; zero = none.
  std::chrono::milliseconds timeout{0};
  /// Ranks whose output reaches this process's stdout/stderr (prefixed "[rankN] "); empty = all.
  std::vector<int> show_ranks;
  /// Per-rank log files, as `lakerun launch --log-dir`.
  std::string log_dir;
  /// kFork: the program is re-executed once and the ranks are forked from it in MaybeRunRank(), so libraries load
  /// once (launcher.h, lakerun/base/fork_point.h). main() must call MaybeRunRank() before starting any thread.
  StartMethod start_method = StartMethod::kExec;
};

/// The function of one rank threw (or its result was too large). Names the rank and carries its message.
class RankFunctionError : public DistError {
 public:
  RankFunctionError(int rank, const std::string& function, const std::string& message);
  int rank() const { return rank_; }
  /// The rank's exception message, as thrown.
  const std::string& rank_message() const { return rank_message_; }

 private:
  int rank_;
  std::string rank_message_;
};

/// Runs `function` on options.processes ranks with `args`; returns the results indexed by rank.
/// Throws InvalidArgument (bad options, unknown function, arguments over the limit), RankFunctionError (a rank's
/// function threw) or DistError (a rank died or was stopped without a result, naming it and its exit).
std::vector<std::string> Run(const RunOptions& options, const std::string& function, const std::string& args = "");
/// An alias of Run.
inline std::vector<std::string> run(const RunOptions& options, const std::string& function,
                                    const std::string& args = "") {
  return Run(options, function, args);
}

/// Call first in main(). In a process started by Run(), runs the rank's function and exits (status 0 when the
/// function returned, 1 when it threw); otherwise returns at once and does nothing.
void MaybeRunRank(int argc, char** argv);

// Typed conveniences for trivially copyable argument and result types (numbers, PODs, std::array of them); the
// values travel as their object bytes, so caller and ranks must be the same binary (they are: Run re-executes it).
//
//   struct Config { int epochs; float lr; };
//   double TrainTyped(const Config& c);
//   LAKERUN_REGISTER_TYPED_FUNCTION(train_typed, TrainTyped);
//   std::vector<double> losses = lakerun::launch::RunTyped<double>(options, "train_typed", Config{3, 0.1f});

/// The object bytes of `value`.
template <typename T>
std::string ToBytes(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "ToBytes needs a trivially copyable type");
  return std::string(reinterpret_cast<const char*>(&value), sizeof(T));
}

/// The value whose object bytes are `bytes`; throws InvalidArgument if the size is not sizeof(T).
template <typename T>
T FromBytes(const std::string& bytes) {
  static_assert(std::is_trivially_copyable_v<T>, "FromBytes needs a trivially copyable type");
  LAKERUN_CHECK(bytes.size() == sizeof(T), "launch: expected ", sizeof(T), " bytes for a typed value, got ",
                bytes.size());
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

/// Registers `R fn(const A&)` under `name`, wrapping it in ToBytes/FromBytes.
template <typename R, typename A>
bool RegisterTypedFunction(const std::string& name, R (*fn)(const A&)) {
  return RegisterFunction(name, [fn](const std::string& args) { return ToBytes<R>(fn(FromBytes<A>(args))); });
}

/// Run() for a function registered with RegisterTypedFunction; returns each rank's result as R.
template <typename R, typename A>
std::vector<R> RunTyped(const RunOptions& options, const std::string& function, const A& args) {
  std::vector<R> results;
  for (const std::string& bytes : Run(options, function, ToBytes<A>(args))) results.push_back(FromBytes<R>(bytes));
  return results;
}

}  // namespace lakerun::launch

#define LAKERUN_LAUNCH_CONCAT_INNER(a, b) a##b
#define LAKERUN_LAUNCH_CONCAT(a, b) LAKERUN_LAUNCH_CONCAT_INNER(a, b)
/// LAKERUN_REGISTER_FUNCTION(train, Train): registers Train as "train" at static-initialization time.
#define LAKERUN_REGISTER_FUNCTION(name, fn)                                                  \
  static const bool LAKERUN_LAUNCH_CONCAT(lakerun_function_registered_, __LINE__) =          \
      ::lakerun::launch::RegisterFunction(#name, fn)
/// LAKERUN_REGISTER_TYPED_FUNCTION(name, fn): RegisterTypedFunction(#name, fn) at static-initialization time.
#define LAKERUN_REGISTER_TYPED_FUNCTION(name, fn)                                          \
  static const bool LAKERUN_LAUNCH_CONCAT(lakerun_typed_function_registered_, __LINE__) =  \
      ::lakerun::launch::RegisterTypedFunction(#name, fn)
/// Defines main() that first lets a re-executed rank run its function, then calls `user_main(argc, argv)`.
#define LAKERUN_MAIN_WITH_RANKS(user_main)           \
  int main(int argc, char** argv) {                  \
    ::lakerun::launch::MaybeRunRank(argc, argv);     \
    return user_main(argc, argv);                    \
  }
