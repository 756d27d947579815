// The store server on raw sockets: both c10d dialects byte by byte, waits, watches, and clients that misbehave.
#include "rdzv/store_server.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "rdzv/store_test_util.h"

namespace lakerun::rdzv::internal {
namespace {

using std::chrono::milliseconds;

// A blocking loopback connection with bounded reads.
class RawClient {
 public:
  RawClient(int port, StoreDialect dialect) : dialect_(dialect) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
    if (dialect == StoreDialect::kValidated) {
      std::string hello = Op(StoreOp::kValidate);
      PutU32(&hello, kValidationMagic);
      Send(hello);
    }
  }
  ~RawClient() { Close(); }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::string Op(StoreOp op) const {
    std::string r;
    PutU8(&r, static_cast<uint8_t>(QueryByte(dialect_, op)));
    return r;
  }

  void Send(const std::string& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }

  // Exactly n bytes within 10 s; fails the test (and returns what came) otherwise.
  std::string Read(size_t n) {
    std::string out;
    while (out.size() < n) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 10000) <= 0) {
        ADD_FAILURE() << "no reply within 10 s (" << out.size() << " of " << n << " bytes)";
        return out;
      }
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (got <= 0) {
        ADD_FAILURE() << "connection closed after " << out.size() << " of " << n << " bytes";
        return out;
      }
      out.append(buf, static_cast<size_t>(got));
    }
    return out;
  }

  uint8_t ReadU8() { return static_cast<uint8_t>(Read(1)[0]); }
  int64_t ReadI64() {
    int64_t v = 0;
    const std::string b = Read(8);
    if (b.size() == 8) std::memcpy(&v, b.data(), 8);
    return v;
  }
  std::string ReadBytes() {
    uint64_t n = 0;
    const std::string b = Read(8);
    if (b.size() != 8) return "";
    std::memcpy(&n, b.data(), 8);
    return Read(static_cast<size_t>(n));
  }

  // True if nothing arrives within `wait` (the connection stays open and silent).
  bool Silent(milliseconds wait) {
    pollfd pfd{fd_, POLLIN, 0};
    return ::poll(&pfd, 1, static_cast<int>(wait.count())) == 0;
  }

  // True if the server closes the connection within 10 s.
  bool ClosedByServer() {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 10000) <= 0) return false;
    char c;
    return ::recv(fd_, &c, 1, 0) == 0;
  }

  void Set(const std::string& key, const std::string& value) {
    std::string r = Op(StoreOp::kSet);
    PutBytes(&r, key);
    PutBytes(&r, value);
    Send(r);
  }
  std::string Get(const std::string& key) {
    std::string r = Op(StoreOp::kGet);
    PutBytes(&r, key);
    Send(r);
    return ReadBytes();
  }
  int64_t Add(const std::string& key, int64_t delta) {
    std::string r = Op(StoreOp::kAdd);
    PutBytes(&r, key);
    PutI64(&r, delta);
    Send(r);
    return ReadI64();
  }
  void SendKeys(StoreOp op, const std::vector<std::string>& keys) {
    std::string r = Op(op);
    PutU64(&r, keys.size());
    for (const auto& k : keys) PutBytes(&r, k);
    Send(r);
  }
  int64_t Simple(StoreOp op, const std::string& key) {
    std::string r = Op(op);
    PutBytes(&r, key);
    Send(r);
    return ReadI64();
  }

 private:
  StoreDialect dialect_;
  int fd_ = -1;
};

std::unique_ptr<StoreServer> Start(StoreLimits limits = {}) {
  return StartEpollStoreServer(testing::OpenStore(), limits);
}

