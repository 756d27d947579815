// StoreServer and StoreClient on c10d's TCPStore (the only file of lakerun::launch that sees c10d).
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/launch/store.h"

namespace lakerun::launch {
namespace {

std::vector<uint8_t> ToBytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string FromBytes(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

bool LooksLikeTimeout(const std::string& message) {
  return message.find("imeout") != std::string::npos || message.find("timed out") != std::string::npos;
}

class TcpStore {
 public:
  TcpStore(std::string host, int port, c10::intrusive_ptr<c10d::TCPStore> store)
      : host_(std::move(host)), port_(port), store_(std::move(store)) {}

  std::string Where() const { return host_ + ":" + std::to_string(port_); }

  void Set(const std::string& key, const std::string& value) {
    try {
      store_->set(key, ToBytes(value));
    } catch (const std::exception& e) {
      LAKERUN_THROW(DistError, "store ", Where(), ": set '", key, "' (", value.size(), " bytes) failed: ", e.what());
    }
  }

  std::string Get(const std::string& key, std::chrono::milliseconds timeout) {
    try {
      store_->wait({key}, timeout);
      return FromBytes(store_->get(key));
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (LooksLikeTimeout(what)) {
        LAKERUN_THROW(CommTimeout, "store ", Where(), ": key '", key, "' did not appear within ", timeout.count(),
                      " ms");
      }
      LAKERUN_THROW(DistError, "store ", Where(), ": get '", key, "' failed: ", what);
    }
  }

  std::optional<std::string> TryGet(const std::string& key) {
    try {
      if (!store_->check({key})) return std::nullopt;
      return FromBytes(store_->get(key));
    } catch (const std::exception& e) {
      LAKERUN_THROW(DistError, "store ", Where(), ": get '", key, "' failed: ", e.what());
    }
  }

  int64_t Add(const std::string& key, int64_t delta) {
    try {
      return store_->add(key, delta);
    } catch (const std::exception& e) {
      LAKERUN_THROW(DistError, "store ", Where(), ": add to '", key, "' failed: ", e.what());
    }
  }

  const std::string& host() const { return host_; }
  int port() const { return port_; }

 private:
  std::string host_;
  int port_;
  c10::intrusive_ptr<c10d::TCPStore> store_;
};

class TcpStoreServer final : public StoreServer {
 public:
  explicit TcpStoreServer(const StoreServerOptions& options) : impl_(Open(options)) {}

  void Set(const std::string& key, const std::string& value) override { impl_.Set(key, value); }
  std::string Get(const std::string& key, std::chrono::milliseconds timeout) override {
    return impl_.Get(key, timeout);
  }
  std::optional<std::string> TryGet(const std::string& key) override { return impl_.TryGet(key); }
  int64_t Add(const std::string& key, int64_t delta) override { return impl_.Add(key, delta); }
  const std::string& host() const override { return impl_.host(); }
  int port() const override { return impl_.port(); }

 private:
  static TcpStore Open(const StoreServerOptions& options) {
    LAKERUN_CHECK(options.port >= 0 && options.port <= 65535, "store: port must be in 0..65535, got ",
                  options.port);
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(options.port);
    opts.isServer = true;
    opts.numWorkers = c10::nullopt;
    opts.waitWorkers = false;
    opts.timeout = options.timeout;
    try {
      auto store = c10::make_intrusive<c10d::TCPStore>(options.host, opts);
      return TcpStore(options.host, store->getPort(), store);
    } catch (const std::exception& e) {
      LAKERUN_THROW(DistError, "store: cannot listen on ", options.host, ":", options.port, ": ", e.what());
    }
  }

  TcpStore impl_;
};

class TcpStoreClient final : public StoreClient {
 public:
  TcpStoreClient(const std::string& host, int port, std::chrono::milliseconds timeout)
      : impl_(Open(host, port, timeout)) {}

  void Set(const std::string& key, const std::string& value) override { impl_.Set(key, value); }
  std::string Get(const std::string& key, std::chrono::milliseconds timeout) override {
    return impl_.Get(key, timeout);
  }
  std::optional<std::string> TryGet(const std::string& key) override { return impl_.TryGet(key); }
  int64_t Add(const std::string& key, int64_t delta) override { return impl_.Add(key, delta); }

 private:
  static TcpStore Open(const std::string& host, int port, std::chrono::milliseconds timeout) {
    LAKERUN_CHECK(port > 0 && port <= 65535, "store: port must be in 1..65535, got ", port);
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<uint16_t>(port);
    opts.isServer = false;
    opts.numWorkers = c10::nullopt;
    opts.waitWorkers = false;
    opts.timeout = timeout;
    try {
      return TcpStore(host, port, c10::make_intrusive<c10d::TCPStore>(host, opts));
    } catch (const std::exception& e) {
      LAKERUN_THROW(CommTimeout, "store: cannot connect to ", host, ":", port, " within ", timeout.count(),
                    " ms: ", e.what());
    }
  }

  TcpStore impl_;
};

}  // namespace

std::unique_ptr<StoreServer> StoreServer::Start(const StoreServerOptions& options) {
  return std::make_unique<TcpStoreServer>(options);
}

std::unique_ptr<StoreClient> StoreClient::Connect(const std::string& host, int port,
                                                  std::chrono::milliseconds timeout) {
  return std::make_unique<TcpStoreClient>(host, port, timeout);
}

}  // namespace lakerun::launch
