#include "dist/rank_threads.h"

#include <lakerun/base/error.h>

#include "dist/context_impl.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <exception>
#include <thread>
#include <vector>

namespace lakerun::dist::testing {

void RunRanks(int world, const std::function<void(Context&)>& body, std::chrono::milliseconds timeout,
              int ranks_per_host) {
  if (ranks_per_host <= 0) ranks_per_host = world;
  auto store = c10::make_intrusive<::c10d::HashStore>();
  store->setTimeout(timeout);
  std::vector<std::exception_ptr> errors(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        RankEnv env;
        env.launcher = Launcher::kNone;
        env.rank = rank;
        env.world_size = world;
        env.local_rank = rank % ranks_per_host;
        env.local_world_size = ranks_per_host;
        env.master_addr = "127.0.0.1";  // Gloo binds loopback: the route to 127.0.0.1
        env.master_port = 1;
        InitOptions options;
        options.timeout = timeout;
        options.backend = Backend::kGloo;
        std::unique_ptr<Context> ctx = CreateContext(env, store, options);
        body(*ctx);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace lakerun::dist::testing