TEST(StoreServerTest, ValidatedDialectAnswersEveryOperation) {
  auto server = Start();
  RawClient c(server->port(), StoreDialect::kValidated);
  std::string ping = c.Op(StoreOp::kPing);
  PutU32(&ping, 0xA1B2C3D4);
  c.Send(ping);
  const std::string echoed = c.Read(4);
  uint32_t nonce = 0;
  std::memcpy(&nonce, echoed.data(), 4);
  EXPECT_EQ(nonce, 0xA1B2C3D4u);

  c.Set("a", std::string("x\0y", 3));
  EXPECT_EQ(c.Get("a"), std::string("x\0y", 3));
  EXPECT_EQ(c.Add("n", 5), 5);
  EXPECT_EQ(c.Add("n", -7), -2);
  EXPECT_EQ(c.Get("n"), "-2");

  c.SendKeys(StoreOp::kCheck, {"a", "n"});
  EXPECT_EQ(c.ReadU8(), kCheckReady);
  c.SendKeys(StoreOp::kCheck, {"a", "missing"});
  EXPECT_EQ(c.ReadU8(), kCheckNotReady);
  c.SendKeys(StoreOp::kWait, {"a"});
  EXPECT_EQ(c.ReadU8(), kStopWaiting);

  c.Send(c.Op(StoreOp::kGetNumKeys));
  EXPECT_EQ(c.ReadI64(), 2);

  std::string append = c.Op(StoreOp::kAppend);
  PutBytes(&append, "log");
  PutBytes(&append, "ab");
  c.Send(append);
  c.Send(append);
  EXPECT_EQ(c.Get("log"), "abab");

  std::string multi = c.Op(StoreOp::kMultiSet);
  PutI64(&multi, 2);
  PutBytes(&multi, "m1");
  PutBytes(&multi, "v1");
  PutBytes(&multi, "m2");
  PutBytes(&multi, "v2");
  c.Send(multi);
  c.SendKeys(StoreOp::kMultiGet, {"m2", "m1"});
  EXPECT_EQ(c.ReadBytes(), "v2");
  EXPECT_EQ(c.ReadBytes(), "v1");

  auto compare_set = [&](const std::string& key, const std::string& expected, const std::string& desired) {
    std::string r = c.Op(StoreOp::kCompareSet);
    PutBytes(&r, key);
    PutBytes(&r, expected);
    PutBytes(&r, desired);
    c.Send(r);
    return c.ReadBytes();
  };
  EXPECT_EQ(compare_set("/cs", "", "first"), "first");       // missing + empty expected: created
  EXPECT_EQ(compare_set("/cs", "wrong", "second"), "first");  // mismatch: unchanged
  EXPECT_EQ(compare_set("/cs", "first", "second"), "second");
  EXPECT_EQ(compare_set("absent", "x", "y"), "x");          // missing + expected: c10d answers `expected`
  c.SendKeys(StoreOp::kCheck, {"absent"});
  EXPECT_EQ(c.ReadU8(), kCheckNotReady);

  EXPECT_EQ(c.Simple(StoreOp::kDeleteKey, "a"), 1);
  EXPECT_EQ(c.Simple(StoreOp::kDeleteKey, "a"), 0);

  std::string push = c.Op(StoreOp::kQueuePush);
  PutBytes(&push, "q");
  PutBytes(&push, "one");
  c.Send(push);
  EXPECT_EQ(c.Simple(StoreOp::kQueueLen, "q"), 1);
  EXPECT_EQ(c.Simple(StoreOp::kQueuePop, "q"), 1);
  EXPECT_EQ(c.ReadBytes(), "one");
  EXPECT_EQ(c.Simple(StoreOp::kQueuePop, "q"), 0);

  EXPECT_EQ(server->TryGet("cs"), "second");  // c10d API key "cs" is "/cs" on the wire
  EXPECT_EQ(server->Stats().validated, 1u);
  EXPECT_EQ(server->Stats().protocol_errors, 0u);
}

TEST(StoreServerTest, WaitAnswersWhenTheLastKeyAppearsAndCancelWaitStopsIt) {
  auto server = Start();
  RawClient waiter(server->port(), StoreDialect::kValidated);
  RawClient setter(server->port(), StoreDialect::kLegacy);
  setter.Set("k1", "1");
  waiter.SendKeys(StoreOp::kWait, {"k1", "k2", "k3"});
  setter.Set("k2", "2");
  EXPECT_TRUE(waiter.Silent(milliseconds(100)));
  EXPECT_EQ(setter.Add("k3", 1), 1);  // ADD creates the last key
  EXPECT_EQ(waiter.ReadU8(), kStopWaiting);

  waiter.SendKeys(StoreOp::kWait, {"never"});
  EXPECT_TRUE(waiter.Silent(milliseconds(50)));
  waiter.Send(waiter.Op(StoreOp::kCancelWait));
  EXPECT_EQ(waiter.ReadU8(), kWaitCanceled);
  setter.Set("never", "now");  // the canceled wait must not answer
  EXPECT_TRUE(waiter.Silent(milliseconds(100)));
  EXPECT_EQ(waiter.Get("never"), "now");

  // The launcher's own Set wakes a client's wait.
  waiter.SendKeys(StoreOp::kWait, {"/from_server"});
  server->Set("from_server", "v");
  EXPECT_EQ(waiter.ReadU8(), kStopWaiting);
}

