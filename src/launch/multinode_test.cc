// Jobs of several nodes on one machine: two `lakerun launch` agents as two processes on 127.0.0.1 with different
// --node-rank, sharing node 0's authenticated store (the logic of docs/launch.md, "Many nodes", without network
// namespaces; src/launch/testdata/netns_multinode_test.sh runs it across emulated hosts). Every wait is bounded; the
// fixture kills every process a test started.
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>

#include "launch/launcher_test_fixture.h"
#include "lakerun/base/error.h"
#include "lakerun/launch/command.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace lakerun::launch::testing;
using std::chrono::seconds;

// A port nothing listens on now (bind 0, read it, close: a test may lose it to a race, never hang on it).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Whether something accepts connections on 127.0.0.1:`port` within 30 s.
bool Listening(const std::string& port) {
  const auto deadline = Clock::now() + seconds(30);
  while (Clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class MultiNodeTest : public LauncherTest {
 protected:
  void SetUp() override {
    port_ = std::to_string(FreePort());
    secret_file_ = dir_.Join("secret");
    std::ofstream(secret_file_) << "multinode test secret, long enough\n";
    ::chmod(secret_file_.c_str(), 0600);
  }

  // An agent of a 2-node job: node `node`, -n 2, the job's port and secret, then `flags`, then the test rank
  // with `rank_flags`.
  pid_t Agent(int node, const std::vector<std::string>& flags, const std::vector<std::string>& rank_flags,
              const std::string& tag) {
    std::vector<std::string> args = {"--nnodes",      "2",           "--node-rank",        std::to_string(node),
                                     "--master-port", port_,         "--rdzv-secret-file", secret_file_,
                                     "-n",            "2",           "--join-timeout",     "30"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", rank_});
    args.insert(args.end(), rank_flags.begin(), rank_flags.end());
    return Start(args, tag);
  }

  // Waits (at most 30 s) until the test's output file `tag` holds `text`.
  void WaitForOutput(const std::string& tag, const std::string& text) {
    const auto deadline = Clock::now() + seconds(30);
    while (ReadFile(dir_.Join(tag)).find(text) == std::string::npos && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::string port_;
  std::string secret_file_;
};

// torchrun's spellings with underscores too; global ranks in node order, torchrun's variables on every rank.
TEST_F(MultiNodeTest, TwoAgentsFormOneWorldOfFourRanksInNodeOrder) {
  const pid_t node0 = Agent(0, {"--rdzv_id", "job7"}, {"--print-env"}, "node0");
  const pid_t node1 = Start({"--nnodes=2:2", "--node_rank", "1", "--rdzv_backend=c10d", "--rdzv_endpoint",
                             "127.0.0.1:" + port_,
                             "--rdzv-secret-file", secret_file_, "--nproc_per_node", "2", "--rdzv-id=job7", "--",
                             rank_, "--print-env"},
                            "node1");
  const Finished f0 = Wait(node0, seconds(60)), f1 = Wait(node1, seconds(60));
  ASSERT_EQ(f0.exit_code, 0) << f0.err;
  ASSERT_EQ(f1.exit_code, 0) << f1.err;
  auto env = ParseEnv(f0.out);
  const auto env1 = ParseEnv(f1.out);
  env.insert(env1.begin(), env1.end());
  ASSERT_EQ(env.size(), 4u) << f0.out << f1.out;
  for (int rank = 0; rank < 4; ++rank) {
    auto& e = env[rank];
    EXPECT_EQ(e["RANK"], std::to_string(rank));
    EXPECT_EQ(e["LOCAL_RANK"], std::to_string(rank % 2));
    EXPECT_EQ(e["WORLD_SIZE"], "4");
    EXPECT_EQ(e["LOCAL_WORLD_SIZE"], "2");
    EXPECT_EQ(e["GROUP_RANK"], std::to_string(rank / 2));
    EXPECT_EQ(e["GROUP_WORLD_SIZE"], "2");
    EXPECT_EQ(e["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(e["MASTER_PORT"], port_);
    EXPECT_EQ(e["LAKERUN_RDZV_PORT"], port_);
    EXPECT_EQ(e["TORCHELASTIC_RUN_ID"], "job7");
  }
  EXPECT_THAT(f1.out, HasSubstr("[rank2] RANK=2\n"));  // prefixes name global ranks
}

// torchrun's c10d rendezvous without --node-rank: the agent that can listen at the endpoint hosts the store and is
// node 0, the next is node 1 (on one host, the second agent finds the port taken and joins); a third is refused.
TEST_F(MultiNodeTest, WithoutNodeRanksTheRendezvousNumbersTheNodes) {
  const std::vector<std::string> common = {"--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint",
                                           "127.0.0.1:" + port_, "--rdzv-secret-file", secret_file_, "-n", "2",
                                           "--join-timeout", "30", "--", rank_, "--print-env", "--sleep", "1"};
  const pid_t first = Start(common, "first");
  ASSERT_TRUE(Listening(port_));  // the first agent owns the port before the second tries it
  const pid_t second = Start(common, "second");
  const Finished f0 = Wait(first, seconds(60)), f1 = Wait(second, seconds(60));
  ASSERT_EQ(f0.exit_code, 0) << f0.err;
  ASSERT_EQ(f1.exit_code, 0) << f1.err;
  EXPECT_THAT(f0.out, HasSubstr("[rank0] GROUP_RANK=0\n"));
  EXPECT_THAT(f0.out, HasSubstr("[rank1] RANK=1\n"));
  EXPECT_THAT(f1.out, HasSubstr("[rank2] GROUP_RANK=1\n"));
  EXPECT_THAT(f1.out, HasSubstr("[rank3] RANK=3\n"));
}

TEST_F(MultiNodeTest, AnAgentBeyondNnodesIsRefused) {
  const pid_t node0 = Agent(0, {}, {"--sleep", "3"}, "node0");
  const pid_t node1 = Agent(1, {}, {"--stdout", "started", "--sleep", "3"}, "node1");
  WaitForOutput("node1.out", "[rank2] started");  // both nodes joined: node 1's ranks run
  const Finished extra = RunLauncher({"--nnodes", "2", "--master-port", port_, "--rdzv-secret-file", secret_file_,
                                      "-n", "2", "--join-timeout", "10", "--", rank_},
                                     seconds(60));
  EXPECT_NE(extra.exit_code, 0);
  EXPECT_THAT(extra.err, HasSubstr("already has its 2 nodes (--nnodes 2); this agent ("));
  EXPECT_EQ(Wait(node0, seconds(60)).exit_code, 0);
  EXPECT_EQ(Wait(node1, seconds(60)).exit_code, 0);
}

// Ranks of node 1 reach node 0's authenticated store with the environment they were given.
TEST_F(MultiNodeTest, RanksOfEveryNodeReachTheStoreOfNodeZero) {
  const pid_t node0 = Agent(0, {}, {"--rendezvous", "lakerun/agent/node/0"}, "node0");
  const pid_t node1 = Agent(1, {}, {"--rendezvous", "lakerun/agent/node/1"}, "node1");
  const Finished f0 = Wait(node0, seconds(60)), f1 = Wait(node1, seconds(60));
  ASSERT_EQ(f0.exit_code, 0) << f0.err;
  ASSERT_EQ(f1.exit_code, 0) << f1.err;
  EXPECT_THAT(f1.out, HasSubstr("[rank3] lakerun/agent/node/1="));
}

// kill -9 of rank 3 (node 1): both agents stop within seconds and name node 1, rank 3, its pid and the cause.
TEST_F(MultiNodeTest, ARankKilledOnNodeOneStopsBothNodesNamingIt) {
  const std::vector<std::string> ranks = {"--fail-rank", "3", "--fail-how", "kill9", "--fail-after", "1",
                                          "--sleep",     "60"};
  const pid_t node0 = Agent(0, {}, ranks, "node0");
  const pid_t node1 = Agent(1, {}, ranks, "node1");
  const auto started = Clock::now();
  const Finished f0 = Wait(node0, seconds(30)), f1 = Wait(node1, seconds(30));
  EXPECT_LT(Clock::now() - started, seconds(15));
  for (const Finished* f : {&f0, &f1}) {
    EXPECT_EQ(f->exit_code, 128 + SIGKILL) << f->err;
    EXPECT_THAT(f->err, HasSubstr("error: node 1 ("));
    EXPECT_THAT(f->err, HasSubstr("), rank 3 (pid "));
    EXPECT_THAT(f->err, HasSubstr("was killed by signal 9 (SIGKILL)"));
    EXPECT_THAT(f->err, HasSubstr("(first failure of 4 ranks on 2 nodes)"));
  }
  EXPECT_THAT(f0.err, HasSubstr("stopping the 2 ranks of this node"));
  EXPECT_THAT(f1.err, HasSubstr("last lines of rank 3's stderr"));
}

// kill -9 of node 1's agent: its ranks die with it (parent-death signal) and node 0's agent finds it lost through
// its heartbeat within --heartbeat-timeout (plus a poll), naming node 1's agent and its pid.
TEST_F(MultiNodeTest, AKilledAgentIsFoundLostThroughItsHeartbeat) {
  const pid_t node0 = Agent(0, {"--heartbeat-timeout", "2"}, {"--sleep", "60"}, "node0");
  const pid_t node1 = Agent(1, {"--heartbeat-timeout", "2"}, {"--print-env", "--sleep", "60"}, "node1");
  WaitForOutput("node1.out", "[rank3] RANK=3");
  ::kill(node1, SIGKILL);
  const auto killed = Clock::now();
  const Finished f0 = Wait(node0, seconds(30));
  const auto detected = Clock::now() - killed;
  EXPECT_LT(detected, seconds(2 + 5));
  EXPECT_EQ(f0.exit_code, 1) << f0.err;
  EXPECT_THAT(f0.err, HasSubstr("error: node 1 ("));
  EXPECT_THAT(f0.err, HasSubstr("'s agent (pid " + std::to_string(node1) + ") is lost: no heartbeat for"));
  Wait(node1, seconds(5));
}

// kill -9 of node 0's agent: the store goes with it, and node 1's agent names node 0 at once.
TEST_F(MultiNodeTest, AKilledNodeZeroIsNamedByTheOtherNode) {
  const pid_t node0 = Agent(0, {}, {"--print-env", "--sleep", "60"}, "node0");
  const pid_t node1 = Agent(1, {}, {"--sleep", "60"}, "node1");
  WaitForOutput("node0.out", "[rank1] RANK=1");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // node 1 has joined
  ::kill(node0, SIGKILL);
  const Finished f1 = Wait(node1, seconds(30));
  EXPECT_EQ(f1.exit_code, 1) << f1.err;
  EXPECT_THAT(f1.err, HasSubstr("error: node 0 ("));
  EXPECT_THAT(f1.err, HasSubstr("'s agent (pid " + std::to_string(node0) + ") is gone: the store it hosts at"));
  Wait(node0, seconds(5));
}

// SIGTERM to node 1's agent: it stops its ranks and tells node 0, which stops its own; both exit 128+15, node 0
// naming node 1's agent and the signal.
TEST_F(MultiNodeTest, ASignalToOneAgentStopsEveryNode) {
  const pid_t node0 = Agent(0, {}, {"--sleep", "60"}, "node0");
  const pid_t node1 = Agent(1, {}, {"--print-env", "--sleep", "60"}, "node1");
  WaitForOutput("node1.out", "[rank3] RANK=3");
  ::kill(node1, SIGTERM);
  const Finished f0 = Wait(node0, seconds(30)), f1 = Wait(node1, seconds(30));
  EXPECT_EQ(f1.exit_code, 128 + SIGTERM) << f1.err;
  EXPECT_EQ(f0.exit_code, 128 + SIGTERM) << f0.err;
  EXPECT_THAT(f0.err, HasSubstr("error: node 1 ("));
  EXPECT_THAT(f0.err, HasSubstr("'s agent (pid " + std::to_string(node1) + ") was stopped by SIGTERM"));
}

// One node with --master-port: MASTER_PORT is that port (the compatibility listener's on loopback, by default).
TEST_F(MultiNodeTest, OneNodeTakesTheGivenMasterPort) {
  const Finished f = Wait(Start({"--master-port", port_, "-n", "1", "--", rank_, "--print-env"}, "one"), seconds(30));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.out, HasSubstr("[rank0] MASTER_PORT=" + port_ + "\n"));
  EXPECT_THAT(f.out, HasSubstr("[rank0] GROUP_WORLD_SIZE=1\n"));
}

// --max-restarts 1: rank 3 fails in attempt 0, every node restarts its ranks together, attempt 1 completes.
TEST_F(MultiNodeTest, MaxRestartsRestartsEveryNodeTogether) {
  const std::vector<std::string> ranks = {"--print-env", "--fail-rank", "3",        "--fail-attempt", "0",
                                          "--fail-how",  "exit:3",      "--sleep", "0.5"};
  const pid_t node0 = Agent(0, {"--max-restarts", "1"}, ranks, "node0");
  const pid_t node1 = Agent(1, {"--max-restarts", "1"}, ranks, "node1");
  const Finished f0 = Wait(node0, seconds(60)), f1 = Wait(node1, seconds(60));
  ASSERT_EQ(f0.exit_code, 0) << f0.err;
  ASSERT_EQ(f1.exit_code, 0) << f1.err;
  for (const Finished* f : {&f0, &f1}) {
    EXPECT_THAT(f->err, HasSubstr("restarting all 4 ranks of 2 nodes (restart 1 of 1) after: node 1 ("));
    EXPECT_THAT(f->err, HasSubstr("rank 3 (pid "));
  }
  EXPECT_THAT(f0.out, HasSubstr("[rank0] TORCHELASTIC_RESTART_COUNT=1\n"));
  EXPECT_THAT(f1.out, HasSubstr("[rank3] TORCHELASTIC_RESTART_COUNT=1\n"));
}

// Refusals, never a merge or a split: a second node 0 (or a second job) on the port; a node of another --rdzv-id;
// a node rank already taken; another --nproc-per-node; another secret. The job itself then completes.
TEST_F(MultiNodeTest, WhatDoesNotBelongToTheJobIsRefused) {
  const pid_t node0 = Agent(0, {"--rdzv-id", "a"}, {"--sleep", "1"}, "node0");
  ASSERT_TRUE(Listening(port_));
  Finished second = Wait(Agent(0, {"--rdzv-id", "b"}, {}, "second"), seconds(30));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr("node 0 cannot host the job's store"));
  EXPECT_THAT(second.err, HasSubstr("127.0.0.1:" + port_));
  Finished other_id = Wait(Agent(1, {"--rdzv-id", "b"}, {}, "other_id"), seconds(30));
  EXPECT_EQ(other_id.exit_code, 1);
  EXPECT_THAT(other_id.err, HasSubstr("refusing to join another job: --rdzv-id 'b' here, 'a' there"));
  Finished other_n = Wait(Start({"--nnodes", "2", "--node-rank", "1", "--master-port", port_, "--rdzv-secret-file",
                                 secret_file_, "-n", "3", "--rdzv-id", "a", "--", rank_},
                                "other_n"),
                          seconds(30));
  EXPECT_EQ(other_n.exit_code, 1);
  EXPECT_THAT(other_n.err, HasSubstr("--nproc-per-node 3 here, 2 on node 0"));
  const std::string other_secret = dir_.Join("other_secret");
  std::ofstream(other_secret) << "another job's secret, long enough\n";
  ::chmod(other_secret.c_str(), 0600);
  Finished other_key = Wait(Start({"--nnodes", "2", "--node-rank", "1", "--master-port", port_, "--rdzv-secret-file",
                                   other_secret, "-n", "2", "--rdzv-id", "a", "--", rank_},
                                  "other_key"),
                            seconds(30));
  EXPECT_EQ(other_key.exit_code, 1);
  EXPECT_THAT(other_key.err, HasSubstr("is not this job's"));
  const pid_t node1 = Agent(1, {"--rdzv-id", "a"}, {"--sleep", "1"}, "node1");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Finished taken = Wait(Agent(1, {"--rdzv-id", "a"}, {}, "taken"), seconds(30));
  EXPECT_EQ(taken.exit_code, 1);
  EXPECT_THAT(taken.err, HasSubstr("--node-rank 1 is taken: the job at 127.0.0.1:" + port_ + " already has node 1 ("));
  const Finished f0 = Wait(node0, seconds(60)), f1 = Wait(node1, seconds(60));
  EXPECT_EQ(f0.exit_code, 0) << f0.err;
  EXPECT_EQ(f1.exit_code, 0) << f1.err;
}

// A node that never comes: the agent gives up after --join-timeout, naming the missing node.
TEST_F(MultiNodeTest, AMissingNodeIsNamedAfterTheJoinTimeout) {
  const Finished f = Wait(Start({"--nnodes", "2", "--master-port", port_, "--rdzv-secret-file", secret_file_,
                                 "--join-timeout", "1", "--", rank_},
                                "alone"),
                          seconds(30));
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_THAT(f.err,
              HasSubstr("only 1 of 2 nodes joined the job at 127.0.0.1:" + port_ + " within 1 s; missing node 1"));
}

int RunCommand(std::vector<std::string> args) {
  std::vector<std::string> argv = {"launch"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  return lakerun::launch::RunLaunchCommand(static_cast<int>(cargv.size()), cargv.data());
}

// The flags of several nodes are checked before anything starts.
TEST(MultiNodeFlagsTest, BadNodeFlagsAreClearErrors) {
  const std::string rank = LAUNCH_TEST_RANK;
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "1:4", "--master-port", "29999", rank}), lakerun::ConfigError,
                    "--nnodes 1:4: only a fixed number of nodes is supported");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "x", rank}), lakerun::ConfigError, "--nnodes 'x' is not a node count");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", "--node-rank", "2", "--master-port", "29999", rank}),
                    lakerun::ConfigError, "--node-rank 2 is outside 0..1");
  EXPECT_THROW_WITH(RunCommand({"--node_rank", "1", rank}), lakerun::ConfigError, "--node-rank 1 is outside 0..0");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", "--standalone", "--master-port", "29999", rank}),
                    lakerun::ConfigError, "--standalone is one node");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", "--rdzv-endpoint", "nohost", rank}), lakerun::ConfigError,
                    "--rdzv-endpoint 'nohost' is not HOST:PORT");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", "--rdzv-endpoint", "h:0", rank}), lakerun::ConfigError,
                    "port '0' is not 1..65535");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", "--master-port", "29999", "--rdzv-compat", "on",
                                "--rdzv-secret-file", "/nonexistent", rank}),
                    lakerun::ConfigError, "--rdzv-compat on", "ranks on other nodes cannot reach");
  EXPECT_THROW_WITH(RunCommand({"--rdzv_backend=etcd", rank}), lakerun::ConfigError,
                    "--rdzv-backend etcd: only c10d and static are known");
  EXPECT_THROW_WITH(RunCommand({"--nodes", "2", rank}), lakerun::ConfigError,
                    "unknown flag '--nodes' (did you mean --nnodes?)");
}

// A generated secret cannot reach the other nodes: a job of several nodes without one is refused.
TEST(MultiNodeFlagsTest, SeveralNodesNeedTheJobsSecret) {
  const char* saved = std::getenv("LAKERUN_RDZV_SECRET");
  const char* saved_file = std::getenv("LAKERUN_RDZV_SECRET_FILE");
  ::unsetenv("LAKERUN_RDZV_SECRET");
  ::unsetenv("LAKERUN_RDZV_SECRET_FILE");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", "--master-port", std::to_string(FreePort()), LAUNCH_TEST_RANK}),
                    lakerun::ConfigError, "--nnodes 2 needs the job's secret on every node",
                    "--rdzv-secret-file");
  if (saved != nullptr) ::setenv("LAKERUN_RDZV_SECRET", saved, 1);
  if (saved_file != nullptr) ::setenv("LAKERUN_RDZV_SECRET_FILE", saved_file, 1);
}

}  // namespace
