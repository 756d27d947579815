// The rendezvous store's server end: hosted by the launcher, by rank 0 when no launcher hosts one, or by a test.
//
// With StoreAccess::kSecret (the default) a connection must pass the challenge-response of src/rdzv/store_auth.h
// before its first request: the server sends a fresh nonce, the client answers with an HMAC of it under the job's
// secret, and the server proves knowledge of the same secret in return. A connection that does not (a c10d
// TCPStore client, a wrong secret, a replayed answer, silence past the handshake timeout) is closed and logged with
// its peer address, having read or written no key. StoreAccess::kOpen serves any c10d TCPStore client without a
// handshake: the launcher's compatibility listener for unmodified PyTorch ranks (loopback only), tests, and rank 0
// of a job started without a secret.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "lakerun/rdzv/store.h"

namespace lakerun::rdzv {

enum class StoreAccess {
  /// Every connection proves knowledge of StoreServerOptions::secret before any request.
  kSecret,
  /// No authentication (c10d TCPStore's behaviour): anyone who reaches the address reads and writes every key.
  kOpen,
};

struct StoreServerOptions {
  /// Address to listen on and that clients are told (MASTER_ADDR). "" or "0.0.0.0" / "::" listen on every
  /// interface. 127.0.0.1 for jobs on one machine.
  std::string host = "127.0.0.1";
  /// 0 picks a free port; port() returns the real one. No bind-close-rebind race.
  int port = 0;
  StoreAccess access = StoreAccess::kSecret;
  /// The job's secret (secret.h); required with kSecret, ignored with kOpen. Never logged.
  std::string secret;
  /// A connection that has not authenticated within this time is closed.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
};

/// Counters of one server (tests, diagnostics, benchmarks).
struct StoreServerStats {
  /// Connections accepted so far, and those still open.
  uint64_t accepted = 0;
  uint64_t open = 0;
  /// Connections closed for a protocol error (malformed request, missing key, ...) after authenticating.
  uint64_t protocol_errors = 0;
  /// Connections by dialect, once their first request decided it.
  uint64_t legacy = 0;
  uint64_t validated = 0;
  /// Connections that proved the secret, and those refused before any request (no proof, wrong proof, timeout).
  uint64_t authenticated = 0;
  uint64_t refused = 0;
};

/// The store's server end. Listening from Start() until destruction; its own methods (Store) need no connection.
class StoreServer : public Store {
 public:
  /// Starts listening; throws DistError naming host:port if it cannot, ConfigError for kSecret without a secret.
  static std::unique_ptr<StoreServer> Start(const StoreServerOptions& options);
  virtual const std::string& host() const = 0;
  virtual int port() const = 0;
  virtual StoreAccess access() const = 0;
  virtual StoreServerStats Stats() const = 0;
};

/// Whether `host` is a loopback address (127.0.0.0/8, ::1) or "localhost": a store there serves this machine only.
bool IsLoopbackAddress(const std::string& host);

}  // namespace lakerun::rdzv
