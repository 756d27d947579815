// The rendezvous store behind lakerun's own small interface.
//
// The launcher hosts the store (StoreServer::Start) before it spawns any rank; ranks reach it as clients
// (StoreClient::Connect) at MASTER_ADDR:MASTER_PORT. Both ends speak c10d TCPStore's wire protocol without linking
// libtorch (src/launch/store_protocol.h), so unmodified PyTorch programs (env:// with
// TORCHELASTIC_USE_AGENT_STORE=True), lakerun::dist and lakerun's own ranks share one server. Keys here are c10d
// API keys: a c10d client's key "k" and this interface's key "k" are the same entry. Nothing here exposes the
// implementation, so it can be replaced (multi-host needs an authenticated store; TCPStore has no authentication).
//
// Values are byte strings. Every blocking call takes a timeout and throws CommTimeout when it passes; a broken
// connection throws DistError naming the store's address and the key.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace lakerun::launch {

struct StoreServerOptions {
  /// Address the ranks are told to connect to (MASTER_ADDR). 127.0.0.1 for jobs on one machine.
  std::string host = "127.0.0.1";
  /// 0 picks a free port; port() returns the real one. No bind-close-rebind race.
  int port = 0;
  /// Default timeout of the server's own client operations.
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
};

/// Operations shared by both ends.
class Store {
 public:
  virtual ~Store() = default;
  virtual void Set(const std::string& key, const std::string& value) = 0;
  /// Waits up to `timeout` for `key` to exist, then returns its value. Throws CommTimeout naming the key.
  virtual std::string Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  /// The value of `key` if it exists now; never waits.
  virtual std::optional<std::string> TryGet(const std::string& key) = 0;
  /// Atomically adds `delta` to the integer at `key` (0 when absent) and returns the new value.
  virtual int64_t Add(const std::string& key, int64_t delta) = 0;
};

/// The store's server end, owned by the launcher. Listening from Start() until destruction.
class StoreServer : public Store {
 public:
  /// Starts listening; throws DistError naming host:port if it cannot.
  static std::unique_ptr<StoreServer> Start(const StoreServerOptions& options = {});
  virtual const std::string& host() const = 0;
  virtual int port() const = 0;
};

/// A rank's connection to the launcher's store.
class StoreClient : public Store {
 public:
  /// Connects to host:port, retrying until `timeout`; throws CommTimeout naming the address.
  static std::unique_ptr<StoreClient> Connect(const std::string& host, int port, std::chrono::milliseconds timeout);
};

}  // namespace lakerun::launch
