#include "dist/gloo_device.h"

#include <lakerun/base/error.h>

#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

RankEnv Env(const std::string& ifname, const std::string& master = "127.0.0.1") {
  RankEnv e;
  e.world_size = 2;
  e.master_addr = master;
  e.master_port = 29500;
  e.gloo_socket_ifname = ifname;
  return e;
}

TEST(GlooDeviceTest, RouteToLoopbackMasterIsLoopback) {
  EXPECT_EQ(LocalAddressRoutingTo("127.0.0.1", 29500), std::optional<std::string>("127.0.0.1"));
  EXPECT_EQ(LocalAddressRoutingTo("no-such-host.invalid", 29500), std::nullopt);
}

TEST(GlooDeviceTest, GlooSocketIfnameComesFirstOneDevicePerInterface) {
  GlooDeviceChoice one = ChooseGlooDevices(Env("lo"), "127.0.0.1");
  EXPECT_EQ(one.devices.size(), 1u);
  EXPECT_EQ(one.description, "GLOO_SOCKET_IFNAME=lo");
  EXPECT_EQ(ChooseGlooDevices(Env("lo,lo"), "").devices.size(), 2u);
  EXPECT_THROW_WITH(ChooseGlooDevices(Env("nosuchif0"), ""), ConfigError, "GLOO_SOCKET_IFNAME", "'nosuchif0'");
  EXPECT_THROW_WITH(ChooseGlooDevices(Env(","), ""), ConfigError, "GLOO_SOCKET_IFNAME=','", "names no interface");
}

TEST(GlooDeviceTest, OptionThenRouteThenDefault) {
  EXPECT_EQ(ChooseGlooDevices(Env(""), "lo").description, "InitOptions::gloo_interface=lo");
  EXPECT_EQ(ChooseGlooDevices(Env(""), "127.0.0.1").description, "InitOptions::gloo_interface=127.0.0.1");
  EXPECT_THROW_WITH(ChooseGlooDevices(Env(""), "nosuchif0"), ConfigError, "InitOptions::gloo_interface",
                    "'nosuchif0'");
  GlooDeviceChoice routed = ChooseGlooDevices(Env(""), "");
  EXPECT_EQ(routed.description, "local address 127.0.0.1 (routes to 127.0.0.1)");
  EXPECT_EQ(routed.devices.size(), 1u);
  EXPECT_EQ(ChooseGlooDevices(Env("", "no-such-host.invalid"), "").description, "Gloo default device");
}

}  // namespace
}  // namespace lakerun::dist
