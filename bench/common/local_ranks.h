// Benchmarks that start their own ranks: the program re-executes itself once per rank with torchrun's variables
// (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, a free MASTER_PORT) and waits for them.
//
//   int main(int argc, char** argv) {
//     if (std::getenv("RANK") == nullptr) return lakerun::bench::RunLocalRanks(2, argv);   // the parent
//     ...                                                                                  // a rank
//   }
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace lakerun::bench {

/// A TCP port on 127.0.0.1 that was free a moment ago.
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

/// Starts `world` copies of this program with `argv`'s arguments, each rank's variables set; waits at most
/// `limit`, killing every rank past it, and kills the others as soon as one rank fails. Returns 0 when every rank
/// exited with 0, else 1.
inline int RunLocalRanks(int world, char** argv, std::chrono::minutes limit = std::chrono::minutes(10)) {
  using Clock = std::chrono::steady_clock;
  const int port = FreeLoopbackPort();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      execv("/proc/self/exe", argv);
      _exit(127);
    }
    pids.push_back(pid);
  }
  const auto deadline = Clock::now() + limit;
  int failures = 0;
  std::size_t running = pids.size();
  std::vector<bool> done(pids.size(), false);
  auto kill_running = [&] {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (!done[i]) kill(pids[i], SIGKILL);
    }
  };
  while (running > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (done[i] || waitpid(pids[i], &status, WNOHANG) == 0) continue;
      done[i] = true;
      --running;
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        if (failures++ == 0 && running > 0) {
          std::fprintf(stderr, "rank %zu failed; stopping the other ranks\n", i);
          kill_running();
        }
      }
    }
    if (running > 0 && Clock::now() > deadline) {
      std::fprintf(stderr, "benchmark ran past %d minutes; killed\n", static_cast<int>(limit.count()));
      kill_running();
      ++failures;  // the ranks reaped next fail quietly
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace lakerun::bench
