// The rendezvous store's server: c10d TCPStore's wire protocol (store_protocol.h) on one epoll thread, no libtorch.
//
// Unmodified c10d clients connect to it: libtorch/PyTorch up to 2.1 (the legacy numbering, including 1.13's
// callback connection and WATCH_KEY) and 2.3 and later (VALIDATE, PING, queues). Semantics follow c10d's server:
// WAIT answers STOP_WAITING once every awaited key exists (at once, or when the last one is set / added / appended /
// pushed); CANCEL_WAIT drops the connection's waits and answers WAIT_CANCELED; GET or MULTI_GET of a missing key,
// ADD to a value that is not an integer, a malformed or oversized request, and a client that stops reading its
// replies close that connection only. Connections are non-blocking: a client that sends half a request and stalls
// or disconnects holds nothing but its own buffer.
//
// Authentication (StoreAccess::kSecret, src/rdzv/store_auth.h) comes before all of this: until a connection has
// answered its challenge, its bytes are checked as an answer and never parsed as a request.
//
// Thread safety: the loop thread and the StoreServer methods (called by the launcher's threads) share one mutex.
#pragma once

#include <memory>

#include "lakerun/rdzv/store_server.h"
#include "rdzv/store_protocol.h"

namespace lakerun::rdzv::internal {

/// Listens on options.host:options.port (0: a free port); throws DistError naming host:port if it cannot.
std::unique_ptr<StoreServer> StartEpollStoreServer(const StoreServerOptions& options, const StoreLimits& limits);

}  // namespace lakerun::rdzv::internal
