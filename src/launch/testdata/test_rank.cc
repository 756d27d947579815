// A rank program for the launcher tests. It does what its flags say, in this order:
//   --before-fork TEXT     print TEXT on stdout (before the fork point, under fork start)
//   --thread-before-fork   start a thread that sleeps (so the fork point must refuse)
//   --fork-point           call lakerun::ForkPoint() (fork start forks the ranks here)
//   --print-env            print the launcher's variables as KEY=VALUE lines on stdout, and PARENT_PID, PGID_IS_PID
//   --pidfile DIR          write its pid to DIR/rank<RANK>.attempt<LAKERUN_RESTART_COUNT>.pid
//   --grandchild           fork a child that sleeps in the same process group (its pid goes to the pid file too)
//   --ignore-term          ignore SIGTERM (the launcher must escalate to SIGKILL)
//   --stdout TEXT / --stderr TEXT   print a line; --partial TEXT prints TEXT to stdout without a newline
//   --bar N                rank 0 draws a progress bar on stderr: "\rstep i/N" for i = 1..N (a pause after each),
//                          then a newline
//   --fail-rank R [--fail-attempt A] --fail-how exit:N|abort|kill9|segv [--fail-after SECONDS]
//                          rank R fails that way (on attempt A only, if given) after the delay
//   --rendezvous KEY       connect to the launcher's authenticated store (LAKERUN_RDZV_PORT, LAKERUN_RDZV_SECRET),
//                          wait up to 30 s for KEY and print "KEY=<value>"
//   --collectives K [--hang-rank R --hang-how stop|exit|spin|sleep [--hang-attempt A]] [--give-up-after SECONDS]
//                          mark K-1 short collectives on the launcher's progress board, then block in collective K as
//                          if a peer never came (every rank; a deadlock); rank R instead stops itself (SIGSTOP),
//                          exits 0, spins or sleeps before entering collective K (on attempt A only, if given; on the others
//                          every rank exits 0 after collective K-1). With --give-up-after a blocked rank exits 1
//                          after that long, still inside the collective (as a collective timeout)
//   --sleep SECONDS        every other rank sleeps that long, then exits 0
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lakerun/base/fork_point.h"
#include "lakerun/rdzv/progress.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"

namespace {

int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : -1;
}

// Exit code 66 when the store cannot be used.
int Rendezvous(const std::string& key) {
  try {
    lakerun::rdzv::StoreClientOptions options;
    options.host = std::getenv("MASTER_ADDR");
    options.port = EnvInt(lakerun::rdzv::kStorePortVariable);
    options.secret = lakerun::rdzv::SecretFromEnvironment(lakerun::ProcessEnvironment()).value_or("");
    options.connect_timeout = std::chrono::seconds(30);
    auto store = lakerun::rdzv::StoreClient::Connect(options);
    std::printf("%s=%s\n", key.c_str(), store->Get(key, std::chrono::seconds(30)).c_str());
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_rank: rendezvous: %s\n", e.what());
    return 66;
  }
}

void SleepSeconds(double seconds) {
  if (seconds > 0) ::usleep(static_cast<useconds_t>(seconds * 1e6));
}

