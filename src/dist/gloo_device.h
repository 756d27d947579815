// Choosing Gloo's network device(s). libtorch's C++ API ignores GLOO_SOCKET_IFNAME (only the Python binding reads
// it), and its default device advertises whatever gethostname() resolves to, often 127.0.0.1, which breaks
// multi-host jobs. Order:
//   1. GLOO_SOCKET_IFNAME, split on commas: one device per interface;
//   2. InitOptions::gloo_interface: an interface name or a local IP address;
//   3. the local address that routes to MASTER_ADDR (UDP connect() + getsockname(), no packet is sent);
//   4. Gloo's default device.
#pragma once

#include "dist/c10d_compat.h"
#include "dist/rank_env.h"

#include <optional>
#include <string>
#include <vector>

namespace lakerun::dist {

struct GlooDeviceChoice {
  std::vector<compat::GlooDevicePtr> devices;
  /// How they were chosen, for logs ("GLOO_SOCKET_IFNAME=eth0", "route to 10.0.0.1: 10.0.0.7", ...).
  std::string description;
};

/// Throws ConfigError naming the interface or address that Gloo cannot use.
GlooDeviceChoice ChooseGlooDevices(const RankEnv& env, const std::string& option_interface);

/// The local IPv4/IPv6 address the kernel would use to reach host:port; nullopt if it cannot be resolved/routed.
std::optional<std::string> LocalAddressRoutingTo(const std::string& host, int port);

}  // namespace lakerun::dist
