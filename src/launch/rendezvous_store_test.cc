// The launcher's store: the secret and ports its ranks receive, the compatibility listener, and a job whose store a
// stranger attacks.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/launch/command.h"
#include "lakerun/rdzv/store_client.h"
#include "lakerun/rdzv/store_server.h"
#include "launch/launcher_test_fixture.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace lakerun::launch::testing;
using std::chrono::milliseconds;

bool IsHex(const std::string& text) { return text.find_first_not_of("0123456789abcdef") == std::string::npos; }

TEST_F(LauncherTest, RanksGetTheJobsSecretAndTheAuthenticatedPort) {
  Finished f = RunInProcess(Options(2, {"--print-env"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto env = ParseEnv(f.out);
  ASSERT_EQ(env.size(), 2u) << f.out;
  const std::string secret = env[0]["LAKERUN_RDZV_SECRET"];
  EXPECT_EQ(secret.size(), 64u);
  EXPECT_TRUE(IsHex(secret));
  EXPECT_EQ(env[1]["LAKERUN_RDZV_SECRET"], secret);
  // Loopback: MASTER_PORT is the compatibility listener for PyTorch ranks, apart from the authenticated store.
  EXPECT_NE(env[0]["LAKERUN_RDZV_PORT"], env[0]["MASTER_PORT"]);
  EXPECT_EQ(env[1]["LAKERUN_RDZV_PORT"], env[0]["LAKERUN_RDZV_PORT"]);
  EXPECT_THAT(f.err, Not(HasSubstr(secret)));  // the launcher's own output never shows it
  // A new job, a new secret.
  Finished again = RunInProcess(Options(1, {"--print-env"}));
  EXPECT_NE(ParseEnv(again.out)[0]["LAKERUN_RDZV_SECRET"], secret);
}

TEST_F(LauncherTest, CompatOffPointsMasterPortAtTheAuthenticatedStore) {
  auto options = Options(1, {"--print-env"});
  options.rdzv_compat = lakerun::launch::RdzvCompat::kOff;
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto env = ParseEnv(f.out);
  EXPECT_EQ(env[0]["MASTER_PORT"], env[0]["LAKERUN_RDZV_PORT"]);
}

TEST_F(LauncherTest, SecretFileReachesTheRanks) {
  lakerun::testing::TempDir dir;
  const std::string path = dir.Join("secret");
  std::ofstream(path) << "a secret the user chose for this job\n";
  ::chmod(path.c_str(), 0600);
  auto options = Options(1, {"--print-env"});
  options.rdzv_secret_file = path;
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(ParseEnv(f.out)[0]["LAKERUN_RDZV_SECRET"], "a secret the user chose for this job");
}

int RunCommand(std::vector<std::string> args) {
  args.insert(args.begin(), "lakerun launch");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return lakerun::launch::RunLaunchCommand(static_cast<int>(args.size()), argv.data());
}

TEST(LaunchCommandTest, CompatListenerIsLoopbackOnly) {
  const std::string rank = LAUNCH_TEST_RANK;
  EXPECT_THROW_WITH(RunCommand({"--rdzv-compat", "on", "--master-addr", "0.0.0.0", "--", rank}),
                    lakerun::ConfigError, "serves loopback only", "--master-addr is 0.0.0.0");
  EXPECT_THROW_WITH(RunCommand({"--rdzv_compat", "maybe", "--", rank}), lakerun::ConfigError, "--rdzv-compat",
                    "auto, on, off");
  EXPECT_THROW_WITH(RunCommand({"--rdzv-secret-file", "/no/such/secret", "--", rank}), lakerun::ConfigError,
                    "/no/such/secret");
  EXPECT_EQ(RunCommand({"--rdzv-compat", "off", "--", rank}), 0);
}

// The ranks wait for a key in the job's store. A stranger speaking c10d's protocol tries to set it, and a client with
// another secret too; both are refused, and the ranks read only the value set by a client that knows the secret.
TEST_F(LauncherTest, StrangersCannotSetTheKeyTheRanksWaitFor) {
  lakerun::rdzv::StoreServerOptions store_options;
  store_options.secret = "the launcher's secret for this test";
  auto store = lakerun::rdzv::StoreServer::Start(store_options);
  auto options = Options(2, {"--rendezvous", "go"});
  options.store = store.get();
  options.store_secret = store_options.secret;
  std::thread job_side([&] {
    // c10d's legacy SET of "/go" on a raw connection: closed before it is read.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(store->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      std::string request(1, '\0');
      for (const std::string field : {"/go", "forged"}) {
        const uint64_t n = field.size();
        request.append(reinterpret_cast<const char*>(&n), sizeof(n));
        request += field;
      }
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
      char buffer[256];
      while (::recv(fd, buffer, sizeof(buffer), 0) > 0) {
      }
    }
    ::close(fd);
    lakerun::rdzv::StoreClientOptions client;
    client.host = "127.0.0.1";
    client.port = store->port();
    client.secret = "a different secret, just as long";
    try {
      lakerun::rdzv::StoreClient::Connect(client)->Set("go", "forged too");
    } catch (const lakerun::DistError&) {
    }
    client.secret = store_options.secret;
    lakerun::rdzv::StoreClient::Connect(client)->Set("go", "legitimate");
  });
  Finished f = RunInProcess(options);
  job_side.join();
  EXPECT_EQ(f.exit_code, 0) << f.err;
  auto env = ParseEnv(f.out);
  EXPECT_EQ(env[0]["go"], "legitimate");
  EXPECT_EQ(env[1]["go"], "legitimate");
  EXPECT_EQ(store->Stats().refused, 2u);
  EXPECT_THAT(f.out + f.err, Not(HasSubstr(store_options.secret)));
}

}  // namespace
