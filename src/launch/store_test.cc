#include "lakerun/launch/store.h"

#include <thread>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::launch {
namespace {

using std::chrono::milliseconds;

TEST(StoreTest, ServerOnPortZeroPublishesItsPortAndServesClients) {
  auto server = StoreServer::Start();
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->host(), "127.0.0.1");
  server->Set("a", std::string("x\0y", 3));
  auto client = StoreClient::Connect("127.0.0.1", server->port(), milliseconds(5000));
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

TEST(StoreTest, TwoServersGetDifferentPorts) {
  auto a = StoreServer::Start();
  auto b = StoreServer::Start();
  EXPECT_NE(a->port(), b->port());
}

TEST(StoreTest, GetTimesOutNamingTheKey) {
  auto server = StoreServer::Start();
  auto client = StoreClient::Connect("127.0.0.1", server->port(), milliseconds(5000));
  EXPECT_THROW_WITH(client->Get("never", milliseconds(200)), CommTimeout, "never", "127.0.0.1:");
}

TEST(StoreTest, BadPortIsRejected) {
  EXPECT_THROW_WITH(StoreClient::Connect("127.0.0.1", 0, milliseconds(100)), InvalidArgument, "port");
}

}  // namespace
}  // namespace lakerun::launch
