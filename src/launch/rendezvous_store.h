// The store a launcher hosts for one job: the authenticated store, the optional compatibility listener, the secret,
// and the variables that tell the ranks where they are.
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

  /// Where the ranks find it: MASTER_ADDR and MASTER_PORT name the compatibility listener when there is one, else
  /// the authenticated store; LAKERUN_RDZV_PORT always names the authenticated store; LAKERUN_RDZV_SECRET.
  void Describe(RankEnvSpec* spec) const;
};

/// Starts the job's store(s) as `options` ask. The secret: LaunchOptions::store_secret with a caller's store, else
/// --rdzv-secret-file, else the environment (lakerun/rdzv/secret.h), else a generated one. Throws ConfigError for
/// --rdzv-compat on with an address that is not loopback, or a bad secret source; DistError when it cannot listen.
HostedStore HostStore(const LaunchOptions& options);

}  // namespace lakerun::launch::internal
