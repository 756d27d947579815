// StoreClient on c10d TCPStore's wire protocol (store_protocol.h), >= 2.3 numbering: VALIDATE and PING on connect.
// It talks to the launcher's store (store_server.cc) or any c10d >= 2.3 TCPStore server; keys go out as c10d's
// client sends them ("/" + key).
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

#include "lakerun/base/error.h"
#include "lakerun/launch/store.h"
#include "launch/store_protocol.h"

namespace lakerun::launch {
namespace {

using Clock = std::chrono::steady_clock;
using internal::StoreDialect;
using internal::StoreOp;

constexpr StoreDialect kDialect = StoreDialect::kValidated;

// Time a reply may take once the server has what it needs (every reply except WAIT's is immediate).
constexpr std::chrono::milliseconds kReplyTimeout{60000};

// A reply did not come within the deadline.
struct ReplyTimeout {};

class ProtocolStoreClient final : public StoreClient {
 public:
  ProtocolStoreClient(std::string host, int port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(port) {
    LAKERUN_CHECK(port > 0 && port <= 65535, "store: port must be in 1..65535, got ", port);
    Connect(timeout);
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
    if (ReadU8(what, Clock::now() + kReplyTimeout) != internal::kCheckReady) return std::nullopt;
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
    ReadReply(&value, sizeof(value), what, Clock::now() + kReplyTimeout);
    return value;
  }

 private:
  std::string Where() const { return host_ + ":" + std::to_string(port_); }

  static std::string Begin(StoreOp op) {
    std::string request;
    internal::PutU8(&request, static_cast<uint8_t>(internal::QueryByte(kDialect, op)));
    return request;
  }

  // Connects, retrying refused or unreachable attempts until `timeout` (the server may not listen yet), then
  // validates and pings as c10d's client does.
  void Connect(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::string last_error;
    auto delay = std::chrono::milliseconds(10);
    while (true) {
      last_error = TryConnect();
      if (fd_ >= 0) {
        try {
          std::string hello = Begin(StoreOp::kValidate);
          internal::PutU32(&hello, internal::kValidationMagic);
          internal::PutU8(&hello, static_cast<uint8_t>(internal::QueryByte(kDialect, StoreOp::kPing)));
          const uint32_t nonce = static_cast<uint32_t>(::getpid());
          internal::PutU32(&hello, nonce);
          SendAll(hello, "validate");
          uint32_t echoed = 0;
          ReadExactly(&echoed, sizeof(echoed), "ping", std::min(deadline, Clock::now() + kReplyTimeout));
          LAKERUN_CHECK_AS(DistError, echoed == nonce, "store ", Where(), ": ping answered ", echoed, ", expected ",
                           nonce, " (not a c10d TCPStore >= 2.3 or lakerun store?)");
          return;
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
      LAKERUN_THROW(DistError, "store ", Where(), ": ", what, " failed: no reply within ", kReplyTimeout.count(),
                    " ms");
    }
  }

  // WAIT for one key; on timeout CANCEL_WAIT (the server answers WAIT_CANCELED, possibly after a STOP_WAITING that
  // crossed the cancel) and throw CommTimeout naming the key.
  void Wait(const std::string& key, std::chrono::milliseconds timeout) {
    std::string request = Begin(StoreOp::kWait);
    internal::PutU64(&request, 1);
    internal::PutBytes(&request, internal::WireKey(key));
    const std::string what = "get '" + key + "'";
    SendAll(request, what);
    uint8_t response = 0;
    try {
      ReadExactly(&response, 1, what, Clock::now() + timeout);
      LAKERUN_CHECK_AS(DistError, response == internal::kStopWaiting, "store ", Where(), ": ", what,
                       ": unexpected wait response ", int{response});
      return;
    } catch (const ReplyTimeout&) {
    }
    SendAll(Begin(StoreOp::kCancelWait), what);
    const Clock::time_point deadline = Clock::now() + kReplyTimeout;
    while (ReadU8(what, deadline) != internal::kWaitCanceled) {
    }
    LAKERUN_THROW(CommTimeout, "store ", Where(), ": key '", key, "' did not appear within ", timeout.count(),
                  " ms");
  }

  std::string DoGet(const std::string& key) {
    std::string request = Begin(StoreOp::kGet);
    internal::PutBytes(&request, internal::WireKey(key));
    const std::string what = "get '" + key + "'";
    SendAll(request, what);
    const Clock::time_point deadline = Clock::now() + kReplyTimeout;
    uint64_t size = 0;
    ReadReply(&size, sizeof(size), what, deadline);
    std::string value(size, '\0');
    ReadReply(value.data(), value.size(), what, deadline);
    return value;
  }

  const std::string host_;
  const int port_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<StoreClient> StoreClient::Connect(const std::string& host, int port,
                                                  std::chrono::milliseconds timeout) {
  return std::make_unique<ProtocolStoreClient>(host, port, timeout);
}

}  // namespace lakerun::launch
