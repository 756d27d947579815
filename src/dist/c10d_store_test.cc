// dist/c10d_store.h: c10d's Store API over lakerun's store, on the server's own side and through an authenticated
// client, and under the PrefixStore that process groups use.
#include "dist/c10d_store.h"

#include <lakerun/base/error.h>

#include <chrono>
#include <thread>

#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using std::chrono::milliseconds;

constexpr char kSecret[] = "the adapter test's secret, long enough";

std::vector<uint8_t> B(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string S(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

struct Stores {
  std::shared_ptr<rdzv::StoreServer> server;
  std::shared_ptr<rdzv::Store> client;
  Stores() {
    rdzv::StoreServerOptions options;
    options.secret = kSecret;
    server = rdzv::StoreServer::Start(options);
    rdzv::StoreClientOptions client_options;
    client_options.host = "127.0.0.1";
    client_options.port = server->port();
    client_options.secret = kSecret;
    client = rdzv::StoreClient::Connect(client_options);
  }
};

TEST(RdzvC10dStoreTest, EveryOperationOnTheServerAndThroughTheClient) {
  Stores stores;
  for (const auto& store : {std::shared_ptr<rdzv::Store>(stores.server), stores.client}) {
    SCOPED_TRACE(store == stores.client ? "client" : "server");
    auto c10d = c10::make_intrusive<RdzvC10dStore>(store, milliseconds(2000));
    c10d->set("a", B(std::string("x\0y", 3)));
    EXPECT_EQ(S(c10d->get("a")), std::string("x\0y", 3));
    EXPECT_EQ(c10d->add("n", 2), 2);
    EXPECT_EQ(c10d->add("n", 40), 42);
    EXPECT_EQ(S(c10d->compareSet("cs", B(""), B("v"))), "v");
    EXPECT_TRUE(c10d->check({"a", "cs"}));
    EXPECT_FALSE(c10d->check({"absent"}));
    c10d->wait({"a"});
    c10d->wait({"a", "cs"}, milliseconds(100));
    EXPECT_TRUE(c10d->deleteKey("cs"));
    EXPECT_FALSE(c10d->deleteKey("cs"));
    EXPECT_GE(c10d->getNumKeys(), 2);
    c10d->deleteKey("a");
    c10d->deleteKey("n");
  }
}

// get() and wait() without a timeout wait up to setTimeout's; c10d's kNoTimeout does not mean forever.
TEST(RdzvC10dStoreTest, WaitsAreBoundedByTheStoresTimeout) {
  Stores stores;
  auto c10d = c10::make_intrusive<RdzvC10dStore>(stores.client, milliseconds(5000));
  c10d->setTimeout(milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(c10d->get("never"), CommTimeout, "never");
  EXPECT_THROW_WITH(c10d->wait({"never"}, ::c10d::Store::kNoTimeout), CommTimeout, "never");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RdzvC10dStoreTest, PrefixStoreKeysReachTheServerWithThePrefix) {
  Stores stores;
  auto c10d = compat::MakePrefixStore("/worker/attempt_0",
                                      c10::make_intrusive<RdzvC10dStore>(stores.client, milliseconds(2000)));
  c10d->set("k", B("v"));
  // c10d's SET has no reply: a GET on the same connection returns once the server has applied it.
  EXPECT_EQ(S(c10d->get("k")), "v");
  EXPECT_EQ(stores.server->TryGet("/worker/attempt_0/k"), "v");
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    stores.server->Set("/worker/attempt_0/later", "w");
  });
  EXPECT_EQ(S(c10d->get("later")), "w");
  writer.join();
}

}  // namespace
}  // namespace lakerun::dist