// --collectives: returns the exit code.
int Collectives(int rank, int k, int hang_rank, const std::string& hang_how, bool hangs_now, double give_up_after) {
  std::unique_ptr<lakerun::rdzv::ProgressReporter> progress = lakerun::rdzv::ProgressReporter::FromEnvironment();
  if (!progress) {
    std::fprintf(stderr, "test_rank: --collectives needs a progress board (run under the launcher)\n");
    return 67;
  }
  for (int i = 1; i < k; ++i) {
    lakerun::rdzv::ProgressReporter::Scope in(progress.get(), lakerun::rdzv::Collective::kAllReduce);
    SleepSeconds(0.01);
  }
  if (!hangs_now) return 0;
  if (rank == hang_rank) {
    std::fprintf(stderr, "rank %d hangs before collective %d: %s\n", rank, k, hang_how.c_str());
    std::fflush(stderr);
    if (hang_how == "stop") ::raise(SIGSTOP);
    if (hang_how == "exit") return 0;
    if (hang_how == "sleep") {
      for (;;) ::pause();
    }
    for (volatile uint64_t spin = 0;; spin = spin + 1) {
    }
  }
  progress->Enter(lakerun::rdzv::Collective::kBarrier);
  if (give_up_after > 0) {
    SleepSeconds(give_up_after);
    std::fprintf(stderr, "rank %d: collective %d timed out\n", rank, k);
    return 1;
  }
  for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool print_env = false, grandchild = false, ignore_term = false, fork_point = false, thread_before_fork = false;
  std::string before_fork, rendezvous_key, hang_how = "stop";
  std::string pidfile_dir, fail_how;
  int fail_rank = -1, fail_attempt = -1, bar_steps = 0, collectives = 0, hang_rank = -1, hang_attempt = -1;
  double fail_after = 0, sleep_seconds = 0, give_up_after = 0;
  std::vector<std::pair<std::string, std::string>> output;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "test_rank: %s needs a value\n", a.c_str());
        std::exit(64);
      }
      return args[++i];
    };
    if (a == "--print-env") print_env = true;
    else if (a == "--fork-point") fork_point = true;
    else if (a == "--thread-before-fork") thread_before_fork = true;
    else if (a == "--before-fork") before_fork = next();
    else if (a == "--grandchild") grandchild = true;
    else if (a == "--ignore-term") ignore_term = true;
    else if (a == "--pidfile") pidfile_dir = next();
    else if (a == "--stdout" || a == "--stderr" || a == "--partial") output.emplace_back(a, next());
    else if (a == "--fail-rank") fail_rank = std::atoi(next().c_str());
    else if (a == "--fail-attempt") fail_attempt = std::atoi(next().c_str());
    else if (a == "--fail-how") fail_how = next();
    else if (a == "--fail-after") fail_after = std::atof(next().c_str());
    else if (a == "--rendezvous") rendezvous_key = next();
    else if (a == "--sleep") sleep_seconds = std::atof(next().c_str());
    else if (a == "--bar") bar_steps = std::atoi(next().c_str());
    else if (a == "--collectives") collectives = std::atoi(next().c_str());
    else if (a == "--hang-rank") hang_rank = std::atoi(next().c_str());
    else if (a == "--hang-how") hang_how = next();
    else if (a == "--hang-attempt") hang_attempt = std::atoi(next().c_str());
    else if (a == "--give-up-after") give_up_after = std::atof(next().c_str());
    else {
      std::fprintf(stderr, "test_rank: unknown flag %s\n", a.c_str());
      return 64;
    }
  }
  if (!before_fork.empty()) {
    std::printf("%s\n", before_fork.c_str());  // left in stdio's buffer: the fork point must flush it once
  }
  if (thread_before_fork) std::thread([] { ::sleep(300); }).detach();
  if (fork_point) lakerun::ForkPoint();
  const int rank = EnvInt("RANK");
  const int attempt = EnvInt("LAKERUN_RESTART_COUNT");
  if (print_env) {
    for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                             "ROLE_RANK", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                             "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
                             "TORCHELASTIC_RUN_ID", "LAKERUN_RUN_ID", "LAKERUN_RESTART_COUNT", "LAKERUN_LAUNCHER",
                             "LAKERUN_CONSOLE_IS_TERMINAL", "LAKERUN_RDZV_PORT", "LAKERUN_RDZV_SECRET",
                             "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "LAKERUN_TEST_EXTRA", "LAKERUN_FORK_FD"}) {
      const char* v = std::getenv(name);
      std::printf("%s=%s\n", name, v != nullptr ? v : "<unset>");
    }
    std::printf("PGID_IS_PID=%d\n", ::getpgrp() == ::getpid() ? 1 : 0);
    std::printf("PARENT_PID=%d\n", static_cast<int>(::getppid()));
    std::fflush(stdout);
  }
  std::string pids = std::to_string(::getpid()) + "\n";
  if (grandchild) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::sleep(300);
      _exit(0);
    }
    pids += std::to_string(child) + "\n";
  }
  if (ignore_term) ::signal(SIGTERM, SIG_IGN);
  if (!pidfile_dir.empty()) {
    const std::string path = pidfile_dir + "/rank" + std::to_string(rank) + ".attempt" + std::to_string(attempt);
    FILE* f = std::fopen((path + ".tmp").c_str(), "w");
    if (f == nullptr) return 65;
    std::fputs(pids.c_str(), f);
    std::fclose(f);
    std::rename((path + ".tmp").c_str(), (path + ".pid").c_str());  // appears complete or not at all
  }
  for (const auto& [kind, text] : output) {
    if (kind == "--stdout") std::printf("%s\n", text.c_str());
    if (kind == "--stderr") std::fprintf(stderr, "%s\n", text.c_str());
    if (kind == "--partial") std::printf("%s", text.c_str());
  }
  std::fflush(stdout);
  for (int i = 1; rank == 0 && i <= bar_steps; ++i) {
    std::fprintf(stderr, "\rstep %d/%d", i, bar_steps);
    std::fflush(stderr);
    SleepSeconds(0.05);  // separate reads for the launcher
  }
  if (rank == 0 && bar_steps > 0) std::fputs("\n", stderr);
  const bool fails = rank == fail_rank && (fail_attempt < 0 || fail_attempt == attempt);
  if (fails) {
    SleepSeconds(fail_after);
    std::fprintf(stderr, "rank %d is about to fail: %s\n", rank, fail_how.c_str());
    std::fflush(stderr);
    if (fail_how.rfind("exit:", 0) == 0) return std::atoi(fail_how.c_str() + 5);
    if (fail_how == "abort") std::abort();
    if (fail_how == "kill9") ::kill(::getpid(), SIGKILL);
    if (fail_how == "segv") ::raise(SIGSEGV);
    std::fprintf(stderr, "test_rank: unknown --fail-how %s\n", fail_how.c_str());
    return 64;
  }
  if (!rendezvous_key.empty()) {
    if (const int code = Rendezvous(rendezvous_key); code != 0) return code;
  }
  if (collectives > 0) {
    const bool hangs_now = hang_attempt < 0 || hang_attempt == attempt;
    return Collectives(rank, collectives, hang_rank, hang_how, hangs_now, give_up_after);
  }
  SleepSeconds(sleep_seconds);
  return 0;
}
