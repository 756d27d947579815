#include "rdzv/store_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "lakerun/base/crypto.h"
#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "rdzv/store_auth.h"

namespace lakerun::rdzv::internal {
namespace {

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr size_t kReadChunk = 64 * 1024;
// Buffer capacity a connection keeps between requests; more is returned once a large request or reply is done.
constexpr size_t kKeepBufferBytes = 1 << 20;
// Reads per readiness event before other connections get their turn.
constexpr int kReadsPerEvent = 16;
// How often the loop looks for handshakes that took too long (kSecret only).
constexpr int kHandshakeSweepMs = 500;
// Refusals logged one by one; past these, one line per kRefusalLogEvery (a scan must not flood the log).
constexpr uint64_t kRefusalsLogged = 20;
constexpr uint64_t kRefusalLogEvery = 1000;

using Clock = std::chrono::steady_clock;

enum class AuthState { kAwaitingAnswer, kDone };

struct Connection {
  int fd = -1;
  std::string peer;
  AuthState auth = AuthState::kDone;
  // kAwaitingAnswer: the nonce this connection was challenged with, and when.
  std::string nonce;
  Clock::time_point accepted_at;
  StoreDialect dialect = StoreDialect::kUnknown;
  std::string in;
  std::string out;
  size_t out_sent = 0;
  bool want_write = false;
  // Keys of the current WAIT that do not exist yet.
  size_t awaited = 0;
};

std::string PeerName(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
    port = ntohs(a->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// c10d parses stored counters with std::stoll: optional whitespace and sign, digits, anything after ignored.
bool ParseCounter(const std::string& text, int64_t* value) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '+') ++i;
  const char* begin = text.data() + i;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *value);
  return ec == std::errc() && ptr != begin;
}

// A protocol error that closes only the connection it came from.
struct ConnectionError {
  std::string message;
};

class EpollStoreServerImpl final : public StoreServer {
 public:
  EpollStoreServerImpl(const StoreServerOptions& options, const StoreLimits& limits)
      : host_(options.host),
        limits_(limits),
        access_(options.access),
        secret_(options.secret),
        handshake_timeout_(options.handshake_timeout) {
    LAKERUN_CHECK_AS(ConfigError, access_ == StoreAccess::kOpen || !secret_.empty(), "store on ", options.host, ":",
                     options.port, ": StoreAccess::kSecret needs a secret");
    Listen(options);
    thread_ = std::thread([this] { Loop(); });
  }

  ~EpollStoreServerImpl() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    thread_.join();
    for (auto& [id, conn] : conns_) ::close(conn.fd);
    ::close(listen_fd_);
    ::close(wake_fd_);
    ::close(epoll_fd_);
  }

  // --- StoreServer (the launcher's own operations) ---

  // Keys of these methods are c10d API keys: "/" + key on the wire (WireKey).

  void Set(const std::string& key, const std::string& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    DoSet(WireKey(key), value);
  }

