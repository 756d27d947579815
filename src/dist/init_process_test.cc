// Init() end to end: real rank processes (dist_init_probe) started with each engine's environment, on loopback.
#include <lakerun/base/error.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "dist/c10d_compat.h"
#include "lakerun/rdzv/secret.h"
#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/ports.h"
#include "lakerun_testing/temp_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

extern char** environ;

namespace lakerun::dist {
namespace {

using Env = std::map<std::string, std::string>;

// Variables of any engine the test itself may run under; every probe starts without them.
bool IsEngineVariable(const std::string& name) {
  static const char* kPrefixes[] = {"RANK=",        "WORLD_SIZE=",   "LOCAL_RANK=", "LOCAL_WORLD_SIZE=",
                                    "MASTER_ADDR=", "MASTER_PORT=",  "SLURM_",      "OMPI_",
                                    "PMI_",         "PMIX_",         "TORCHELASTIC_", "LAKERUN_LAUNCHER=",
                                    "GROUP_RANK=",  "GLOO_SOCKET_IFNAME=", "LAKERUN_RDZV_"};
  for (const char* p : kPrefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

struct Process {
  pid_t pid = -1;
  std::string log;
};

Process Spawn(const std::vector<std::string>& argv, const Env& extra, const std::string& log) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!IsEngineVariable(*e)) env.emplace_back(*e);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // own group: killed as a whole on timeout
  posix_spawnattr_setpgroup(&attr, 0);
  Process p;
  p.log = log;
  int rc = posix_spawnp(&p.pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
  return p;
}

// Waits for the process until `deadline`; kills its process group if it runs past it. Returns the exit code
// (128 + signal when killed).
int Wait(Process& p, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  while (true) {
    pid_t r = waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      ADD_FAILURE() << "process " << p.pid << " ran past its deadline and was killed";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// dist_init_probe is built next to this test (same CMake directory).
std::string ProbePath() {
  char self[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string path(self, n > 0 ? static_cast<std::size_t>(n) : 0);
  return path.substr(0, path.rfind('/') + 1) + "dist_init_probe";
}

struct Result {
  int code;
  std::string output;
};

// Starts one probe per entry of `envs` and waits for all (bounded).
std::vector<Result> RunProbes(const std::vector<Env>& envs, std::chrono::seconds limit = std::chrono::seconds(40)) {
  lakerun::testing::TempDir dir;
  std::string probe = ProbePath();
  std::vector<Process> procs;
  for (std::size_t i = 0; i < envs.size(); ++i) {
    procs.push_back(Spawn({probe}, envs[i], dir.Join("rank" + std::to_string(i) + ".log")));
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<Result> results;
  for (auto& p : procs) {
    int code = Wait(p, deadline);
    results.push_back({code, Read(p.log)});
  }
  return results;
}

Env Torchrun(int rank, int world, int port) {
  return {{"RANK", std::to_string(rank)},        {"WORLD_SIZE", std::to_string(world)},
          {"LOCAL_RANK", std::to_string(rank)},  {"LOCAL_WORLD_SIZE", std::to_string(world)},
          {"MASTER_ADDR", "127.0.0.1"},          {"MASTER_PORT", std::to_string(port)},
          {"LAKERUN_PROBE_TIMEOUT_MS", "20000"}};
}

TEST(InitProcessTest, TorchrunEnvRankZeroHostsTheStore) {
  int port = lakerun::testing::FreeLoopbackPort();
  std::vector<Result> r = RunProbes({Torchrun(0, 3, port), Torchrun(1, 3, port), Torchrun(2, 3, port)});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].code, 0) << r[i].output;
    EXPECT_THAT(r[i].output, ::testing::HasSubstr("probe launcher=torchrun rank=" + std::to_string(i) +
                                                  " world=3 local=" + std::to_string(i) + "/3 sum=6"));
  }
}

TEST(InitProcessTest, RanksSharingOneGpuUseGlooUnderAutoAndFailClearlyUnderNccl) {
#ifdef USE_C10D_NCCL
  if (c10::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
#else
  GTEST_SKIP() << "this libtorch was built without NCCL";
#endif
  // NCCL itself would fail at the first collective ("Duplicate GPU detected"); both ranks see only GPU 0.
  for (const char* backend : {"auto", "nccl"}) {
    SCOPED_TRACE(backend);
    int port = lakerun::testing::FreeLoopbackPort();
    std::vector<Env> envs = {Torchrun(0, 2, port), Torchrun(1, 2, port)};
    for (Env& e : envs) {
      e["CUDA_VISIBLE_DEVICES"] = "0";
      e["LAKERUN_PROBE_BACKEND"] = backend;
    }
    std::vector<Result> r = RunProbes(envs);
    for (int i = 0; i < 2; ++i) {
      if (std::string(backend) == "auto") {
        EXPECT_EQ(r[i].code, 0) << r[i].output;
        EXPECT_THAT(r[i].output, ::testing::HasSubstr("sum=3"));
        EXPECT_THAT(r[i].output, ::testing::HasSubstr("probe backend=gloo device=cpu"));
      } else {
        EXPECT_EQ(r[i].code, 4) << r[i].output;
        EXPECT_THAT(r[i].output, ::testing::HasSubstr("rank " + std::to_string(i) + " of 2: InitOptions::backend="
                                                      "'nccl': NCCL needs a GPU of its own for every rank, but ranks "));
        EXPECT_THAT(r[i].output, ::testing::HasSubstr("both use GPU "));
        EXPECT_THAT(r[i].output, ::testing::HasSubstr("--use-gpu"));
      }
    }
    if (std::string(backend) == "auto") {
      // Rank 0 alone says why NCCL was not used.
      EXPECT_THAT(r[0].output, ::testing::HasSubstr("backend 'auto' uses Gloo on the CPU instead"));
      EXPECT_THAT(r[1].output, ::testing::Not(::testing::HasSubstr("uses Gloo on the CPU instead")));
    }
  }
}

constexpr char kJobSecret[] = "the secret of the test's job, 32 bytes";

// What `lakerun launch` hosts: an authenticated store, and an open one for PyTorch ranks at MASTER_PORT.
struct LauncherStores {
  std::unique_ptr<rdzv::StoreServer> store;
  std::unique_ptr<rdzv::StoreServer> compat;
  LauncherStores() {
    rdzv::StoreServerOptions options;
    options.secret = kJobSecret;
    store = rdzv::StoreServer::Start(options);
    rdzv::StoreServerOptions open;
    open.access = rdzv::StoreAccess::kOpen;
    compat = rdzv::StoreServer::Start(open);
  }
  Env RankEnv(int rank, int world) const {
    Env e = Torchrun(rank, world, compat->port());
    e["LAKERUN_LAUNCHER"] = "1";
    e["GROUP_RANK"] = "0";
    e["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    e[rdzv::kStorePortVariable] = std::to_string(store->port());
    e[rdzv::kSecretVariable] = kJobSecret;
    return e;
  }
};

// torchrun's agent store: c10d's own TCPStore server (the test plays the agent).
c10::intrusive_ptr<::c10d::TCPStore> C10dServer() {
  ::c10d::TCPStoreOptions options;
  options.port = 0;
  options.isServer = true;
  options.numWorkers = c10::nullopt;
  options.waitWorkers = false;
  options.timeout = std::chrono::seconds(20);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  options.useLibUV = false;  // Debian's 2.6 lacks libuv (dist/c10d_compat.h's history)
#endif
  return c10::make_intrusive<::c10d::TCPStore>("127.0.0.1", options);
}

TEST(InitProcessTest, LakerunLauncherStoreAndAttemptPrefix) {
  // The test plays the launcher: its ranks authenticate at LAKERUN_RDZV_PORT, not at MASTER_PORT's open listener.
  LauncherStores stores;
  std::vector<Env> envs;
  for (int rank = 0; rank < 2; ++rank) {
    Env e = stores.RankEnv(rank, 2);
    e["TORCHELASTIC_RESTART_COUNT"] = "3";
    e["LAKERUN_RUN_ID"] = "test-run";
    envs.push_back(e);
  }
  std::vector<Result> r = RunProbes(envs);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r[i].code, 0) << r[i].output;
    EXPECT_THAT(r[i].output, ::testing::HasSubstr("probe launcher=lakerun rank=" + std::to_string(i) + " world=2"));
    EXPECT_THAT(r[i].output, ::testing::HasSubstr("sum=3"));
    EXPECT_THAT(r[i].output, ::testing::Not(::testing::HasSubstr(kJobSecret)));
  }
  // The ranks' keys live under the attempt prefix, as with PyTorch's env:// under torchrun, in the authenticated
  // store only.
  EXPECT_TRUE(stores.store->Check({"/worker/attempt_3/lakerun/arrived/1"}));
  EXPECT_FALSE(stores.store->Check({"lakerun/arrived/1"}));
  EXPECT_EQ(stores.store->Stats().refused, 0u);
  EXPECT_EQ(stores.compat->NumKeys(), 0);
}

TEST(InitProcessTest, TorchrunAgentStoreIsC10dsOwnTcpStore) {
  auto agent = C10dServer();
  std::vector<Env> envs;
  for (int rank = 0; rank < 2; ++rank) {
    Env e = Torchrun(rank, 2, agent->getPort());
    e["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    envs.push_back(e);
  }
  std::vector<Result> r = RunProbes(envs);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r[i].code, 0) << r[i].output;
    EXPECT_THAT(r[i].output, ::testing::HasSubstr("sum=3"));
  }
  EXPECT_TRUE(agent->check({"/worker/attempt_0/lakerun/arrived/1"}));
}

TEST(InitProcessTest, SecretUnderTorchrunsAgentStoreIsAClearError) {
  auto agent = C10dServer();
  Env e = Torchrun(0, 2, agent->getPort());
  e["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  e[rdzv::kSecretVariable] = kJobSecret;
  std::vector<Result> r = RunProbes({e}, std::chrono::seconds(20));
  EXPECT_EQ(r[0].code, 4) << r[0].output;  // ConfigError
  EXPECT_THAT(r[0].output, ::testing::HasSubstr("c10d's TCPStore cannot authenticate"));
  EXPECT_THAT(r[0].output, ::testing::Not(::testing::HasSubstr(kJobSecret)));
}

// A c10d request on a raw connection (legacy numbering: SET key value), as a stranger's c10d client sends it.
void ForgeKey(int port, const std::string& key, const std::string& value) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = -1;
  for (int i = 0; i < 200; ++i) {  // until rank 0 listens (bounded: 10 s)
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) break;
    ::close(fd);
    fd = -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(fd, 0) << "rank 0 never listened on port " << port;
  std::string request(1, '\0');
  const std::string wire_key = "/" + key;
  for (const std::string* field : {&wire_key, &value}) {
    const uint64_t n = field->size();
    request.append(reinterpret_cast<const char*>(&n), sizeof(n));
    request += *field;
  }
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  char buffer[256];
  while (::recv(fd, buffer, sizeof(buffer), 0) > 0) {
  }  // until the server closes the connection
  ::close(fd);
}

// The attack, on a job whose rank 0 hosts the store (torchrun variables, srun): a stranger forges the
// verdict key that makes every rank abort, and a client with another secret tries to join. Neither reaches a key;
// the job finishes.
TEST(InitProcessTest, StrangersWithoutTheSecretCannotTouchAJobThatRankZeroHosts) {
  const int port = lakerun::testing::FreeLoopbackPort();
  Env e0 = Torchrun(0, 2, port);
  Env e1 = Torchrun(1, 2, port);
  e0[rdzv::kSecretVariable] = e1[rdzv::kSecretVariable] = kJobSecret;
  lakerun::testing::TempDir dir;
  Process rank0 = Spawn({ProbePath()}, e0, dir.Join("rank0.log"));
  ForgeKey(port, "lakerun/arrival_timeout", "a stranger's text");
  rdzv::StoreClientOptions wrong;
  wrong.host = "127.0.0.1";
  wrong.port = port;
  wrong.secret = "a guess at the secret, 32 bytes long";
  EXPECT_THROW(rdzv::StoreClient::Connect(wrong), DistError);
  Process rank1 = Spawn({ProbePath()}, e1, dir.Join("rank1.log"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  const int code0 = Wait(rank0, deadline);
  const int code1 = Wait(rank1, deadline);
  const std::string out0 = Read(rank0.log);
  EXPECT_EQ(code0, 0) << out0;
  EXPECT_EQ(code1, 0) << Read(rank1.log);
  EXPECT_THAT(out0, ::testing::HasSubstr("sum=3"));
  EXPECT_THAT(out0, ::testing::Not(::testing::HasSubstr("stranger")));
  EXPECT_THAT(out0, ::testing::HasSubstr("refused the connection from 127.0.0.1:"));
  EXPECT_THAT(out0 + Read(rank1.log), ::testing::Not(::testing::HasSubstr(kJobSecret)));
}

TEST(InitProcessTest, OpenStoreOnEveryInterfaceIsWarnedAbout) {
  Env e0 = Torchrun(0, 2, lakerun::testing::FreeLoopbackPort());
  e0["MASTER_ADDR"] = "0.0.0.0";
  e0["LAKERUN_PROBE_TIMEOUT_MS"] = "1000";
  std::vector<Result> r = RunProbes({e0}, std::chrono::seconds(20));
  EXPECT_EQ(r[0].code, 3) << r[0].output;
  EXPECT_THAT(r[0].output, ::testing::HasSubstr("rank 0 hosts an open rendezvous store on port"));
  EXPECT_THAT(r[0].output, ::testing::HasSubstr("Set LAKERUN_RDZV_SECRET"));
}

TEST(InitProcessTest, MissingPeerIsCommTimeoutNamingIt) {
  // Ranks 0 and 2 of 3 arrive at a launcher-hosted store; rank 1 never starts. Every rank that arrived fails
  // within its timeout naming the missing rank (rank 2 too, if it was slower to start than rank 0's timeout).
  LauncherStores stores;
  const int port = stores.store->port();
  std::vector<Env> envs;
  for (int rank : {0, 2}) {
    Env e = stores.RankEnv(rank, 3);
    e["LAKERUN_PROBE_TIMEOUT_MS"] = "2000";
    envs.push_back(e);
  }
  std::vector<Result> r = RunProbes(envs, std::chrono::seconds(30));
  for (const Result& res : r) {
    EXPECT_EQ(res.code, 3) << res.output;  // CommTimeout
    EXPECT_THAT(res.output, ::testing::ContainsRegex("ranks? did not arrive at the rendezvous store 127.0.0.1:" +
                                                     std::to_string(port) + " within 2000 ms; missing ranks? 1(, 2)?\n"));
  }
}

TEST(InitProcessTest, StoreHostAloneNamesEveryMissingRank) {
  Env e0 = Torchrun(0, 3, lakerun::testing::FreeLoopbackPort());
  e0["LAKERUN_PROBE_TIMEOUT_MS"] = "1500";
  std::vector<Result> r = RunProbes({e0}, std::chrono::seconds(20));
  EXPECT_EQ(r[0].code, 3) << r[0].output;
  EXPECT_THAT(r[0].output, ::testing::HasSubstr("rank 0: 2 of 3 ranks did not arrive"));
  EXPECT_THAT(r[0].output, ::testing::HasSubstr("within 1500 ms; missing ranks 1, 2"));
}

TEST(InitProcessTest, StoreThatNeverAppearsIsCommTimeout) {
  Env e1 = Torchrun(1, 2, lakerun::testing::FreeLoopbackPort());
  e1["LAKERUN_PROBE_TIMEOUT_MS"] = "1500";
  std::vector<Result> r = RunProbes({e1}, std::chrono::seconds(20));
  EXPECT_EQ(r[0].code, 3) << r[0].output;
  EXPECT_THAT(r[0].output, ::testing::HasSubstr("rank 1 could not reach the rendezvous store at 127.0.0.1:"));
}

// Segments of this job left in /dev/shm (their names carry rank 0's pid).
std::vector<std::string> SharedSegmentsOf(pid_t rank0) {
  std::vector<std::string> found;
  std::string prefix = "lakerun-allreduce-" + std::to_string(rank0) + "-";
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir)) {
      if (std::string(entry->d_name).rfind(prefix, 0) == 0) found.push_back(entry->d_name);
    }
    closedir(dir);
  }
  return found;
}

// Torchrun environments of `world` probes that train 5 DDP steps, plus `extra`.
std::vector<Env> DdpProbes(int world, const Env& extra) {
  const int port = lakerun::testing::FreeLoopbackPort();
  std::vector<Env> envs;
  for (int rank = 0; rank < world; ++rank) {
    envs.push_back(Torchrun(rank, world, port));
    envs.back()["LAKERUN_PROBE_DDP_STEPS"] = "5";
    for (const auto& [k, v] : extra) envs.back()[k] = v;
  }
  return envs;
}

TEST(InitProcessTest, DdpAllReducesThroughSharedMemoryAcrossProcesses) {
  std::vector<Env> envs = DdpProbes(3, {});
  std::vector<Result> shm = RunProbes(envs);
  for (Env& e : envs) e["LAKERUN_PROBE_DDP_SHM"] = "0";
  std::vector<Result> gloo = RunProbes(envs);
  auto checksum = [](const std::string& output) { return std::stod(output.substr(output.find("checksum=") + 9)); };
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(shm[i].code, 0) << shm[i].output;
    ASSERT_EQ(gloo[i].code, 0) << gloo[i].output;
    EXPECT_THAT(shm[i].output, ::testing::HasSubstr("ddp transport=shared memory checksum="));
    EXPECT_THAT(gloo[i].output, ::testing::HasSubstr("ddp transport=gloo checksum="));
    // Bitwise the same model on every rank; the same training as through Gloo up to summation order.
    EXPECT_EQ(shm[i].output.substr(shm[i].output.find("checksum=")),
              shm[0].output.substr(shm[0].output.find("checksum=")));
    EXPECT_NEAR(checksum(shm[i].output), checksum(gloo[i].output), 1e-5 * std::abs(checksum(gloo[i].output)));
  }
}

TEST(InitProcessTest, DdpPeerThatDiesIsNamedBeforeTheTimeout) {
  std::vector<Env> envs = DdpProbes(2, {{"LAKERUN_PROBE_EXIT_RANK", "1"}, {"LAKERUN_PROBE_EXIT_STEP", "2"},
                                         {"LAKERUN_PROBE_TIMEOUT_MS", "30000"}});
  lakerun::testing::TempDir dir;
  std::vector<Process> procs;
  for (int i = 0; i < 2; ++i) procs.push_back(Spawn({ProbePath()}, envs[i], dir.Join("rank" + std::to_string(i))));
  auto began = std::chrono::steady_clock::now();
  int code0 = Wait(procs[0], began + std::chrono::seconds(40));
  auto took = std::chrono::steady_clock::now() - began;
  int code1 = Wait(procs[1], began + std::chrono::seconds(40));
  std::string out0 = Read(procs[0].log);
  EXPECT_EQ(code1, 7);
  EXPECT_EQ(code0, 4) << out0;  // DistError, not CommTimeout (3)
  EXPECT_THAT(out0, ::testing::HasSubstr("rank 0 of 2: DDP gradient all_reduce through shared memory"));
  EXPECT_THAT(out0, ::testing::HasSubstr("rank 1 (pid " + std::to_string(procs[1].pid) + ") exited"));
  EXPECT_LT(took, std::chrono::seconds(15)) << "the dead peer was only noticed by the timeout";
  EXPECT_THAT(SharedSegmentsOf(procs[0].pid), ::testing::IsEmpty());
}

TEST(InitProcessTest, SlurmStepAndBatchScript) {
  int port = lakerun::testing::FreeLoopbackPort();
  std::vector<Env> envs;
  for (int rank = 0; rank < 2; ++rank) {
    envs.push_back({{"SLURM_PROCID", std::to_string(rank)}, {"SLURM_LOCALID", std::to_string(rank)},
                    {"SLURM_NTASKS", "2"}, {"SLURM_GTIDS", "0,1"}, {"SLURM_STEP_ID", "0"},
                    {"SLURM_JOB_ID", "77"}, {"SLURM_STEP_NODELIST", "127.0.0.[1-2]"},
                    {"MASTER_PORT", std::to_string(port)}, {"LAKERUN_PROBE_TIMEOUT_MS", "20000"}});
  }
  std::vector<Result> r = RunProbes(envs);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r[i].code, 0) << r[i].output;
    EXPECT_THAT(r[i].output, ::testing::HasSubstr("probe launcher=slurm rank=" + std::to_string(i) +
                                                  " world=2 local=" + std::to_string(i) + "/2 sum=3"));
  }
  // The batch script itself: SLURM_PROCID=0 of 2 but no step: a single process that needs no peer.
  Env batch = envs[0];
  batch.erase("SLURM_STEP_ID");
  std::vector<Result> b = RunProbes({batch});
  EXPECT_EQ(b[0].code, 0) << b[0].output;
  EXPECT_THAT(b[0].output, ::testing::HasSubstr("probe launcher=none rank=0 world=1 local=0/1 sum=1"));
}

