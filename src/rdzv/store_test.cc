#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"
#include "rdzv/store_test_util.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::rdzv {
namespace {

using std::chrono::milliseconds;

TEST(StoreTest, ServerOnPortZeroPublishesItsPortAndServesClients) {
  auto server = StoreServer::Start(testing::SecretStore());
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->host(), "127.0.0.1");
  server->Set("a", std::string("x\0y", 3));
  auto client = StoreClient::Connect(testing::Client(server->port(), testing::kTestSecret));
  EXPECT_EQ(client->Get("a", milliseconds(1000)), std::string("x\0y", 3));
  EXPECT_EQ(client->Add("n", 2), 2);
  EXPECT_EQ(server->Add("n", 3), 5);
  EXPECT_FALSE(server->TryGet("missing").has_value());
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    server->Set("later", "v");
  });
  EXPECT_EQ(client->Get("later", milliseconds(5000)), "v");
  writer.join();
}

// Every operation of the interface, through an authenticated client and on the server's own side alike.
TEST(StoreTest, EveryOperationOnBothEnds) {
  auto server = StoreServer::Start(testing::SecretStore());
  auto client = StoreClient::Connect(testing::Client(server->port(), testing::kTestSecret));
  for (Store* store : std::vector<Store*>{server.get(), client.get()}) {
    SCOPED_TRACE(store == server.get() ? "server" : "client");
    EXPECT_EQ(store->CompareSet("cs", "", "first"), "first");
    EXPECT_EQ(store->CompareSet("cs", "nope", "second"), "first");
    EXPECT_EQ(store->CompareSet("cs", "first", "second"), "second");
    EXPECT_EQ(store->CompareSet("absent", "x", "y"), "x");
    EXPECT_TRUE(store->Check({"cs"}));
    EXPECT_FALSE(store->Check({"cs", "absent"}));
    store->Wait({"cs"}, milliseconds(1000));
    EXPECT_THROW_WITH(store->Wait({"cs", "absent"}, milliseconds(100)), CommTimeout, "absent");
    const int64_t before = store->NumKeys();
    EXPECT_TRUE(store->Delete("cs"));
    EXPECT_FALSE(store->Delete("cs"));
    EXPECT_EQ(store->NumKeys(), before - 1);
  }
}

TEST(StoreTest, WaitReturnsWhenTheLastKeyAppears) {
  auto server = StoreServer::Start(testing::SecretStore());
  auto client = StoreClient::Connect(testing::Client(server->port(), testing::kTestSecret));
  server->Set("k1", "1");
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    server->Set("k2", "2");
  });
  client->Wait({"k1", "k2"}, milliseconds(5000));
  writer.join();
  EXPECT_EQ(client->Get("k2", milliseconds(100)), "2");
}

TEST(StoreTest, TwoServersGetDifferentPorts) {
  auto a = StoreServer::Start(testing::OpenStore());
  auto b = StoreServer::Start(testing::OpenStore());
  EXPECT_NE(a->port(), b->port());
}

TEST(StoreTest, GetTimesOutNamingTheKey) {
  auto server = StoreServer::Start(testing::OpenStore());
  auto client = StoreClient::Connect(testing::Client(server->port(), "", milliseconds(5000)));
  EXPECT_THROW_WITH(client->Get("never", milliseconds(200)), CommTimeout, "never", "127.0.0.1:");
}

TEST(StoreTest, BadPortIsRejected) {
  EXPECT_THROW_WITH(StoreClient::Connect(testing::Client(0, "", milliseconds(100))), InvalidArgument, "port");
}

// A server that accepts but never answers: every call that expects a prompt reply fails after reply_timeout, not
// after the default minute (a node agent's store on a host that went down).
TEST(StoreTest, ASilentServerFailsACallAfterTheReplyTimeout) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  StoreClientOptions options;
  options.host = "127.0.0.1";
  options.port = ntohs(addr.sin_port);
  options.dialect = WireDialect::kLegacy;  // nothing to exchange on connect: a c10d 1.13 client
  options.reply_timeout = milliseconds(300);
  auto client = StoreClient::Connect(options);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(client->TryGet("k"), DistError, "no reply within 300 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(3000));
  ::close(listener);
}

}  // namespace
}  // namespace lakerun::rdzv
