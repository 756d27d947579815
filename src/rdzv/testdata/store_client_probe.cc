// A client that tries to write a key into a rendezvous store, for tests across network namespaces.
//
//   rdzv_store_client_probe c10d HOST PORT KEY VALUE      c10d's protocol on a raw connection (legacy SET, then a
//                                                         GET of the same key), no authentication
//   rdzv_store_client_probe lakerun HOST PORT KEY VALUE   lakerun's client with LAKERUN_RDZV_SECRET (or none)
//
// Prints what happened on one line. Exit status: 10 the store took the request (the key was written), 20 the store
// refused it, 2 bad usage or no connection at all.
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "lakerun/base/rank_environment.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"

namespace {

constexpr int kWritten = 10;
constexpr int kRefused = 20;

int Connect(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  return fd;
}

void PutString(std::string* out, const std::string& s) {
  const uint64_t n = s.size();
  out->append(reinterpret_cast<const char*>(&n), sizeof(n));
  *out += s;
}

int RawC10d(const std::string& host, const std::string& port, const std::string& key, const std::string& value) {
  const int fd = Connect(host, port);
  if (fd < 0) {
    std::printf("c10d: cannot connect to %s:%s\n", host.c_str(), port.c_str());
    return 2;
  }
  std::string request(1, '\0');  // SET (c10d <= 2.1 numbering)
  PutString(&request, "/" + key);
  PutString(&request, value);
  request += '\x02';  // GET
  PutString(&request, "/" + key);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buffer[4096];
  pollfd pfd{fd, POLLIN, 0};
  while (::poll(&pfd, 1, 15000) > 0) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    reply.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (reply.find(value) != std::string::npos) {
    std::printf("c10d: the store took the request and read the key back\n");
    return kWritten;
  }
  std::printf("c10d: the store closed the connection after %zu bytes, none of them the key\n", reply.size());
  return kRefused;
}

int Lakerun(const std::string& host, int port, const std::string& key, const std::string& value) {
  lakerun::rdzv::StoreClientOptions options;
  options.host = host;
  options.port = port;
  options.connect_timeout = std::chrono::seconds(15);
  options.secret = lakerun::rdzv::SecretFromEnvironment(lakerun::ProcessEnvironment()).value_or("");
  try {
    auto store = lakerun::rdzv::StoreClient::Connect(options);
    store->Set(key, value);
    std::printf("lakerun: wrote '%s'\n", key.c_str());
    return kWritten;
  } catch (const std::exception& e) {
    std::printf("lakerun: refused: %s\n", e.what());
    return kRefused;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s c10d|lakerun HOST PORT KEY VALUE\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "c10d") return RawC10d(argv[2], argv[3], argv[4], argv[5]);
  if (mode == "lakerun") return Lakerun(argv[2], std::atoi(argv[3]), argv[4], argv[5]);
  std::fprintf(stderr, "%s: unknown mode '%s'\n", argv[0], mode.c_str());
  return 2;
}