// Open MPI's major version from `mpirun --version` ("mpirun (Open MPI) 4.1.4"); 0 if unknown.
int OpenMpiMajorVersion() {
  lakerun::testing::TempDir dir;
  const std::string text = lakerun::testing::RunProgram({"/bin/sh", "-c", "exec mpirun --version"},
                                                        dir.Join("mpirun-version.log"), std::chrono::seconds(30))
                               .output;
  const std::string tag = "(Open MPI) ";
  const size_t at = text.find(tag);
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + tag.size());
}

TEST(InitProcessTest, MpirunTwoRanks) {
  if (system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun not installed";
  lakerun::testing::TempDir dir;
  std::string probe = ProbePath();
  int port = lakerun::testing::FreeLoopbackPort();
  std::vector<std::string> argv = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                                   "--mca", "btl_tcp_if_include", "lo"};
  // Open MPI 4 keeps its out-of-band channel on loopback when told to. Open MPI 5's runtime (PRRTE) refuses a
  // loopback-only channel when the host has another interface; its daemon and both ranks are on this host, so the
  // channel's traffic stays on it either way.
  if (OpenMpiMajorVersion() < 5) argv.insert(argv.end(), {"--mca", "oob_tcp_if_include", "lo"});
  argv.insert(argv.end(), {"-np", "2", "-x", "MASTER_PORT=" + std::to_string(port), "-x",
                           "LAKERUN_PROBE_TIMEOUT_MS=20000", probe});
  Process p = Spawn(argv, {}, dir.Join("mpirun.log"));
  int code = Wait(p, std::chrono::steady_clock::now() + std::chrono::seconds(40));
  std::string out = Read(p.log);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("probe launcher=openmpi rank=0 world=2 local=0/2 sum=3"));
  EXPECT_THAT(out, ::testing::HasSubstr("probe launcher=openmpi rank=1 world=2 local=1/2 sum=3"));
}

}  // namespace
}  // namespace lakerun::dist
