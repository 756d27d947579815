#include "dist/rendezvous.h"

#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>
#include <lakerun/rdzv/secret.h>
#include <lakerun/rdzv/store_client.h>
#include <lakerun/rdzv/store_server.h>

#include "dist/c10d_store.h"

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

namespace {

// Where rank 0 listens: the address itself when it is loopback (the job lives on this machine), else every interface,
// as c10d's TCPStore does (MASTER_ADDR may be a name that resolves to another of this host's addresses).
std::string ListenAddress(const RankEnv& env) {
  return rdzv::IsLoopbackAddress(env.master_addr) ? env.master_addr : std::string();
}

std::shared_ptr<rdzv::Store> HostStore(const RankEnv& env, const std::string& endpoint) {
  rdzv::StoreServerOptions options;
  options.host = ListenAddress(env);
  options.port = env.master_port;
  options.access = env.rdzv_secret.empty() ? rdzv::StoreAccess::kOpen : rdzv::StoreAccess::kSecret;
  options.secret = env.rdzv_secret;
  if (env.rdzv_secret.empty() && !rdzv::IsLoopbackAddress(env.master_addr)) {
    LAKERUN_LOG(Warning) << "rank 0 hosts an open rendezvous store on port " << env.master_port
                         << " of every interface (" << LauncherName(env.launcher)
                         << "): anyone who can reach this host can read and write the job's keys. Set "
                         << rdzv::kSecretVariable << " or " << rdzv::kSecretFileVariable
                         << " to the same secret on every rank to require it (docs/dist.md).";
  }
  try {
    return rdzv::StoreServer::Start(options);
  } catch (const std::exception& e) {
    LAKERUN_THROW(DistError, "rank 0 cannot host the rendezvous store on ", endpoint, " (",
                  LauncherName(env.launcher), "): ", e.what());
  }
}

// A store that an agent (lakerun's launcher, torchrun) hosts, or that rank 0 hosts. Without a secret the server may be
// c10d's own TCPStore (torchrun's agent), so the client speaks this libtorch's numbering; lakerun's server reads both.
std::shared_ptr<rdzv::Store> ConnectClient(const RankEnv& env, int port, std::chrono::milliseconds timeout) {
  rdzv::StoreClientOptions options;
  options.host = env.master_addr;
  options.port = port;
  options.connect_timeout = timeout;
  options.secret = env.rdzv_secret;
  options.dialect = env.rdzv_secret.empty() ? compat::kTcpStoreDialect : rdzv::WireDialect::kValidated;
  const std::string endpoint = env.master_addr + ":" + std::to_string(port);
  try {
    return rdzv::StoreClient::Connect(options);
  } catch (const CommTimeout& e) {
    LAKERUN_THROW(CommTimeout, "rank ", env.rank, " could not reach the rendezvous store at ", endpoint, " within ",
                  timeout.count(), " ms (", LauncherName(env.launcher),
                  env.use_agent_store ? ", store hosted by the launcher" : ", store hosted by rank 0", "): ", e.what());
  } catch (const DistError& e) {
    LAKERUN_THROW(DistError, "rank ", env.rank, " cannot use the rendezvous store at ", endpoint, ": ", e.what());
  }
}

}  // namespace

compat::StorePtr ConnectStore(const RankEnv& env, std::chrono::milliseconds timeout) {
  const std::string endpoint = env.master_addr + ":" + std::to_string(StorePort(env));
  std::shared_ptr<rdzv::Store> store;
  if (env.use_agent_store) {
    LAKERUN_CHECK_AS(ConfigError, env.rdzv_secret.empty() || env.launcher == Launcher::kLakerun,
                     "rank ", env.rank, ": a rendezvous secret is set (", rdzv::kSecretVariable, " or ",
                     rdzv::kSecretFileVariable, "), but ", LauncherName(env.launcher),
                     "'s agent hosts the store (TORCHELASTIC_USE_AGENT_STORE=True) and c10d's TCPStore cannot "
                     "authenticate; unset the secret, or start the ranks with `lakerun launch`");
    // Under `lakerun launch`, LAKERUN_RDZV_PORT names the authenticated store (MASTER_PORT may be the open
    // compatibility listener for PyTorch ranks).
    store = ConnectClient(env, StorePort(env), timeout);
  } else if (env.rank == 0) {
    store = HostStore(env, endpoint);
  } else {
    store = ConnectClient(env, env.master_port, timeout);
  }
  compat::StorePtr c10d_store = c10::make_intrusive<RdzvC10dStore>(std::move(store), timeout);
  if (env.use_agent_store) {
    // Exactly what PyTorch's env:// rendezvous does under torchrun's agent store.
    return compat::MakePrefixStore("/worker/attempt_" + std::to_string(env.restart_count), c10d_store);
  }
  return c10d_store;
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
