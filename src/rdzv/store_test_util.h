// Options for the store tests (private to src/rdzv's tests).
#pragma once

#include <chrono>
#include <string>

#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"

namespace lakerun::rdzv::testing {

inline constexpr char kTestSecret[] = "test secret of the rendezvous store";

/// An open store on loopback (c10d clients, raw protocol tests).
inline StoreServerOptions OpenStore() {
  StoreServerOptions options;
  options.access = StoreAccess::kOpen;
  return options;
}

/// A store on loopback that requires `secret`.
inline StoreServerOptions SecretStore(const std::string& secret = kTestSecret) {
  StoreServerOptions options;
  options.secret = secret;
  return options;
}

inline StoreClientOptions Client(int port, const std::string& secret = "",
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  StoreClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.secret = secret;
  options.connect_timeout = timeout;
  return options;
}

}  // namespace lakerun::rdzv::testing
