// bench/launch/rdzv_scale: 1,024 light clients (threads; no torch) rendezvous through lakerun's authenticated store
// on loopback as the ranks of 128 nodes x 8 would, and the cost of authentication per connection.
//
//   rdzv_scale [--nodes 128] [--ranks-per-node 8] [--connections 2000]
//   rdzv_scale --serve-open      an open store (StoreAccess::kOpen) on loopback: prints its port, serves until stdin
//                                closes (rdzv_scale_c10d.py --server-cmd: c10d's clients against lakerun's server)
//
// Each client: connect (and authenticate), set its key "rank/<r>", add 1 to "arrived" (the last one sets "world"),
// wait for "world", then read three keys: its node's first rank, the next rank, the same local rank on the next node.
// The store runs in a child process, so its memory is its own: RSS before the clients, peak RSS (VmHWM) after.
// rdzv_scale_c10d.py does the same with c10d's TCPStore; rdzv_scale.sh runs both and prints the ratios.
//
// Output: "RESULT key=value ..." lines, for rdzv_scale.sh. Exit status 1 when a client failed or a proof did not check.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lakerun/base/crypto.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"
#include "rdzv/store_auth.h"

namespace {

using Clock = std::chrono::steady_clock;
using lakerun::rdzv::StoreAccess;
using lakerun::rdzv::StoreClient;
using lakerun::rdzv::StoreClientOptions;
using lakerun::rdzv::StoreServer;
using lakerun::rdzv::StoreServerOptions;

constexpr std::chrono::seconds kTimeout{120};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// "VmRSS" or "VmHWM" of a process, in kB.
long StatusKb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field) + 1);
  }
  return -1;
}

// A store in a child process: prints nothing, serves until killed. Returns its pid; *port gets the port.
pid_t StartStoreProcess(StoreAccess access, const std::string& secret, int* port) {
  int fds[2];
  if (::pipe(fds) != 0) std::exit(2);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    StoreServerOptions options;
    options.access = access;
    options.secret = secret;
    auto server = StoreServer::Start(options);
    const int p = server->port();
    if (::write(fds[1], &p, sizeof(p)) != sizeof(p)) _exit(2);
    ::close(fds[1]);
    while (true) ::pause();
  }
  ::close(fds[1]);
  if (::read(fds[0], port, sizeof(*port)) != sizeof(*port)) std::exit(2);
  ::close(fds[0]);
  return pid;
}

void StopStoreProcess(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

StoreClientOptions Client(int port, const std::string& secret) {
  StoreClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.secret = secret;
  options.connect_timeout = kTimeout;
  return options;
}

std::string RankKey(int rank) { return "rank/" + std::to_string(rank); }

// One client's rendezvous; false (with a message on stderr) when it failed.
bool Rendezvous(int port, const std::string& secret, int rank, int nodes, int per_node) {
  const int world = nodes * per_node;
  try {
    auto store = StoreClient::Connect(Client(port, secret));
    store->Set(RankKey(rank), "node " + std::to_string(rank / per_node) + " local " + std::to_string(rank % per_node));
    if (store->Add("arrived", 1) == world) store->Set("world", "complete");
    store->Wait({"world"}, kTimeout);
    store->Get(RankKey(rank / per_node * per_node), kTimeout);
    store->Get(RankKey((rank + 1) % world), kTimeout);
    store->Get(RankKey((rank + per_node) % world), kTimeout);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    return false;
  }
}

// Returns the number of clients that failed.
int WorldBench(int nodes, int per_node) {
  const std::string secret = lakerun::rdzv::GenerateSecret();
  int port = 0;
  const pid_t store = StartStoreProcess(StoreAccess::kSecret, secret, &port);
  const long rss_before = StatusKb(store, "VmRSS");
  const int world = nodes * per_node;
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  clients.reserve(world);
  for (int rank = 0; rank < world; ++rank) {
    clients.emplace_back([&, rank] {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return go; });
      }
      if (!Rendezvous(port, secret, rank, nodes, per_node)) ++failed;
    });
  }
  const Clock::time_point start = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  for (auto& t : clients) t.join();
  const double world_ms = Ms(Clock::now() - start);
  const long hwm = StatusKb(store, "VmHWM");
  StopStoreProcess(store);
  std::printf("RESULT impl=lakerun clients=%d nodes=%d ranks_per_node=%d failed=%d world_ms=%.1f "
              "store_rss_before_kb=%ld store_peak_kb=%ld store_growth_kb=%ld\n",
              world, nodes, per_node, failed.load(), world_ms, rss_before, hwm, hwm - rss_before);
  return failed.load();
}

