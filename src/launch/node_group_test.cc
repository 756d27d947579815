// NodeGroup in one process: node 0 on the store server itself, node 1 through a client, each in its own thread while
// they join (joining waits for every node).
#include "launch/node_group.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"

namespace lakerun::launch::internal {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr char kSecret[] = "node group test secret, long enough";

class NodeGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rdzv::StoreServerOptions server;
    server.secret = kSecret;
    server_ = rdzv::StoreServer::Start(server);
    rdzv::StoreClientOptions client;
    client.host = "127.0.0.1";
    client.port = server_->port();
    client.secret = kSecret;
    client_ = rdzv::StoreClient::Connect(client);
  }

  NodeGroupOptions Options(int node) const {
    NodeGroupOptions options;
    options.nnodes = 2;
    options.node_rank = node;
    options.nproc = 2;
    options.rdzv_id = "test";
    options.store_address = "127.0.0.1:" + std::to_string(server_->port());
    options.join_timeout = std::chrono::seconds(10);
    options.heartbeat_timeout = milliseconds(500);
    return options;
  }

  // Both nodes joined.
  void Join() {
    auto one = std::async(std::launch::async, [&] { return std::make_unique<NodeGroup>(Options(1), *client_); });
    zero_ = std::make_unique<NodeGroup>(Options(0), *server_);
    one_ = one.get();
  }

  // Polls `group.Failure()` until it has one (bounded).
  static std::optional<NodeFailure> AwaitFailure(NodeGroup& group, milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    while (Clock::now() < deadline) {
      if (std::optional<NodeFailure> failure = group.Failure()) return failure;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return std::nullopt;
  }

  std::unique_ptr<rdzv::StoreServer> server_;
  std::unique_ptr<rdzv::StoreClient> client_;
  std::unique_ptr<NodeGroup> zero_, one_;
};

TEST_F(NodeGroupTest, NumbersRanksInNodeOrderAndAgreesOnTheFirstFailurePublished) {
  Join();
  EXPECT_EQ(zero_->first_rank(), 0);
  EXPECT_EQ(one_->first_rank(), 2);
  EXPECT_EQ(one_->world_size(), 4);
  auto never = [] { return false; };
  auto begin_one = std::async(std::launch::async, [&] { return one_->BeginAttempt(0, never); });
  EXPECT_FALSE(zero_->BeginAttempt(0, never).has_value());
  EXPECT_FALSE(begin_one.get().has_value());
  one_->Publish({1, "h1", 3, 812, "exited with code 3", 3});
  const auto started = Clock::now();
  std::optional<NodeFailure> seen = AwaitFailure(*zero_, milliseconds(3000));
  ASSERT_TRUE(seen.has_value());
  EXPECT_LT(Clock::now() - started, milliseconds(1000));  // one watcher round or two
  EXPECT_EQ(seen->Describe(), "node 1 (h1), rank 3 (pid 812) exited with code 3");
  zero_->Publish({0, "h0", 1, 77, "exited with code 9", 9});  // later: the first one stays
  EXPECT_EQ(zero_->AgreedFailure()->rank, 3);
  EXPECT_EQ(one_->AgreedFailure()->rank, 3);
  one_->Leave();
  zero_->Leave();
}

TEST_F(NodeGroupTest, AnAgentThatStopsHeartbeatingIsLostWithinTheTimeout) {
  Join();
  std::this_thread::sleep_for(milliseconds(200));
  one_.reset();  // its watcher stops: no more heartbeats, and it never left
  const auto stopped = Clock::now();
  std::optional<NodeFailure> lost = AwaitFailure(*zero_, milliseconds(5000));
  ASSERT_TRUE(lost.has_value());
  EXPECT_LT(Clock::now() - stopped, milliseconds(500 + 1000));  // the timeout, and slack for a loaded machine
  EXPECT_EQ(lost->node, 1);
  EXPECT_EQ(lost->rank, -1);
  EXPECT_NE(lost->cause.find("is lost: no heartbeat for"), std::string::npos) << lost->cause;
}

TEST_F(NodeGroupTest, AnAgentThatLeftIsNotLost) {
  Join();
  one_->Leave();
  one_.reset();
  std::this_thread::sleep_for(milliseconds(1200));
  EXPECT_FALSE(zero_->Failure().has_value());
}

}  // namespace
}  // namespace lakerun::launch::internal
