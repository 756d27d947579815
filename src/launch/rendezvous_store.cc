#include "launch/rendezvous_store.h"

#include "lakerun/base/error.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"

namespace lakerun::launch::internal {
namespace {

std::string ChooseSecret(const LaunchOptions& options) {
  if (!options.rdzv_secret_file.empty()) return rdzv::ReadSecretFile(options.rdzv_secret_file);
  if (std::optional<std::string> secret = rdzv::SecretFromEnvironment(ProcessEnvironment())) return *secret;
  LAKERUN_CHECK_AS(ConfigError, options.nnodes == 1, "launch: --nnodes ", options.nnodes, " needs the job's secret ",
                   "on every node: --rdzv-secret-file PATH (mode 600) or LAKERUN_RDZV_SECRET, the same everywhere; "
                   "a secret generated here could not reach the other nodes (docs/launch.md, \"Many nodes\")");
  return rdzv::GenerateSecret();
}

bool WantCompat(const LaunchOptions& options) {
  const bool loopback = rdzv::IsLoopbackAddress(options.master_addr);
  if (options.nnodes > 1) {
    LAKERUN_CHECK_AS(ConfigError, options.rdzv_compat != RdzvCompat::kOn, "launch: --rdzv-compat on: the ",
                     "compatibility listener serves loopback only, which ranks on other nodes cannot reach; a job of ",
                     "several nodes runs lakerun ranks only (they authenticate), not unmodified PyTorch ranks");
    return false;
  }
  switch (options.rdzv_compat) {
    case RdzvCompat::kAuto: return loopback;
    case RdzvCompat::kOff: return false;
    case RdzvCompat::kOn: break;
  }
  LAKERUN_CHECK_AS(ConfigError, loopback, "launch: --rdzv-compat on: the compatibility listener has no "
                   "authentication, so it serves loopback only, but --master-addr is ", options.master_addr,
                   "; use a loopback --master-addr, or --rdzv-compat off (lakerun ranks only)");
  return true;
}

std::unique_ptr<rdzv::StoreServer> Listen(const LaunchOptions& options, rdzv::StoreAccess access, int port,
                                          const std::string& secret) {
  rdzv::StoreServerOptions store_options;
  store_options.host = options.master_addr;
  store_options.port = port;
  store_options.access = access;
  store_options.secret = secret;
  if (options.nnodes == 1) return rdzv::StoreServer::Start(store_options);
  try {
    return rdzv::StoreServer::Start(store_options);
  } catch (const DistError& e) {
    LAKERUN_THROW(DistError, "launch: node 0 cannot host the job's store: ", e.what(), ". Another job, or another ",
                  "node given --node-rank 0, may hold ", options.master_addr, ":", port, "; every job needs its own ",
                  "--master-port, and exactly one node --node-rank 0");
  }
}

// "node 2", or "this node" while the rendezvous has not numbered it.
std::string NodeName(const LaunchOptions& options) {
  return options.node_rank == kNodeRankAtRendezvous ? "this node" : "node " + std::to_string(options.node_rank);
}

// A node other than node 0: its agent's connection to node 0's store.
std::unique_ptr<rdzv::Store> ConnectToNodeZero(const LaunchOptions& options, const std::string& secret) {
  rdzv::StoreClientOptions client;
  client.host = options.master_addr;
  client.port = options.master_port;
  client.secret = secret;
  client.connect_timeout = options.join_timeout;
  // A store that stops answering is node 0 lost (launch/node_group.h): no call waits longer than that takes.
  client.reply_timeout = options.heartbeat_timeout;
  try {
    return rdzv::StoreClient::Connect(client);
  } catch (const CommTimeout& e) {
    LAKERUN_THROW(CommTimeout, "launch: ", NodeName(options), ": node 0's store is not there: ", e.what(),
                  " (start node 0 with --master-addr and --master-port naming it; --join-timeout)");
  } catch (const DistError& e) {
    LAKERUN_THROW(DistError, "launch: ", NodeName(options), ": the store at ", options.master_addr, ":",
                  options.master_port, " is not this job's: ", e.what(), " (another job there, or another secret: ",
                  "every node of a job needs the same secret)");
  }
}

}  // namespace

HostedStore HostStore(const LaunchOptions& options) {
  HostedStore hosted;
  const bool compat = WantCompat(options);
  if (options.store != nullptr) {
    hosted.store = options.store;
    hosted.secret = options.store_secret;
  } else {
    hosted.secret = ChooseSecret(options);
    hosted.node_rank = options.node_rank;
    if (options.node_rank == kNodeRankAtRendezvous) {
      // Whoever can listen at the address is on node 0's host and first there; the others join it.
      try {
        hosted.own = Listen(options, rdzv::StoreAccess::kSecret, options.master_port, hosted.secret);
        hosted.node_rank = 0;
      } catch (const DistError&) {
      }
    } else if (options.node_rank == 0) {
      // MASTER_PORT names the compatibility listener when there is one (Describe): a given port is its.
      hosted.own = Listen(options, rdzv::StoreAccess::kSecret, compat ? 0 : options.master_port, hosted.secret);
    }
    if (!hosted.own) {
      hosted.remote = ConnectToNodeZero(options, hosted.secret);
      hosted.remote_host = options.master_addr;
      hosted.remote_port = options.master_port;
      return hosted;
    }
    hosted.store = hosted.own.get();
  }
  if (compat) hosted.compat = Listen(options, rdzv::StoreAccess::kOpen, options.master_port, "");
  return hosted;
}

rdzv::Store& HostedStore::agents() const {
  if (remote) return *remote;
  return *store;
}

void HostedStore::Describe(RankEnvSpec* spec) const {
  if (remote) {
    spec->master_addr = remote_host;
    spec->master_port = remote_port;
    spec->rdzv_port = remote_port;
    spec->rdzv_secret = secret;
    return;
  }
  const rdzv::StoreServer& master = compat ? *compat : *store;
  spec->master_addr = master.host();
  spec->master_port = master.port();
  spec->rdzv_port = store->port();
  spec->rdzv_secret = secret;
}

}  // namespace lakerun::launch::internal