TEST(StoreServerTest, LegacyWatchKeySendsUpdatesOnTheCallbackConnection) {
  auto server = Start();
  RawClient client(server->port(), StoreDialect::kLegacy);
  RawClient callback(server->port(), StoreDialect::kLegacy);
  std::string watch = callback.Op(StoreOp::kWatchKey);
  PutBytes(&watch, "w");
  callback.Send(watch);
  EXPECT_EQ(callback.ReadU8(), static_cast<uint8_t>(WatchEvent::kCallbackRegistered));
  client.Set("w", "1");
  EXPECT_EQ(callback.ReadU8(), static_cast<uint8_t>(WatchEvent::kCreated));
  EXPECT_EQ(callback.ReadBytes(), "w");
  EXPECT_EQ(callback.ReadBytes(), "");
  EXPECT_EQ(callback.ReadBytes(), "1");
  EXPECT_EQ(client.Add("w", 2), 3);
  EXPECT_EQ(callback.ReadU8(), static_cast<uint8_t>(WatchEvent::kUpdated));
  EXPECT_EQ(callback.ReadBytes(), "w");
  EXPECT_EQ(callback.ReadBytes(), "1");
  EXPECT_EQ(callback.ReadBytes(), "3");
  EXPECT_EQ(client.Simple(StoreOp::kDeleteKey, "w"), 1);
  EXPECT_EQ(callback.ReadU8(), static_cast<uint8_t>(WatchEvent::kDeleted));
  EXPECT_EQ(callback.ReadBytes(), "w");
  EXPECT_EQ(callback.ReadBytes(), "3");
  EXPECT_EQ(callback.ReadBytes(), "");
  EXPECT_EQ(server->Stats().legacy, 2u);
}

TEST(StoreServerTest, MalformedInputClosesOnlyThatConnection) {
  auto server = Start();
  RawClient good(server->port(), StoreDialect::kValidated);
  good.Set("k", "v");
  RawClient waiting(server->port(), StoreDialect::kLegacy);
  waiting.SendKeys(StoreOp::kWait, {"later"});

  RawClient garbage(server->port(), StoreDialect::kLegacy);
  garbage.Send(std::string(1, static_cast<char>(200)));
  EXPECT_TRUE(garbage.ClosedByServer());

  RawClient bad_magic(server->port(), StoreDialect::kLegacy);
  std::string validate(1, '\0');
  PutU32(&validate, kValidationMagic);
  bad_magic.Send(validate);  // now in the >= 2.3 dialect
  std::string wrong(1, '\0');
  PutU32(&wrong, 1234);  // a second VALIDATE with the wrong magic
  bad_magic.Send(wrong);
  EXPECT_TRUE(bad_magic.ClosedByServer());

  RawClient missing(server->port(), StoreDialect::kValidated);
  std::string get = missing.Op(StoreOp::kGet);
  PutBytes(&get, "no-such-key");
  missing.Send(get);
  EXPECT_TRUE(missing.ClosedByServer());

  RawClient not_a_number(server->port(), StoreDialect::kValidated);
  std::string add = not_a_number.Op(StoreOp::kAdd);
  PutBytes(&add, "k");  // holds "v"
  PutI64(&add, 1);
  not_a_number.Send(add);
  EXPECT_TRUE(not_a_number.ClosedByServer());

  EXPECT_EQ(good.Get("k"), "v");
  good.Set("later", "x");
  EXPECT_EQ(waiting.ReadU8(), kStopWaiting);
  EXPECT_EQ(server->Stats().protocol_errors, 4u);
}

TEST(StoreServerTest, OversizedRequestIsRejectedFromItsLengthAlone) {
  StoreLimits limits;
  limits.max_request_bytes = 1024;
  auto server = Start(limits);
  RawClient big(server->port(), StoreDialect::kValidated);
  std::string set = big.Op(StoreOp::kSet);
  PutBytes(&set, "k");
  PutU64(&set, uint64_t{1} << 40);  // a terabyte value: refused before any of it is sent
  big.Send(set);
  EXPECT_TRUE(big.ClosedByServer());
  RawClient fine(server->port(), StoreDialect::kValidated);
  fine.Set("k", std::string(900, 'x'));
  EXPECT_EQ(fine.Get("k").size(), 900u);
}

