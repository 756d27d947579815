// A connection to a rendezvous store: lakerun's StoreServer (authenticated or open) or, without a secret, c10d's
// own TCPStore server (torchrun's agent store).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "lakerun/rdzv/store.h"

namespace lakerun::rdzv {

/// Which numbering of c10d's request types the client sends (src/rdzv/store_protocol.h). lakerun's server reads
/// both; a c10d server reads only its own.
enum class WireDialect {
  /// c10d 2.3 and later (VALIDATE and PING on connect).
  kValidated,
  /// c10d up to 2.1, libtorch 1.13 included.
  kLegacy,
};

struct StoreClientOptions {
  std::string host;
  int port = 0;
  /// Bounds connecting (retried while refused or unreachable: the server may not listen yet) and the handshake.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  /// Bounds the wait for the reply to a request the server answers at once (all but Get and Wait, which take their
  /// own timeout); past it the call throws DistError and the connection is not usable any more.
  std::chrono::milliseconds reply_timeout{std::chrono::seconds(60)};
  /// The job's secret: the client authenticates, and checks that the server knows the secret too. Empty: no
  /// handshake (a c10d TCPStore server, or lakerun's StoreAccess::kOpen listener).
  std::string secret;
  WireDialect dialect = WireDialect::kValidated;
};

/// One connection; its methods are serialized by a mutex, so threads may share it.
class StoreClient : public Store {
 public:
  /// Connects and authenticates. Throws CommTimeout naming the address when nothing accepts within the timeout;
  /// DistError when the handshake fails (the server refused this client's proof: a different secret; or the server
  /// could not prove the secret: not this job's store), at once, without retrying.
  static std::unique_ptr<StoreClient> Connect(const StoreClientOptions& options);
};

}  // namespace lakerun::rdzv