  std::string Get(const std::string& key, std::chrono::milliseconds timeout) override {
    const std::string wire = WireKey(key);
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_for(lock, timeout, [&] { return data_.count(wire) > 0; })) {
      LAKERUN_THROW(CommTimeout, "store ", Where(), ": key '", key, "' did not appear within ", timeout.count(),
                    " ms");
    }
    return data_.at(wire);
  }

  std::optional<std::string> TryGet(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = data_.find(WireKey(key));
    if (it == data_.end()) return std::nullopt;
    return it->second;
  }

  int64_t Add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    try {
      return DoAdd(WireKey(key), delta);
    } catch (const ConnectionError& e) {
      LAKERUN_THROW(DistError, "store ", Where(), ": ", e.message);
    }
  }

  std::string CompareSet(const std::string& key, const std::string& expected, const std::string& desired) override {
    std::lock_guard<std::mutex> lock(mu_);
    return DoCompareSet(WireKey(key), expected, desired);
  }

  bool Delete(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    return DoDelete(WireKey(key));
  }

  bool Check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& key : keys) {
      if (!Exists(WireKey(key))) return false;
    }
    return true;
  }

  void Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    auto all = [&] {
      for (const std::string& key : keys) {
        if (!Exists(WireKey(key))) return false;
      }
      return true;
    };
    if (!changed_.wait_for(lock, timeout, all)) {
      std::string names;
      for (const std::string& key : keys) names += (names.empty() ? "'" : ", '") + key + "'";
      LAKERUN_THROW(CommTimeout, "store ", Where(), ": keys ", names, " did not all appear within ", timeout.count(),
                    " ms");
    }
  }

  int64_t NumKeys() override {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(data_.size());
  }

  const std::string& host() const override { return host_; }
  int port() const override { return port_; }
  StoreAccess access() const override { return access_; }

  StoreServerStats Stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    StoreServerStats stats = stats_;
    stats.open = conns_.size();
    return stats;
  }

 private:
  // host:port for messages; "*" for every interface.
  std::string Where() const { return (host_.empty() ? std::string("*") : host_) + ":" + std::to_string(port_); }

  void Listen(const StoreServerOptions& options) {
    LAKERUN_CHECK(options.port >= 0 && options.port <= 65535, "store: port must be in 0..65535, got ",
                  options.port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(options.port);
    const bool any = options.host.empty() || options.host == "0.0.0.0" || options.host == "::";
    if (options.host == "0.0.0.0") hints.ai_family = AF_INET;
    const int rc = ::getaddrinfo(any ? nullptr : options.host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) {
      LAKERUN_THROW(DistError, "store: cannot listen on ", options.host, ":", options.port,
                    ": cannot resolve the address: ", gai_strerror(rc));
    }
    std::string last_error = "no address";
    for (addrinfo* ai = found; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
      const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) {
        last_error = std::strerror(errno);
        continue;
      }
      const int on = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
      if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
        last_error = std::strerror(errno);
        ::close(fd);
        continue;
      }
      listen_fd_ = fd;
    }
    ::freeaddrinfo(found);
    if (listen_fd_ < 0) {
      LAKERUN_THROW(DistError, "store: cannot listen on ", options.host, ":", options.port, ": ", last_error);
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || wake_fd_ < 0) {
      const std::string error = std::strerror(errno);
      ::close(listen_fd_);
      if (epoll_fd_ >= 0) ::close(epoll_fd_);
      if (wake_fd_ >= 0) ::close(wake_fd_);
      LAKERUN_THROW(DistError, "store ", Where(), ": cannot create its event loop: ", error);
    }
    Watch(listen_fd_, kListenId, EPOLLIN, EPOLL_CTL_ADD);
    Watch(wake_fd_, kWakeId, EPOLLIN, EPOLL_CTL_ADD);
  }

  void Watch(int fd, uint64_t id, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_fd_, op, fd, &ev);
  }

  // --- the event loop ---

  void Loop() {
    epoll_event events[64];
    while (true) {
      const int n = ::epoll_wait(epoll_fd_, events, 64, access_ == StoreAccess::kSecret ? kHandshakeSweepMs : -1);
      if (n < 0 && errno != EINTR) {
        Log(LogLevel::Error, "store " + Where() + ": epoll_wait failed: " + std::strerror(errno));
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == kListenId) {
          Accept();
        } else if (id == kWakeId) {
          uint64_t count = 0;
          [[maybe_unused]] ssize_t r = ::read(wake_fd_, &count, sizeof(count));
        } else {
          OnEvent(id, events[i].events);
        }
      }
      if (access_ == StoreAccess::kSecret) ExpireHandshakes();
    }
  }

  // Closes the connections that were challenged longer ago than the handshake timeout. Looks at most once per
  // sweep period, however busy the loop is.
  void ExpireHandshakes() {
    const Clock::time_point now = Clock::now();
    if (now - last_sweep_ < std::chrono::milliseconds(kHandshakeSweepMs)) return;
    last_sweep_ = now;
    std::vector<uint64_t> expired;
    for (const auto& [id, conn] : conns_) {
      if (conn.auth == AuthState::kAwaitingAnswer && now - conn.accepted_at > handshake_timeout_) {
        expired.push_back(id);
      }
    }
    for (uint64_t id : expired) {
      Refuse(id, "no authentication within " + std::to_string(handshake_timeout_.count()) + " ms");
    }
  }

  // Closes a connection that did not authenticate (it has read and written no key) and logs its peer, rate-limited.
  void Refuse(uint64_t id, const std::string& why) {
    const uint64_t n = ++stats_.refused;
    if (n <= kRefusalsLogged || n % kRefusalLogEvery == 0) {
      std::string line = "store " + Where() + ": refused the connection from " + conns_.at(id).peer + ": " + why +
                         "; it read and wrote no key";
      if (n == kRefusalsLogged) {
        line += " (further refusals are logged once per " + std::to_string(kRefusalLogEvery) + ")";
      }
      if (n > kRefusalsLogged) line += " (" + std::to_string(n) + " refused so far)";
      Log(LogLevel::Warning, line);
    }
    Close(id);
  }

  void Accept() {
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof(addr);
      const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a connection that went away before accept: nothing to do
      const int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
      const uint64_t id = next_id_++;
      Connection& conn = conns_[id];
      conn.fd = fd;
      conn.peer = PeerName(addr);
      ++stats_.accepted;
      Watch(fd, id, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
      if (access_ == StoreAccess::kSecret) Challenge(id, conn);
    }
  }

  // Sends the connection its nonce; nothing it sends is a request until it answers (store_auth.h).
  void Challenge(uint64_t id, Connection& conn) {
    conn.auth = AuthState::kAwaitingAnswer;
    conn.nonce = RandomBytes(kNonceBytes);
    conn.accepted_at = Clock::now();
    Send(id, conn, ServerHello(conn.nonce));
  }

  // Checks the answer at the start of the connection's input: the number of bytes it took (0 while incomplete), or
  // -1 when the connection was refused.
  ptrdiff_t Authenticate(uint64_t id, Connection& conn) {
    const AnswerCheck check = CheckClientAnswer(secret_, conn.nonce, conn.in);
    switch (check) {
      case AnswerCheck::kIncomplete:
        return 0;
      case AnswerCheck::kNotLakerun:
        Refuse(id, "it sent a request without authenticating; this store requires the job's secret (c10d's TCPStore "
                   "client, which unmodified PyTorch uses, cannot authenticate: under `lakerun launch` it joins "
                   "through the compatibility listener, --rdzv-compat)");
        return -1;
      case AnswerCheck::kWrongProof:
        Refuse(id, "its proof does not match the job's secret (another secret, or a replayed answer)");
        return -1;
      case AnswerCheck::kValid:
        break;
    }
    const std::string proof = ServerProof(secret_, conn.nonce, std::string_view(conn.in).substr(0, kClientAnswerBytes));
    conn.auth = AuthState::kDone;
    conn.nonce.clear();
    ++stats_.authenticated;
    Send(id, conn, proof);
    return static_cast<ptrdiff_t>(kClientAnswerBytes);
  }

  void OnEvent(uint64_t id, uint32_t events) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    Connection& conn = it->second;
    if (events & EPOLLOUT) {
      if (!Flush(id, conn)) return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
      for (int reads = 0; reads < kReadsPerEvent; ++reads) {
        // Into the loop's one buffer, then only what came into the connection's: an idle connection holds no
        // read-sized buffer (1,024 connections would otherwise hold 64 MiB).
        const ssize_t got = ::recv(conn.fd, scratch_.data(), scratch_.size(), 0);
        if (got > 0) conn.in.append(scratch_.data(), static_cast<size_t>(got));
        if (got == 0) {
          Close(id);  // the client is gone (mid-request or not): drop its state
          return;
        }
        if (got < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;
          if (errno == EINTR) continue;
          Close(id);
          return;
        }
        if (!Process(id)) return;
        if (static_cast<size_t>(got) < kReadChunk) break;
      }
    }
  }

  // Runs every complete request in the connection's input; false if the connection was closed.
  bool Process(uint64_t id) {
    Connection* conn = &conns_.at(id);
    if (conn->auth == AuthState::kAwaitingAnswer) {
      const ptrdiff_t taken = Authenticate(id, *conn);
      if (taken < 0) return false;
      if (taken == 0) return true;
      auto it = conns_.find(id);  // the proof's Send may have closed it
      if (it == conns_.end()) return false;
      conn = &it->second;
      conn->in.erase(0, static_cast<size_t>(taken));
    }
    size_t pos = 0;
    while (pos < conn->in.size()) {
      const char* data = conn->in.data() + pos;
      const size_t size = conn->in.size() - pos;
      if (conn->dialect == StoreDialect::kUnknown) {
        conn->dialect = DetectDialect(data, size);
        if (conn->dialect == StoreDialect::kUnknown) break;
        ++(conn->dialect == StoreDialect::kLegacy ? stats_.legacy : stats_.validated);
      }
      StoreRequest request;
      const ParseResult parsed = ParseRequest(conn->dialect, data, size, limits_, &request);
      if (parsed.status == ParseStatus::kError) return ProtocolError(id, parsed.error);
      if (parsed.status == ParseStatus::kNeedMore) break;
      pos += parsed.consumed;
      try {
        Handle(id, request);
      } catch (const ConnectionError& e) {
        return ProtocolError(id, e.message);
      }
      auto it = conns_.find(id);  // a reply that overflowed the output bound closes the connection
      if (it == conns_.end()) return false;
      conn = &it->second;
    }
    conn->in.erase(0, pos);
    // Give back the memory of a large request once it is handled (an idle connection holds little).
    if (conn->in.capacity() > kKeepBufferBytes && conn->in.size() < kKeepBufferBytes) conn->in.shrink_to_fit();
    return true;
  }

  bool ProtocolError(uint64_t id, const std::string& message) {
    ++stats_.protocol_errors;
    Log(LogLevel::Debug,
        "store " + Where() + ": closing the connection from " + conns_.at(id).peer + ": " + message);
    Close(id);
    return false;
  }

  // Runs one request. Any Send() (to this or another connection) may close a connection, so `conn` is looked up
  // again before the reply goes out.
  void Handle(uint64_t id, const StoreRequest& r) {
    Connection& conn = conns_.at(id);
    std::string reply;
    switch (r.op) {
      case StoreOp::kValidate:
        if (r.word != kValidationMagic) {
          throw ConnectionError{"VALIDATE with magic " + std::to_string(r.word) + ", expected " +
                                std::to_string(kValidationMagic)};
        }
        return;
      case StoreOp::kPing:
        PutU32(&reply, r.word);
        break;
      case StoreOp::kSet:
        DoSet(r.keys[0], r.values[0]);
        return;
      case StoreOp::kCompareSet:
        PutBytes(&reply, DoCompareSet(r.keys[0], r.values[0], r.values[1]));
        break;
      case StoreOp::kGet:
        PutBytes(&reply, Existing(r, r.keys[0]));
        break;
      case StoreOp::kAdd:
        PutI64(&reply, DoAdd(r.keys[0], r.integer));
        break;
      case StoreOp::kCheck:
        PutU8(&reply, AllExist(r.keys) ? kCheckReady : kCheckNotReady);
        break;
      case StoreOp::kWait:
        if (!AllExist(r.keys)) {
          ClearWaits(id, conn);
          for (const std::string& key : r.keys) {
            if (!Exists(key)) {
              waiting_[key].push_back(id);
              ++conn.awaited;
            }
          }
          return;
        }
        PutU8(&reply, kStopWaiting);
        break;
      case StoreOp::kGetNumKeys:
        PutI64(&reply, static_cast<int64_t>(data_.size()));
        break;
      case StoreOp::kWatchKey:
        watching_[r.keys[0]].push_back(id);
        PutU8(&reply, static_cast<uint8_t>(WatchEvent::kCallbackRegistered));
        break;
      case StoreOp::kDeleteKey:
        PutI64(&reply, DoDelete(r.keys[0]) ? 1 : 0);
        break;
      case StoreOp::kAppend: {
        auto it = data_.find(r.keys[0]);
        if (it == data_.end()) {
          DoSet(r.keys[0], r.values[0]);
        } else {
          const std::string old = it->second;
          it->second += r.values[0];
          Changed(r.keys[0]);
          Notify(r.keys[0], WatchEvent::kAppended, old, it->second);
        }
        return;
      }
      case StoreOp::kMultiGet:
        for (const std::string& key : r.keys) Existing(r, key);  // all or nothing
        for (const std::string& key : r.keys) PutBytes(&reply, data_.at(key));
        break;
      case StoreOp::kMultiSet:
        for (size_t i = 0; i < r.keys.size(); ++i) DoSet(r.keys[i], r.values[i]);
        return;
      case StoreOp::kCancelWait:
        ClearWaits(id, conn);
        PutU8(&reply, kWaitCanceled);
        break;
      case StoreOp::kQueuePush:
        queues_[r.keys[0]].push_back(r.values[0]);
        Changed(r.keys[0]);
        return;
      case StoreOp::kQueuePop: {
        auto it = queues_.find(r.keys[0]);
        if (it == queues_.end() || it->second.empty()) {
          PutI64(&reply, 0);
        } else {
          PutI64(&reply, 1);
          PutBytes(&reply, it->second.front());
          it->second.pop_front();
          if (it->second.empty()) queues_.erase(it);
        }
        break;
      }
      case StoreOp::kQueueLen: {
        auto it = queues_.find(r.keys[0]);
        PutI64(&reply, it == queues_.end() ? 0 : static_cast<int64_t>(it->second.size()));
        break;
      }
    }
    auto it = conns_.find(id);
    if (it != conns_.end()) Send(id, it->second, reply);
  }

  const std::string& Existing(const StoreRequest& r, const std::string& key) const {
    auto it = data_.find(key);
    if (it == data_.end()) throw ConnectionError{std::string(StoreOpName(r.op)) + " of missing key '" + key + "'"};
    return it->second;
  }

  // A key exists for WAIT / CHECK when it has a value or a non-empty queue (a blocking queue pop waits on it).
  bool Exists(const std::string& key) const {
    if (data_.count(key) > 0) return true;
    auto it = queues_.find(key);
    return it != queues_.end() && !it->second.empty();
  }

  bool AllExist(const std::vector<std::string>& keys) const {
    for (const std::string& key : keys) {
      if (!Exists(key)) return false;
    }
    return true;
  }

  void DoSet(const std::string& key, const std::string& value) {
    auto it = data_.find(key);
    if (it == data_.end()) {
      data_.emplace(key, value);
      Changed(key);
      Notify(key, WatchEvent::kCreated, "", value);
    } else {
      std::string old = std::move(it->second);
      it->second = value;
      Changed(key);
      Notify(key, WatchEvent::kUpdated, old, value);
    }
  }

  // c10d's compareSet: a missing key is created only when `expected` is empty, and the reply is then `desired`;
  // otherwise a missing key answers `expected` and changes nothing. An existing key is replaced when it equals
  // `expected`; the reply is its value afterwards.
  std::string DoCompareSet(const std::string& key, const std::string& expected, const std::string& desired) {
    auto it = data_.find(key);
    if (it == data_.end()) {
      if (!expected.empty()) return expected;
      DoSet(key, desired);
      return desired;
    }
    if (it->second == expected) {
      const std::string old = it->second;
      it->second = desired;
      Changed(key);
      Notify(key, WatchEvent::kUpdated, old, desired);
    }
    return data_.at(key);
  }

  bool DoDelete(const std::string& key) {
    auto it = data_.find(key);
    if (it == data_.end()) return false;
    const std::string old = std::move(it->second);
    data_.erase(it);
    Notify(key, WatchEvent::kDeleted, old, "");
    return true;
  }

  int64_t DoAdd(const std::string& key, int64_t delta) {
    int64_t value = delta;
    auto it = data_.find(key);
    if (it != data_.end()) {
      int64_t current = 0;
      if (!ParseCounter(it->second, &current)) {
        throw ConnectionError{"ADD to key '" + key + "' whose value is not an integer (" +
                              std::to_string(it->second.size()) + " bytes)"};
      }
      value = current + delta;
    }
    std::string text = std::to_string(value);
    DoSet(key, text);
    return value;
  }

  // A key came into existence or changed: wake the connections whose last awaited key it was, and the launcher's
  // own Get().
  void Changed(const std::string& key) {
    changed_.notify_all();
    auto it = waiting_.find(key);
    if (it == waiting_.end()) return;
    std::vector<uint64_t> ids = std::move(it->second);
    waiting_.erase(it);
    for (uint64_t id : ids) {
      auto conn = conns_.find(id);
      if (conn == conns_.end() || conn->second.awaited == 0) continue;
      if (--conn->second.awaited == 0) {
        std::string reply;
        PutU8(&reply, kStopWaiting);
        Send(id, conn->second, reply);
      }
    }
  }

  // Legacy watchKey() callbacks: type, key, old value, new value on the connection that registered the key.
  void Notify(const std::string& key, WatchEvent event, const std::string& old_value, const std::string& new_value) {
    auto it = watching_.find(key);
    if (it == watching_.end()) return;
    std::string message;
    PutU8(&message, static_cast<uint8_t>(event));
    PutBytes(&message, key);
    PutBytes(&message, old_value);
    PutBytes(&message, new_value);
    const std::vector<uint64_t> ids = it->second;
    for (uint64_t id : ids) {
      auto conn = conns_.find(id);
      if (conn != conns_.end()) Send(id, conn->second, message);
    }
  }

  void ClearWaits(uint64_t id, Connection& conn) {
    if (conn.awaited == 0) return;
    conn.awaited = 0;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      auto& ids = it->second;
      ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
      it = ids.empty() ? waiting_.erase(it) : std::next(it);
    }
  }

  // Queues a reply and writes what the socket takes now. A client that lets more than the limit pile up unread is
  // disconnected (its state is dropped; the caller must not use `conn` afterwards if it is gone).
  void Send(uint64_t id, Connection& conn, const std::string& bytes) {
    if (bytes.empty()) return;
    if (conn.out.size() - conn.out_sent > limits_.max_request_bytes) {
      ++stats_.protocol_errors;
      Log(LogLevel::Debug, "store " + Where() + ": closing the connection from " + conn.peer + ": " +
                               std::to_string(conn.out.size() - conn.out_sent) + " bytes of replies unread");
      Close(id);
      return;
    }
    conn.out += bytes;
    Flush(id, conn);
  }

  // Writes pending output; false if the connection was closed.
  bool Flush(uint64_t id, Connection& conn) {
    while (conn.out_sent < conn.out.size()) {
      const ssize_t n = ::send(conn.fd, conn.out.data() + conn.out_sent, conn.out.size() - conn.out_sent,
                               MSG_NOSIGNAL);
      if (n > 0) {
        conn.out_sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Close(id);
      return false;
    }
    const bool pending = conn.out_sent < conn.out.size();
    if (!pending) {
      conn.out.clear();
      conn.out_sent = 0;
      if (conn.out.capacity() > kKeepBufferBytes) conn.out.shrink_to_fit();
    }
    if (pending != conn.want_write) {
      conn.want_write = pending;
      Watch(conn.fd, id, EPOLLIN | EPOLLRDHUP | (pending ? EPOLLOUT : 0u), EPOLL_CTL_MOD);
    }
    return true;
  }

  void Close(uint64_t id) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    ClearWaits(id, it->second);
    for (auto w = watching_.begin(); w != watching_.end();) {
      auto& ids = w->second;
      ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
      w = ids.empty() ? watching_.erase(w) : std::next(w);
    }
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
    ::close(it->second.fd);
    conns_.erase(it);
  }

  const std::string host_;
  const StoreLimits limits_;
  const StoreAccess access_;
  const std::string secret_;
  const std::chrono::milliseconds handshake_timeout_;
  int port_ = 0;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::vector<char> scratch_ = std::vector<char>(kReadChunk);  // the loop thread's read buffer
  Clock::time_point last_sweep_;                                // ExpireHandshakes

  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  uint64_t next_id_ = 2;  // 0 and 1 name the listening socket and the wake-up eventfd
  std::unordered_map<uint64_t, Connection> conns_;
  std::unordered_map<std::string, std::string> data_;
  std::unordered_map<std::string, std::deque<std::string>> queues_;
  std::unordered_map<std::string, std::vector<uint64_t>> waiting_;
  std::unordered_map<std::string, std::vector<uint64_t>> watching_;
  StoreServerStats stats_;
};

}  // namespace

std::unique_ptr<StoreServer> StartEpollStoreServer(const StoreServerOptions& options, const StoreLimits& limits) {
  return std::make_unique<EpollStoreServerImpl>(options, limits);
}

}  // namespace lakerun::rdzv::internal

namespace lakerun::rdzv {

bool IsLoopbackAddress(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::unique_ptr<StoreServer> StoreServer::Start(const StoreServerOptions& options) {
  return internal::StartEpollStoreServer(options, internal::StoreLimits{});
}

}  // namespace lakerun::rdzv
