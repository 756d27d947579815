// Unmodified c10d TCPStore clients (the libtorch this build links: 1.13 on Debian, 2.x with a CUDA PyTorch) against
// lakerun's torch-free store server. Only this test links torch; lakerun::launch does not.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lakerun/rdzv/store_client.h"
#include "rdzv/store_test_util.h"
#include "lakerun_testing/matchers.h"
#include "rdzv/store_server.h"

namespace lakerun::rdzv {
namespace {

using std::chrono::milliseconds;

std::vector<uint8_t> B(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::string S(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

c10::intrusive_ptr<c10d::TCPStore> Connect(int port, milliseconds timeout = milliseconds(10000)) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = false;
  options.numWorkers = c10::nullopt;
  options.waitWorkers = false;
  options.timeout = timeout;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  options.useLibUV = false;  // a client's libuv flag only checks that libtorch has libuv (src/dist/c10d_compat.h)
#endif
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
}

TEST(StoreC10dTest, C10dClientRunsEveryOperation) {
  auto server = StoreServer::Start(testing::OpenStore());
  auto store = Connect(server->port());

  store->set("a", B(std::string("x\0y", 3)));
  EXPECT_EQ(S(store->get("a")), std::string("x\0y", 3));
  EXPECT_EQ(store->add("n", 2), 2);
  EXPECT_EQ(store->add("n", 40), 42);
  EXPECT_EQ(server->Add("n", 1), 43);  // the launcher's side sees the same counter
  EXPECT_EQ(S(store->get("n")), "43");

  EXPECT_TRUE(store->check({"a", "n"}));
  EXPECT_FALSE(store->check({"a", "missing"}));
  store->wait({"a", "n"});
  store->wait({"a"}, milliseconds(1000));

  EXPECT_EQ(S(store->compareSet("cs", B(""), B("first"))), "first");
  EXPECT_EQ(S(store->compareSet("cs", B("nope"), B("second"))), "first");
  EXPECT_EQ(S(store->compareSet("cs", B("first"), B("second"))), "second");
  EXPECT_EQ(server->TryGet("cs"), "second");

  EXPECT_EQ(store->getNumKeys(), 3);  // a, n, cs
  EXPECT_TRUE(store->deleteKey("a"));
  EXPECT_FALSE(store->deleteKey("a"));
  EXPECT_EQ(store->getNumKeys(), 2);
  EXPECT_FALSE(store->check({"a"}));

  server->Set("from_launcher", "hello");
  EXPECT_EQ(S(store->get("from_launcher")), "hello");
  EXPECT_EQ(server->Stats().protocol_errors, 0u);
}

TEST(StoreC10dTest, WaitIsWokenByAnotherClientAndTimesOut) {
  auto server = StoreServer::Start(testing::OpenStore());
  auto waiter = Connect(server->port());
  auto setter = Connect(server->port());
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    setter->set("k1", B("1"));
    setter->add("k2", 1);
  });
  waiter->wait({"k1", "k2"}, milliseconds(10000));
  later.join();
  EXPECT_EQ(S(waiter->get("k2")), "1");

  // A timed-out wait throws; a fresh client keeps working (1.13's client leaves its own socket mid-reply).
  auto impatient = Connect(server->port());
  EXPECT_THROW(impatient->wait({"never"}, milliseconds(200)), c10::Error);
  auto fresh = Connect(server->port());
  fresh->set("after", B("ok"));
  EXPECT_EQ(S(waiter->get("after")), "ok");
}

TEST(StoreC10dTest, PrefixStoreAsTorchrunRanksUseIt) {
  auto server = StoreServer::Start(testing::OpenStore());
  constexpr int kRanks = 4;
  std::vector<std::thread> ranks;
  std::atomic<int> done{0};
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      auto base = Connect(server->port());
      c10d::PrefixStore store("/worker/attempt_0", base);
      store.set("rank" + std::to_string(r), B(std::to_string(r * r)));
      store.add("arrived", 1);
      std::vector<std::string> keys;
      for (int p = 0; p < kRanks; ++p) keys.push_back("rank" + std::to_string(p));
      store.wait(keys, milliseconds(20000));
      for (int p = 0; p < kRanks; ++p) EXPECT_EQ(S(store.get(keys[p])), std::to_string(p * p));
      ++done;
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(done.load(), kRanks);
  EXPECT_EQ(server->TryGet("/worker/attempt_0/arrived"), std::to_string(kRanks));
}

#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 2)
// watchKey() (c10d <= 2.1) runs on the client's second, callback connection.
TEST(StoreC10dTest, WatchKeyCallbacksFire) {
  auto server = StoreServer::Start(testing::OpenStore());
  auto watcher = Connect(server->port());
  auto writer = Connect(server->port());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> seen;
  watcher->watchKey("w", [&](c10::optional<std::string> old_value, c10::optional<std::string> new_value) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back((old_value ? *old_value : "<none>") + "->" + (new_value ? *new_value : "<none>"));
    cv.notify_all();
  });
  writer->set("w", B("1"));
  writer->add("w", 1);
  writer->deleteKey("w");
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen.size() == 3; }));
  EXPECT_EQ(seen, (std::vector<std::string>{"<none>->1", "1->2", "2-><none>"}));
}
#endif

TEST(StoreC10dTest, C10dAndLakerunClientsShareTheStore) {
  auto server = StoreServer::Start(testing::OpenStore());
  auto store = Connect(server->port());
  store->set("k", B("v"));
  auto lakerun_client = StoreClient::Connect(testing::Client(server->port(), "", milliseconds(5000)));
  EXPECT_EQ(lakerun_client->Add("counter", 1), 1);
  EXPECT_EQ(store->add("counter", 1), 2);
  EXPECT_EQ(lakerun_client->Get("k", milliseconds(1000)), "v");
  {
    StoreServerStats stats = server->Stats();
    // lakerun's client speaks the >= 2.3 numbering, and so does c10d's from 2.3 on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    EXPECT_EQ(stats.validated, 2u);
#else
    EXPECT_EQ(stats.validated, 1u);
    EXPECT_GE(stats.legacy, 1u);
#endif
  }
  EXPECT_EQ(S(store->get("k")), "v");
}

}  // namespace
}  // namespace lakerun::rdzv
