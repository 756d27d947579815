// The store's authentication: the handshake's messages, and a kSecret server against clients that lack the secret,
// have another one, replay a captured answer, stay silent, or meet an impostor server.
#include "rdzv/store_auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "lakerun/base/crypto.h"
#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "rdzv/store_protocol.h"
#include "rdzv/store_test_util.h"

namespace lakerun::rdzv::internal {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kOtherSecret[] = "another job's secret, just as long";

// A blocking loopback TCP connection that reads with a bound.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  }
  ~Raw() { ::close(fd_); }

  void Send(const std::string& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }

  // Up to n bytes, stopping early when the peer closes or nothing comes for `wait`.
  std::string Read(size_t n, milliseconds wait = milliseconds(10000)) {
    std::string out;
    while (out.size() < n) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(wait.count())) <= 0) break;
      char buf[4096];
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (got <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<size_t>(got));
    }
    return out;
  }

  // Reads until the server closes the connection (true) or 10 s pass (false); `*rest` gets whatever came.
  bool ClosedByServer(std::string* rest = nullptr) {
    std::string got = Read(1 << 20);
    if (rest != nullptr) *rest = got;
    return closed_;
  }

 private:
  int fd_ = -1;
  bool closed_ = false;
};

std::string LegacySet(const std::string& key, const std::string& value) {
  std::string r;
  PutU8(&r, static_cast<uint8_t>(QueryByte(StoreDialect::kLegacy, StoreOp::kSet)));
  PutBytes(&r, WireKey(key));
  PutBytes(&r, value);
  return r;
}

std::string ValidatedGet(const std::string& key) {
  std::string r;
  PutU8(&r, static_cast<uint8_t>(QueryByte(StoreDialect::kValidated, StoreOp::kValidate)));
  PutU32(&r, kValidationMagic);
  PutU8(&r, static_cast<uint8_t>(QueryByte(StoreDialect::kValidated, StoreOp::kGet)));
  PutBytes(&r, WireKey(key));
  return r;
}

void AwaitRefusals(const StoreServer& server, uint64_t n) {
  for (int i = 0; i < 1000 && server.Stats().refused < n; ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_EQ(server.Stats().refused, n);
}

TEST(StoreAuthTest, AnswerAndProofsCheckOnlyWithTheSameSecretAndNonces) {
  const std::string ns = RandomBytes(kNonceBytes);
  const std::string hello = ServerHello(ns);
  ASSERT_EQ(hello.size(), kServerHelloBytes);
  const std::string answer = ClientAnswer(testing::kTestSecret, hello, RandomBytes(kNonceBytes));
  ASSERT_EQ(answer.size(), kClientAnswerBytes);
  EXPECT_EQ(CheckClientAnswer(testing::kTestSecret, ns, answer), AnswerCheck::kValid);
  EXPECT_EQ(CheckClientAnswer(kOtherSecret, ns, answer), AnswerCheck::kWrongProof);
  EXPECT_EQ(CheckClientAnswer(testing::kTestSecret, RandomBytes(kNonceBytes), answer), AnswerCheck::kWrongProof);
  EXPECT_EQ(CheckClientAnswer(testing::kTestSecret, ns, answer.substr(0, 50)), AnswerCheck::kIncomplete);
  EXPECT_EQ(CheckClientAnswer(testing::kTestSecret, ns, LegacySet("k", "v")), AnswerCheck::kNotLakerun);
  EXPECT_EQ(CheckClientAnswer(testing::kTestSecret, ns, std::string(1, '\0')), AnswerCheck::kNotLakerun);

  const std::string proof = ServerProof(testing::kTestSecret, ns, answer);
  EXPECT_TRUE(CheckServerProof(testing::kTestSecret, hello, answer, proof));
  EXPECT_FALSE(CheckServerProof(kOtherSecret, hello, answer, proof));
  // The server's proof is not the client's: neither can be reflected as the other.
  EXPECT_NE(proof, answer.substr(kAuthMagicBytes + kNonceBytes));
  EXPECT_EQ(ClientAnswer(testing::kTestSecret, "not a hello", RandomBytes(kNonceBytes)), "");
}

TEST(StoreAuthTest, C10dProtocolClientWithoutTheSecretReadsAndWritesNothing) {
  auto server = StoreServer::Start(testing::SecretStore());
  server->Set("job/key", "job value");
  {
    Raw c10d(server->port());
    c10d.Send(LegacySet("forged", "stranger's text"));
    std::string got;
    EXPECT_TRUE(c10d.ClosedByServer(&got));
    EXPECT_EQ(got.size(), kServerHelloBytes);  // the challenge, then nothing
  }
  {
    Raw c10d(server->port());
    c10d.Send(ValidatedGet("job/key"));
    std::string got;
    EXPECT_TRUE(c10d.ClosedByServer(&got));
    EXPECT_THAT(got, Not(HasSubstr("job value")));
  }
  AwaitRefusals(*server, 2);
  EXPECT_FALSE(server->TryGet("forged").has_value());
  EXPECT_EQ(server->NumKeys(), 1);
  EXPECT_EQ(server->Stats().authenticated, 0u);
  EXPECT_EQ(server->Stats().legacy + server->Stats().validated, 0u);  // no request was ever parsed
}

TEST(StoreAuthTest, ClientWithAnotherSecretIsRefusedAndNamesNoSecret) {
  auto server = StoreServer::Start(testing::SecretStore());
  ::testing::internal::CaptureStderr();
  try {
    StoreClient::Connect(testing::Client(server->port(), kOtherSecret));
    ADD_FAILURE() << "connected with another secret";
  } catch (const DistError& e) {
    EXPECT_THAT(e.what(), HasSubstr("refused this client's proof"));
    EXPECT_THAT(e.what(), Not(HasSubstr(kOtherSecret)));
    EXPECT_THAT(e.what(), Not(HasSubstr(testing::kTestSecret)));
  }
  AwaitRefusals(*server, 1);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("refused the connection from 127.0.0.1:"));
  EXPECT_THAT(log, HasSubstr("does not match the job's secret"));
  EXPECT_THAT(log, Not(HasSubstr(kOtherSecret)));
  EXPECT_THAT(log, Not(HasSubstr(testing::kTestSecret)));
  EXPECT_EQ(server->NumKeys(), 0);
}

