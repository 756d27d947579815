// StoreClient on c10d TCPStore's wire protocol (store_protocol.h): with a secret, the handshake of store_auth.h
// first; then, in the >= 2.3 numbering, VALIDATE and PING, or nothing in the legacy numbering. It talks to lakerun's
// store (store_server.cc) or, without a secret, to a c10d TCPStore server of its dialect; keys go out as c10d's client
// sends them ("/" + key).
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "lakerun/base/crypto.h"
#include "lakerun/base/error.h"
#include "lakerun/rdzv/store_client.h"
#include "rdzv/store_auth.h"
#include "rdzv/store_protocol.h"

namespace lakerun::rdzv {
namespace {

using Clock = std::chrono::steady_clock;
using internal::StoreDialect;
using internal::StoreOp;

// Time a reply may take once the server has what it needs (every reply except WAIT's is immediate).

// A lakerun server challenges at once; silence this long means the server at the address is not one.
constexpr std::chrono::milliseconds kChallengeTimeout{10000};

// A reply did not come within the deadline.
struct ReplyTimeout {};

// The handshake failed for a reason that retrying cannot fix (a different secret, not this job's store).
struct AuthFailure {
  std::string message;
};

class ProtocolStoreClient final : public StoreClient {
 public:
  explicit ProtocolStoreClient(const StoreClientOptions& options)
      : host_(options.host),
        port_(options.port),
        secret_(options.secret),
        reply_timeout_(options.reply_timeout),
        dialect_(options.dialect == WireDialect::kLegacy ? StoreDialect::kLegacy : StoreDialect::kValidated) {
    LAKERUN_CHECK(port_ > 0 && port_ <= 65535, "store: port must be in 1..65535, got ", port_);
    Connect(options.connect_timeout);
  }

  ~ProtocolStoreClient() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void Set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string request = Begin(StoreOp::kSet);
    internal::PutBytes(&request, internal::WireKey(key));
    internal::PutBytes(&request, value);
    SendAll(request, "set '" + key + "'");
  }

  std::string Get(const std::string& key, std::chrono::milliseconds timeout) override {
    std::lock_guard<std::mutex> lock(mu_);
    Wait(key, timeout);
    return DoGet(key);
  }

  std::optional<std::string> TryGet(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string request = Begin(StoreOp::kCheck);
    internal::PutU64(&request, 1);
    internal::PutBytes(&request, internal::WireKey(key));
    const std::string what = "get '" + key + "'";
    SendAll(request, what);
    if (ReadU8(what, Clock::now() + reply_timeout_) != internal::kCheckReady) return std::nullopt;
    return DoGet(key);
  }

  int64_t Add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string request = Begin(StoreOp::kAdd);
    internal::PutBytes(&request, internal::WireKey(key));
    internal::PutI64(&request, delta);
    const std::string what = "add to '" + key + "'";
    SendAll(request, what);
    int64_t value = 0;
    ReadReply(&value, sizeof(value), what, Clock::now() + reply_timeout_);
    return value;
  }

