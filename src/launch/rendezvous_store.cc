#include "launch/rendezvous_store.h"

#include "lakerun/base/error.h"
#include "lakerun/rdzv/secret.h"

namespace lakerun::launch::internal {
namespace {

std::string ChooseSecret(const LaunchOptions& options) {
  if (!options.rdzv_secret_file.empty()) return rdzv::ReadSecretFile(options.rdzv_secret_file);
  if (std::optional<std::string> secret = rdzv::SecretFromEnvironment(ProcessEnvironment())) return *secret;
  return rdzv::GenerateSecret();
}

bool WantCompat(const LaunchOptions& options) {
  const bool loopback = rdzv::IsLoopbackAddress(options.master_addr);
  switch (options.rdzv_compat) {
    case RdzvCompat::kAuto: return loopback;
    case RdzvCompat::kOff: return false;
    case RdzvCompat::kOn: break;
  }
  LAKERUN_CHECK_AS(ConfigError, loopback, "launch: --rdzv-compat on: the compatibility listener has no "
                   "authentication, so it serves loopback only, but --master-addr is ", options.master_addr,
                   "; use a loopback --master-addr, or --rdzv-compat off (lakerun ranks only)");
  return true;
}

}  // namespace

HostedStore HostStore(const LaunchOptions& options) {
  HostedStore hosted;
  const bool compat = WantCompat(options);
  if (options.store != nullptr) {
    hosted.store = options.store;
    hosted.secret = options.store_secret;
  } else {
    hosted.secret = ChooseSecret(options);
    rdzv::StoreServerOptions store_options;
    store_options.host = options.master_addr;
    store_options.access = rdzv::StoreAccess::kSecret;
    store_options.secret = hosted.secret;
    hosted.own = rdzv::StoreServer::Start(store_options);
    hosted.store = hosted.own.get();
  }
  if (compat) {
    rdzv::StoreServerOptions compat_options;
    compat_options.host = options.master_addr;
    compat_options.access = rdzv::StoreAccess::kOpen;
    hosted.compat = rdzv::StoreServer::Start(compat_options);
  }
  return hosted;
}

void HostedStore::Describe(RankEnvSpec* spec) const {
  const rdzv::StoreServer& master = compat ? *compat : *store;
  spec->master_addr = master.host();
  spec->master_port = master.port();
  spec->rdzv_port = store->port();
  spec->rdzv_secret = secret;
}

}  // namespace lakerun::launch::internal