TEST(StoreAuthTest, ClientWithoutASecretIsToldThatTheStoreRequiresOne) {
  auto server = StoreServer::Start(testing::SecretStore());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(StoreClient::Connect(testing::Client(server->port(), "", milliseconds(20000))), DistError,
                    "requires the job's secret");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // not retried until the timeout
}

TEST(StoreAuthTest, ReplayedAnswerIsRefused) {
  auto server = StoreServer::Start(testing::SecretStore());
  std::string captured;
  {
    Raw first(server->port());
    const std::string hello = first.Read(kServerHelloBytes);
    captured = ClientAnswer(testing::kTestSecret, hello, RandomBytes(kNonceBytes));
    first.Send(captured);
    EXPECT_EQ(first.Read(kServerProofBytes).size(), kServerProofBytes);
    first.Send(LegacySet("by the owner", "1"));
  }
  Raw replay(server->port());
  EXPECT_EQ(replay.Read(kServerHelloBytes).size(), kServerHelloBytes);
  replay.Send(captured + LegacySet("by the replayer", "1"));
  EXPECT_TRUE(replay.ClosedByServer());
  AwaitRefusals(*server, 1);
  EXPECT_EQ(server->Stats().authenticated, 1u);
  EXPECT_EQ(server->Get("by the owner", milliseconds(5000)), "1");
  EXPECT_FALSE(server->TryGet("by the replayer").has_value());
}

TEST(StoreAuthTest, SilentConnectionIsClosedAfterTheHandshakeTimeout) {
  StoreServerOptions options = testing::SecretStore();
  options.handshake_timeout = milliseconds(200);
  auto server = StoreServer::Start(options);
  Raw silent(server->port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.ClosedByServer());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  AwaitRefusals(*server, 1);
}

// A server that challenges but cannot prove the secret: the client sends it no request.
TEST(StoreAuthTest, ImpostorServerIsDetectedBeforeAnyRequest) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string after_answer;
  std::thread impostor([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    const std::string hello = ServerHello(RandomBytes(kNonceBytes));
    ::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    char buf[4096];
    size_t got = 0;
    while (got < kClientAnswerBytes) {
      const ssize_t n = ::recv(fd, buf, kClientAnswerBytes - got, 0);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    const std::string fake = RandomBytes(kServerProofBytes);
    ::send(fd, fake.data(), fake.size(), MSG_NOSIGNAL);
    pollfd pfd{fd, POLLIN, 0};
    while (::poll(&pfd, 1, 5000) > 0) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      after_answer.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
  });
  EXPECT_THROW_WITH(StoreClient::Connect(testing::Client(ntohs(addr.sin_port), testing::kTestSecret)), DistError,
                    "could not prove that it knows the job's secret");
  impostor.join();
  ::close(listener);
  EXPECT_EQ(after_answer, "");
}

TEST(StoreAuthTest, SecretServerNeedsASecret) {
  EXPECT_THROW_WITH(StoreServer::Start(testing::SecretStore("")), ConfigError, "needs a secret");
}

}  // namespace
}  // namespace lakerun::rdzv::internal