  std::string CompareSet(const std::string& key, const std::string& expected, const std::string& desired) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string request = Begin(StoreOp::kCompareSet);
    internal::PutBytes(&request, internal::WireKey(key));
    internal::PutBytes(&request, expected);
    internal::PutBytes(&request, desired);
    const std::string what = "compare-set '" + key + "'";
    SendAll(request, what);
    return ReadValue(what);
  }

  bool Delete(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string request = Begin(StoreOp::kDeleteKey);
    internal::PutBytes(&request, internal::WireKey(key));
    const std::string what = "delete '" + key + "'";
    SendAll(request, what);
    int64_t deleted = 0;
    ReadReply(&deleted, sizeof(deleted), what, Clock::now() + reply_timeout_);
    return deleted != 0;
  }

  bool Check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string what = "check " + Names(keys);
    SendAll(KeysRequest(StoreOp::kCheck, keys), what);
    return ReadU8(what, Clock::now() + reply_timeout_) == internal::kCheckReady;
  }

  void Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::lock_guard<std::mutex> lock(mu_);
    WaitFor(keys, timeout);
  }

  int64_t NumKeys() override {
    std::lock_guard<std::mutex> lock(mu_);
    SendAll(Begin(StoreOp::kGetNumKeys), "count keys");
    int64_t n = 0;
    ReadReply(&n, sizeof(n), "count keys", Clock::now() + reply_timeout_);
    return n;
  }

 private:
  std::string Where() const { return host_ + ":" + std::to_string(port_); }

  std::string Begin(StoreOp op) const {
    std::string request;
    internal::PutU8(&request, static_cast<uint8_t>(internal::QueryByte(dialect_, op)));
    return request;
  }

  std::string KeysRequest(StoreOp op, const std::vector<std::string>& keys) const {
    std::string request = Begin(op);
    internal::PutU64(&request, keys.size());
    for (const std::string& key : keys) internal::PutBytes(&request, internal::WireKey(key));
    return request;
  }

  static std::string Names(const std::vector<std::string>& keys) {
    std::string names;
    for (size_t i = 0; i < keys.size() && i < 8; ++i) names += (i ? ", '" : "'") + keys[i] + "'";
    if (keys.size() > 8) names += " and " + std::to_string(keys.size() - 8) + " more";
    return names;
  }

  // Connects, retrying refused or unreachable attempts until `timeout` (the server may not listen yet), then
  // authenticates (with a secret) and validates and pings as c10d's client does (>= 2.3 numbering). A failed
  // handshake is not retried.
  void Connect(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::string last_error;
    auto delay = std::chrono::milliseconds(10);
    while (true) {
      last_error = TryConnect();
      if (fd_ >= 0) {
        try {
          if (!secret_.empty()) Authenticate(deadline);
          if (dialect_ == StoreDialect::kValidated) ValidateAndPing(deadline);
          return;
        } catch (const AuthFailure& e) {
          ::close(fd_);
          fd_ = -1;
          LAKERUN_THROW(DistError, e.message);
        } catch (const DistError& e) {
          ::close(fd_);
          fd_ = -1;
          last_error = e.what();
        }
      }
      if (Clock::now() + delay >= deadline) break;
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, std::chrono::milliseconds(500));
    }
    LAKERUN_THROW(CommTimeout, "store: cannot connect to ", Where(), " within ", timeout.count(), " ms: ",
                  last_error);
  }

  // store_auth.h, client side: answer the server's challenge, then check its proof before sending any request.
  void Authenticate(Clock::time_point deadline) {
    const Clock::time_point until = std::min(deadline, Clock::now() + kChallengeTimeout);
    std::string hello(internal::kServerHelloBytes, '\0');
    try {
      ReadExactly(hello.data(), hello.size(), "authentication", until);
    } catch (const ReplyTimeout&) {
      throw AuthFailure{"store " + Where() + " sent no authentication challenge: it is not a lakerun store that "
                        "requires a secret (c10d's TCPStore, or the launcher's compatibility port?)"};
    }
    const std::string answer = internal::ClientAnswer(secret_, hello, RandomBytes(internal::kNonceBytes));
    if (answer.empty()) {
      throw AuthFailure{"store " + Where() + " did not send a lakerun authentication challenge: it is not a "
                        "lakerun store that requires a secret"};
    }
    SendAll(answer, "authentication");
    std::string proof(internal::kServerProofBytes, '\0');
    try {
      ReadExactly(proof.data(), proof.size(), "authentication", until);
    } catch (const ReplyTimeout&) {
      throw AuthFailure{"store " + Where() + " did not answer this client's authentication"};
    } catch (const DistError&) {
      throw AuthFailure{"store " + Where() + " refused this client's proof: this process's rendezvous secret differs "
                        "from the job's (LAKERUN_RDZV_SECRET / LAKERUN_RDZV_SECRET_FILE / --rdzv-secret-file)"};
    }
    if (!internal::CheckServerProof(secret_, hello, answer, proof)) {
      throw AuthFailure{"store " + Where() + " could not prove that it knows the job's secret: it is not this job's "
                        "store (another job on the same port, or an impostor); no request was sent to it"};
    }
  }

  void ValidateAndPing(Clock::time_point deadline) {
    std::string hello = Begin(StoreOp::kValidate);
    internal::PutU32(&hello, internal::kValidationMagic);
    internal::PutU8(&hello, static_cast<uint8_t>(internal::QueryByte(dialect_, StoreOp::kPing)));
    const uint32_t nonce = static_cast<uint32_t>(::getpid());
    internal::PutU32(&hello, nonce);
    SendAll(hello, "validate");
    uint32_t echoed = 0;
    try {
      ReadExactly(&echoed, sizeof(echoed), "ping", std::min(deadline, Clock::now() + reply_timeout_));
    } catch (const ReplyTimeout&) {
      LAKERUN_THROW(DistError, "store ", Where(), ": no answer to ping (a c10d TCPStore older than 2.3?)");
    }
    if (std::memcmp(&echoed, internal::kAuthMagic, sizeof(echoed)) == 0) {
      throw AuthFailure{"store " + Where() + " requires the job's secret, and this process has none (set " +
                        "LAKERUN_RDZV_SECRET or LAKERUN_RDZV_SECRET_FILE to the job's secret)"};
    }
    LAKERUN_CHECK_AS(DistError, echoed == nonce, "store ", Where(), ": ping answered ", echoed, ", expected ", nonce,
                     " (not a c10d TCPStore >= 2.3 or lakerun store?)");
  }

  // One attempt over every address of host_; sets fd_ (blocking, TCP_NODELAY) or returns the last error.
  std::string TryConnect() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
    if (rc != 0) return std::string("cannot resolve the address: ") + gai_strerror(rc);
    std::string error = "no address";
    for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
      const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) {
        error = std::strerror(errno);
        continue;
      }
      if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        const int on = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
        fd_ = fd;
        break;
      }
      error = std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(found);
    return error;
  }

  void SendAll(const std::string& bytes, const std::string& what) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) LAKERUN_THROW(DistError, "store ", Where(), ": ", what, " failed: ", std::strerror(errno));
      sent += static_cast<size_t>(n);
    }
  }

  // Reads exactly `size` bytes before `deadline`; throws ReplyTimeout when it passes, DistError when the
  // connection breaks.
  void ReadExactly(void* out, size_t size, const std::string& what, Clock::time_point deadline) {
    auto* p = static_cast<char*>(out);
    size_t got = 0;
    while (got < size) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) throw ReplyTimeout{};
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;
      const ssize_t n = ::recv(fd_, p + got, size - got, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        LAKERUN_THROW(DistError, "store ", Where(), ": ", what, " failed: ",
                      n == 0 ? "the server closed the connection" : std::strerror(errno));
      }
      got += static_cast<size_t>(n);
    }
  }

  uint8_t ReadU8(const std::string& what, Clock::time_point deadline) {
    uint8_t v = 0;
    ReadReply(&v, sizeof(v), what, deadline);
    return v;
  }

  // ReadExactly for replies that must come promptly: a timeout is a broken server.
  void ReadReply(void* out, size_t size, const std::string& what, Clock::time_point deadline) {
    try {
      ReadExactly(out, size, what, deadline);
    } catch (const ReplyTimeout&) {
      LAKERUN_THROW(DistError, "store ", Where(), ": ", what, " failed: no reply within ", reply_timeout_.count(),
                    " ms");
    }
  }

  // WAIT for one key; on timeout CANCEL_WAIT (the server answers WAIT_CANCELED, possibly after a STOP_WAITING that
  // crossed the cancel) and throw CommTimeout naming the key.
  void Wait(const std::string& key, std::chrono::milliseconds timeout) { WaitFor({key}, timeout); }

  void WaitFor(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
    const std::string what = "wait for " + Names(keys);
    SendAll(KeysRequest(StoreOp::kWait, keys), what);
    uint8_t response = 0;
    try {
      ReadExactly(&response, 1, what, Clock::now() + timeout);
      LAKERUN_CHECK_AS(DistError, response == internal::kStopWaiting, "store ", Where(), ": ", what,
                       ": unexpected wait response ", int{response});
      return;
    } catch (const ReplyTimeout&) {
    }
    SendAll(Begin(StoreOp::kCancelWait), what);
    const Clock::time_point deadline = Clock::now() + reply_timeout_;
    while (ReadU8(what, deadline) != internal::kWaitCanceled) {
    }
    LAKERUN_THROW(CommTimeout, "store ", Where(), ": ", keys.size() == 1 ? "key " : "keys ", Names(keys),
                  keys.size() == 1 ? " did not appear" : " did not all appear", " within ", timeout.count(), " ms");
  }

  std::string DoGet(const std::string& key) {
    std::string request = Begin(StoreOp::kGet);
    internal::PutBytes(&request, internal::WireKey(key));
    const std::string what = "get '" + key + "'";
    SendAll(request, what);
    return ReadValue(what);
  }

  // A length-prefixed value.
  std::string ReadValue(const std::string& what) {
    const Clock::time_point deadline = Clock::now() + reply_timeout_;
    uint64_t size = 0;
    ReadReply(&size, sizeof(size), what, deadline);
    std::string value(size, '\0');
    ReadReply(value.data(), value.size(), what, deadline);
    return value;
  }

  const std::string host_;
  const int port_;
  const std::string secret_;
  const std::chrono::milliseconds reply_timeout_;
  const StoreDialect dialect_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<StoreClient> StoreClient::Connect(const StoreClientOptions& options) {
  return std::make_unique<ProtocolStoreClient>(options);
}

}  // namespace lakerun::rdzv
