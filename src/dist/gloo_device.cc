#include "dist/gloo_device.h"

#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

namespace lakerun::dist {
namespace {

bool IsIpAddress(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

compat::GlooDevicePtr ForInterface(const std::string& name, const char* source) {
  try {
    return ::c10d::ProcessGroupGloo::createDeviceForInterface(name);
  } catch (const std::exception& e) {
    LAKERUN_THROW(ConfigError, source, ": Gloo cannot use network interface '", name, "': ", e.what());
  }
}

compat::GlooDevicePtr ForAddress(const std::string& address, const char* source) {
  try {
    return ::c10d::ProcessGroupGloo::createDeviceForHostname(address);
  } catch (const std::exception& e) {
    LAKERUN_THROW(ConfigError, source, ": Gloo cannot bind local address '", address, "': ", e.what());
  }
}

}  // namespace

std::optional<std::string> LocalAddressRoutingTo(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return std::nullopt;
  std::optional<std::string> result;
  for (addrinfo* ai = found; ai != nullptr && !result; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    // connect() on a UDP socket only picks a route and a source address; nothing goes on the wire.
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char text[INET6_ADDRSTRLEN] = {0};
      const void* src = local.ss_family == AF_INET
                            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (inet_ntop(local.ss_family, src, text, sizeof(text)) != nullptr) result = std::string(text);
    }
    ::close(fd);
  }
  freeaddrinfo(found);
  return result;
}

GlooDeviceChoice ChooseGlooDevices(const RankEnv& env, const std::string& option_interface) {
  GlooDeviceChoice choice;
  if (!env.gloo_socket_ifname.empty()) {
    std::stringstream names(env.gloo_socket_ifname);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name.empty()) continue;
      choice.devices.push_back(ForInterface(name, "GLOO_SOCKET_IFNAME"));
    }
    LAKERUN_CHECK_AS(ConfigError, !choice.devices.empty(), "GLOO_SOCKET_IFNAME='", env.gloo_socket_ifname,
                     "' names no interface");
    choice.description = "GLOO_SOCKET_IFNAME=" + env.gloo_socket_ifname;
  } else if (!option_interface.empty()) {
    choice.devices.push_back(IsIpAddress(option_interface)
                                 ? ForAddress(option_interface, "InitOptions::gloo_interface")
                                 : ForInterface(option_interface, "InitOptions::gloo_interface"));
    choice.description = "InitOptions::gloo_interface=" + option_interface;
  } else if (std::optional<std::string> local =
                 env.master_addr.empty() ? std::nullopt : LocalAddressRoutingTo(env.master_addr, env.master_port)) {
    choice.devices.push_back(ForAddress(*local, "route to MASTER_ADDR"));
    choice.description = "local address " + *local + " (routes to " + env.master_addr + ")";
  } else {
    choice.devices.push_back(::c10d::ProcessGroupGloo::createDefaultDevice());
    choice.description = "Gloo default device";
  }
  return choice;
}

}  // namespace lakerun::dist