TEST(StoreServerTest, RequestsSplitAcrossWritesAndDisconnectsMidRequest) {
  auto server = Start();
  RawClient split(server->port(), StoreDialect::kValidated);
  std::string set = split.Op(StoreOp::kSet);
  PutBytes(&set, "split");
  split.Send(set);  // c10d's _splitSet: the key now, the value a moment later
  std::this_thread::sleep_for(milliseconds(50));
  std::string value;
  PutBytes(&value, "whole");
  split.Send(value.substr(0, 3));
  std::this_thread::sleep_for(milliseconds(20));
  split.Send(value.substr(3));
  EXPECT_EQ(split.Get("split"), "whole");

  {
    RawClient quitter(server->port(), StoreDialect::kValidated);
    std::string half = quitter.Op(StoreOp::kSet);
    PutBytes(&half, "half");
    PutU64(&half, 100);
    half += "only ten b";
    quitter.Send(half);
    RawClient waiter(server->port(), StoreDialect::kValidated);
    waiter.SendKeys(StoreOp::kWait, {"/gone"});
    std::this_thread::sleep_for(milliseconds(20));
  }  // both disconnect: one mid-request, one mid-wait
  server->Set("gone", "1");
  EXPECT_FALSE(server->TryGet("half").has_value());
  RawClient after(server->port(), StoreDialect::kLegacy);
  EXPECT_EQ(after.Get("/gone"), "1");
  for (int i = 0; i < 100 && server->Stats().open != 2; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(server->Stats().open, 2u);  // `split` and `after`
}

TEST(StoreServerTest, LargeValuesTravelInPiecesBothWays) {
  auto server = Start();
  RawClient c(server->port(), StoreDialect::kValidated);
  std::string big(8 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
  c.Set("/big", big);  // more than the socket buffers: the server reassembles it
  c.Set("/small", "s");
  EXPECT_EQ(c.Get("/big"), big);  // more than the socket buffers: the server finishes it on EPOLLOUT
  EXPECT_EQ(c.Get("/small"), "s");
  EXPECT_EQ(server->TryGet("big"), big);
}

TEST(StoreServerTest, ManyClientsAddAndWaitConcurrently) {
  auto server = Start();
  constexpr int kClients = 16;
  constexpr int kAdds = 200;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      try {
        auto client = StoreClient::Connect(testing::Client(server->port(), "", milliseconds(10000)));
        for (int i = 0; i < kAdds; ++i) client->Add("total", 1);
        client->Set("done" + std::to_string(c), "1");
        for (int peer = 0; peer < kClients; ++peer) client->Get("done" + std::to_string(peer), milliseconds(30000));
      } catch (const std::exception& e) {
        ADD_FAILURE() << "client " << c << ": " << e.what();
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(server->TryGet("total"), std::to_string(kClients * kAdds));
  EXPECT_EQ(server->Stats().protocol_errors, 0u);
}

TEST(StoreServerTest, TheLaunchersOwnOperations) {
  auto server = Start();
  std::thread writer([&] {
    RawClient c(server->port(), StoreDialect::kLegacy);
    std::this_thread::sleep_for(milliseconds(50));
    c.Set("/from_client", "hello");  // what c10d's client sends for key "from_client"
    EXPECT_EQ(c.Add("/count", 1), 1);
  });
  EXPECT_EQ(server->Get("from_client", milliseconds(10000)), "hello");
  writer.join();
  EXPECT_EQ(server->Add("count", 2), 3);
  RawClient reader(server->port(), StoreDialect::kValidated);
  EXPECT_EQ(reader.Get("/count"), "3");
  EXPECT_THROW_WITH(server->Get("never", milliseconds(50)), CommTimeout, "never", "did not appear within 50 ms");
  server->Set("text", "abc");
  EXPECT_THROW_WITH(server->Add("text", 1), DistError, "'/text'", "not an integer");
}

TEST(StoreServerTest, ClientGetTimeoutCancelsTheWaitAndKeepsTheConnection) {
  auto server = Start();
  auto client = StoreClient::Connect(testing::Client(server->port(), "", milliseconds(5000)));
  EXPECT_THROW_WITH(client->Get("late", milliseconds(100)), CommTimeout, "'late'", "127.0.0.1:");
  server->Set("late", "now");
  EXPECT_EQ(client->Get("late", milliseconds(5000)), "now");
  EXPECT_EQ(client->TryGet("late"), "now");
  EXPECT_FALSE(client->TryGet("nope").has_value());
  client->Set("k", "v");  // no reply: the server sees it when it gets to it
  EXPECT_EQ(server->Get("k", milliseconds(10000)), "v");
}

TEST(StoreServerTest, ClientReportsAServerThatGoesAway) {
  auto server = Start();
  const int port = server->port();
  auto client = StoreClient::Connect(testing::Client(port, "", milliseconds(5000)));
  server.reset();
  EXPECT_THROW_WITH(client->Add("k", 1), DistError, "127.0.0.1:" + std::to_string(port), "'k'");
}

}  // namespace
}  // namespace lakerun::rdzv::internal