// Sequential connections (connect, one request, close) to an authenticated and to an open store: the difference is
// the handshake's cost per connection, on loopback.
double ConnectionsMs(StoreAccess access, int n) {
  const std::string secret = access == StoreAccess::kSecret ? lakerun::rdzv::GenerateSecret() : std::string();
  int port = 0;
  const pid_t store = StartStoreProcess(access, secret, &port);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < n; ++i) StoreClient::Connect(Client(port, secret))->NumKeys();
  const double ms = Ms(Clock::now() - start);
  StopStoreProcess(store);
  return ms;
}

// Returns whether every proof checked.
bool AuthBench(int n) {
  ConnectionsMs(StoreAccess::kSecret, n / 10);  // warm-up
  // Ten interleaved rounds of n / 10 connections each, so both see the same machine; the medians per connection.
  constexpr int kRounds = 10;
  std::vector<double> open_us, secret_us;
  for (int round = 0; round < kRounds; ++round) {
    open_us.push_back(ConnectionsMs(StoreAccess::kOpen, n / kRounds) * 1000 / (n / kRounds));
    secret_us.push_back(ConnectionsMs(StoreAccess::kSecret, n / kRounds) * 1000 / (n / kRounds));
  }
  std::sort(open_us.begin(), open_us.end());
  std::sort(secret_us.begin(), secret_us.end());
  const double per_open_us = open_us[kRounds / 2];
  const double per_secret_us = secret_us[kRounds / 2];
  // The CPU work alone: both proofs and checks of one handshake (four HMAC-SHA256 over 70 bytes and the key
  // derivations), one thread.
  const std::string secret = lakerun::rdzv::GenerateSecret();
  const std::string nonce = lakerun::RandomBytes(32);
  const int proofs = 20000;
  const Clock::time_point start = Clock::now();
  size_t sink = 0;
  for (int i = 0; i < proofs; ++i) {
    const std::string hello = lakerun::rdzv::internal::ServerHello(nonce);
    const std::string answer = lakerun::rdzv::internal::ClientAnswer(secret, hello, nonce);
    sink += lakerun::rdzv::internal::CheckClientAnswer(secret, nonce, answer) ==
            lakerun::rdzv::internal::AnswerCheck::kValid;
    const std::string proof = lakerun::rdzv::internal::ServerProof(secret, nonce, answer);
    sink += lakerun::rdzv::internal::CheckServerProof(secret, hello, answer, proof) ? 1 : 0;
  }
  const double crypto_us = Ms(Clock::now() - start) * 1000 / proofs;
  std::printf("RESULT impl=auth connections=%d open_us_per_connection=%.1f authenticated_us_per_connection=%.1f "
              "auth_cost_us_per_connection=%.1f handshake_crypto_us=%.1f verified=%zu/%d\n",
              n, per_open_us, per_secret_us, per_secret_us - per_open_us, crypto_us, sink, 2 * proofs);
  return sink == static_cast<size_t>(2 * proofs);
}

}  // namespace

int ServeOpen() {
  StoreServerOptions options;
  options.access = StoreAccess::kOpen;
  auto server = StoreServer::Start(options);
  std::printf("%d\n", server->port());
  std::fflush(stdout);
  char buffer[256];
  while (::read(0, buffer, sizeof(buffer)) > 0) {
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--serve-open") return ServeOpen();
  int nodes = 128, per_node = 8, connections = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--nodes") nodes = value;
    else if (flag == "--ranks-per-node") per_node = value;
    else if (flag == "--connections") connections = value;
    else {
      std::fprintf(stderr, "usage: %s [--nodes N] [--ranks-per-node N] [--connections N]\n", argv[0]);
      return 2;
    }
  }
  const int failed = WorldBench(nodes, per_node);
  const bool verified = AuthBench(connections);
  return failed == 0 && verified ? 0 : 1;
}
