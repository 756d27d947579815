#include "dist/rendezvous.h"

#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>

#include <algorithm>
#include <thread>

namespace lakerun::dist {
namespace {

constexpr char kArrivedPrefix[] = "lakerun/arrived/";
constexpr char kArrivedCount[] = "lakerun/arrived_count";
constexpr char kVerdict[] = "lakerun/arrival_timeout";        // set by the first rank that timed out
constexpr char kVerdictSeen[] = "lakerun/arrival_timeout_seen";  // bumped by each rank that read it

std::string ArrivedKey(int rank) { return kArrivedPrefix + std::to_string(rank); }

}  // namespace

compat::StorePtr ConnectStore(const RankEnv& env, std::chrono::milliseconds timeout) {
  std::string endpoint = env.master_addr + ":" + std::to_string(env.master_port);
  bool server = !env.use_agent_store && env.rank == 0;
  compat::StorePtr store;
  try {
    store = compat::MakeTcpStore(env.master_addr, static_cast<uint16_t>(env.master_port), server, timeout);
  } catch (const std::exception& e) {
    if (server) {
      LAKERUN_THROW(DistError, "rank 0 cannot host the rendezvous store on ", endpoint, " (", LauncherName(env.launcher),
                    "): ", compat::Describe(e));
    }
    LAKERUN_THROW(CommTimeout, "rank ", env.rank, " could not reach the rendezvous store at ", endpoint, " within ",
                  timeout.count(), " ms (", LauncherName(env.launcher),
                  env.use_agent_store ? ", store hosted by the launcher" : ", store hosted by rank 0", "): ",
                  compat::Describe(e));
  }
  store->setTimeout(timeout);
  if (env.use_agent_store) {
    // Exactly what PyTorch's env:// rendezvous does under torchrun's agent store.
    return compat::MakePrefixStore("/worker/attempt_" + std::to_string(env.restart_count), store);
  }
  return store;
}

void WaitForPeers(::c10d::Store& store, int rank, int world_size, std::chrono::milliseconds timeout,
                  const std::string& endpoint, bool hosts_store) {
  try {
    store.set(ArrivedKey(rank), std::vector<uint8_t>{'1'});
    int64_t arrived = store.add(kArrivedCount, 1);
    const auto start = std::chrono::steady_clock::now();
    auto deadline = start + timeout;
    auto pause = std::chrono::milliseconds(1);
    while (arrived < world_size) {
      if (store.check({kVerdict})) {
        // Another rank timed out first: fail with its list of missing ranks.
        std::vector<uint8_t> verdict = store.get(kVerdict);
        store.add(kVerdictSeen, 1);
        LAKERUN_THROW(CommTimeout, "rank ", rank, ": ", std::string(verdict.begin(), verdict.end()));
      }
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(pause);
      // Every rank past the last one's arrival sleeps out its current pause before building the process group,
      // and the group needs them all: poll briskly while ranks are still starting (a libtorch rank takes ~0.5-2 s
      // to load on a busy host), then back off. A poll is one small request to the store.
      const auto cap = std::chrono::steady_clock::now() - start < std::chrono::seconds(10) ? std::chrono::milliseconds(4)
                                                                                            : std::chrono::milliseconds(50);
      pause = std::min(pause * 2, cap);
      arrived = store.add(kArrivedCount, 0);
    }
    if (arrived >= world_size) return;
    std::vector<int> missing;
    for (int r = 0; r < world_size; ++r) {
      if (!store.check({ArrivedKey(r)})) missing.push_back(r);
    }
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < 32; ++i) names += (i ? ", " : "") + std::to_string(missing[i]);
    if (missing.size() > 32) names += StrCat(" and ", missing.size() - 32, " more");
    std::string verdict = StrCat(missing.size(), " of ", world_size, " ranks did not arrive at the rendezvous store ",
                                 endpoint, " within ", timeout.count(), " ms; missing rank",
                                 missing.size() == 1 ? " " : "s ", names);
    store.set(kVerdict, std::vector<uint8_t>(verdict.begin(), verdict.end()));
    if (hosts_store) {
      // Keep the store up until every rank that arrived has read the verdict (bounded).
      int64_t others = world_size - static_cast<int64_t>(missing.size()) - 1;
      auto linger = std::chrono::steady_clock::now() + std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(2));
      while (store.add(kVerdictSeen, 0) < others && std::chrono::steady_clock::now() < linger) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    LAKERUN_THROW(CommTimeout, "rank ", rank, ": ", verdict);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    LAKERUN_THROW(DistError, "rank ", rank, " lost the rendezvous store ", endpoint,
                  " while waiting for its peers (the rank hosting it may have given up or died): ",
                  compat::Describe(e));
  }
}

}  // namespace lakerun::dist
