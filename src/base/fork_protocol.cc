#include "base/fork_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>

namespace lakerun::fork_start {
namespace {

std::map<std::string_view, std::string_view> ByKey(const std::vector<std::string>& env) {
  std::map<std::string_view, std::string_view> out;
  for (const std::string& entry : env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    out.emplace(std::string_view(entry).substr(0, eq), std::string_view(entry).substr(eq + 1));
  }
  return out;
}

void PutInt32(std::string* out, int32_t v) { out->append(reinterpret_cast<const char*>(&v), sizeof(v)); }

bool GetInt32(std::string_view* in, int32_t* v) {
  if (in->size() < sizeof(*v)) return false;
  std::memcpy(v, in->data(), sizeof(*v));
  in->remove_prefix(sizeof(*v));
  return true;
}

}  // namespace

ForkRequest EnvironmentChange(const std::vector<std::string>& from, const std::vector<std::string>& to, int rank) {
  ForkRequest request;
  request.rank = rank;
  const auto before = ByKey(from);
  const auto after = ByKey(to);
  for (const auto& [key, value] : after) {
    auto it = before.find(key);
    if (it == before.end() || it->second != value) request.set.push_back(std::string(key) + "=" + std::string(value));
  }
  for (const auto& [key, value] : before) {
    if (after.count(key) == 0) request.unset.emplace_back(key);
  }
  return request;
}

std::string EncodeRequest(const ForkRequest& request) {
  std::string out = "Q";
  PutInt32(&out, request.rank);
  for (const auto& e : request.set) out.append("+").append(e).push_back('\0');
  for (const auto& k : request.unset) out.append("-").append(k).push_back('\0');
  return out;
}

bool DecodeRequest(std::string_view message, ForkRequest* request) {
  if (message.empty() || message[0] != 'Q') return false;
  message.remove_prefix(1);
  int32_t rank;
  if (!GetInt32(&message, &rank) || rank < 0) return false;
  request->rank = rank;
  request->set.clear();
  request->unset.clear();
  while (!message.empty()) {
    const size_t end = message.find('\0');
    if (end == std::string_view::npos || end < 2) return false;
    const std::string_view entry = message.substr(1, end - 1);
    if (message[0] == '+' && entry.find('=') != std::string_view::npos && entry[0] != '=') {
      request->set.emplace_back(entry);
    } else if (message[0] == '-' && entry.find('=') == std::string_view::npos) {
      request->unset.emplace_back(entry);
    } else {
      return false;
    }
    message.remove_prefix(end + 1);
  }
  return true;
}

std::string EncodeRankPid(char type, int rank, pid_t pid) {
  std::string out(1, type);
  PutInt32(&out, rank);
  if (type == 'F') PutInt32(&out, pid);
  return out;
}

bool DecodeRankPid(std::string_view message, char* type, int* rank, pid_t* pid) {
  if (message.empty() || (message[0] != 'F' && message[0] != 'R')) return false;
  *type = message[0];
  message.remove_prefix(1);
  int32_t r, p = 0;
  if (!GetInt32(&message, &r) || r < 0) return false;
  if (*type == 'F' && (!GetInt32(&message, &p) || p <= 0)) return false;
  if (!message.empty()) return false;
  *rank = r;
  *pid = p;
  return true;
}

int SendMessage(int socket, std::string_view bytes, const int* fds, int fd_count, int flags) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
  if (fd_count > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(fd_count * sizeof(int));
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(fd_count * sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), fds, fd_count * sizeof(int));
  }
  while (true) {
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | flags);
    if (n >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int ReceiveMessage(int socket, std::string* bytes, std::vector<int>* fds) {
  bytes->resize(kMaxForkMessage);
  iovec iov{bytes->data(), bytes->size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  fds->clear();
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds->push_back(fd);
      }
    }
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    for (int fd : *fds) ::close(fd);
    fds->clear();
    return -EMSGSIZE;
  }
  if (n == 0) return 0;  // SOCK_SEQPACKET: a zero-length read is the peer's close
  bytes->resize(static_cast<size_t>(n));
  return 1;
}

}  // namespace lakerun::fork_start
