// The store a launcher hosts for one job: the authenticated store, the optional compatibility listener, the secret,
// and the variables that tell the ranks where they are. On a job of several nodes, node 0's agent hosts the store
// at --master-addr:--master-port and every other agent connects to it (launch/node_group.h).
#pragma once

#include <memory>
#include <string>

#include "lakerun/launch/launcher.h"
#include "lakerun/rdzv/store_server.h"
#include "launch/rank_env.h"

namespace lakerun::launch::internal {

struct HostedStore {
  /// The authenticated store: `own`, or the caller's LaunchOptions::store.
  std::unique_ptr<rdzv::StoreServer> own;
  rdzv::StoreServer* store = nullptr;
  /// The open loopback listener for c10d TCPStore clients; null when off.
  std::unique_ptr<rdzv::StoreServer> compat;
  std::string secret;
  /// Nodes other than node 0: the connection to node 0's store (agent traffic only; ranks connect themselves).
  std::unique_ptr<rdzv::Store> remote;
  /// Nodes other than node 0: where node 0's store is.
  std::string remote_host;
  int remote_port = 0;
  /// This node's rank as far as the store decides it: 0 when it hosts the store, else LaunchOptions::node_rank
  /// (kNodeRankAtRendezvous: the node group assigns it).
  int node_rank = 0;

  /// The store the node agents share: `store` on node 0, else `remote`.
  rdzv::Store& agents() const;

  /// Where the ranks find it: MASTER_ADDR and MASTER_PORT name the compatibility listener when there is one, else
  /// the authenticated store; LAKERUN_RDZV_PORT always names the authenticated store; LAKERUN_RDZV_SECRET.
  void Describe(RankEnvSpec* spec) const;
};

/// Starts the job's store(s) as `options` ask. The secret: LaunchOptions::store_secret with a caller's store, else
/// --rdzv-secret-file, else the environment (lakerun/rdzv/secret.h), else a generated one. Throws ConfigError for
/// --rdzv-compat on with an address that is not loopback, or a bad secret source; DistError when it cannot listen.
/// Several nodes: a secret is required (no generated one: it could not reach the other nodes), there is no
/// compatibility listener, and a node other than node 0 connects to node 0's store instead of hosting one. With
/// kNodeRankAtRendezvous, the node hosts the store when it can listen at --master-addr:--master-port (node 0), and
/// connects to it otherwise.
HostedStore HostStore(const LaunchOptions& options);

}  // namespace lakerun::launch::internal
