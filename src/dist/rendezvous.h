// Rendezvous steps before a process group exists: reaching the store, and checking every peer arrived.
#pragma once

#include "dist/c10d_compat.h"
#include "dist/rank_env.h"

#include <chrono>

namespace lakerun::dist {

/// The store this rank rendezvouses through (lakerun::rdzv, wrapped for c10d by dist/c10d_store.h), already scoped to
/// this job attempt:
/// - agent store (lakerun launcher, torchrun): a client, keys under "/worker/attempt_<restart_count>"; under
///   `lakerun launch` it authenticates with LAKERUN_RDZV_SECRET at LAKERUN_RDZV_PORT;
/// - otherwise rank 0 hosts lakerun's store at MASTER_PORT (requiring the secret when one is set; warning when it is
///   open on an address that is not loopback) and the others connect.
/// Throws CommTimeout when the server cannot be reached within `timeout`; DistError when it cannot be hosted or the
/// handshake fails; ConfigError for a secret under torchrun's agent store, which cannot authenticate.
compat::StorePtr ConnectStore(const RankEnv& env, std::chrono::milliseconds timeout);

/// Announces this rank under a per-rank key and waits until all `world_size` ranks did. On timeout throws
/// CommTimeout naming the ranks that never arrived (first 32), the store endpoint and the timeout.
/// The first rank to time out publishes the verdict in the store, so ranks that did arrive fail with the same
/// list at once; a rank that hosts the store (`hosts_store`) lingers up to 2 s for them to read it before its
/// exit takes the store away. A store that disappears mid-wait is a DistError naming the endpoint.
void WaitForPeers(::c10d::Store& store, int rank, int world_size, std::chrono::milliseconds timeout,
                  const std::string& endpoint, bool hosts_store);

}  // namespace lakerun::dist
