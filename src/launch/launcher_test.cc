// End-to-end tests of the launcher with real rank processes (testdata/test_rank.cc). Launch() runs in this process
// where a separate launcher adds nothing but a process start; the stand-alone
// `lakerun launch` program (launch_test_launcher) runs where it matters: flags, signals sent to the launcher,
// concurrent launchers. Every wait is bounded; the fixture kills every process a test started, also on failure.
#include "launch/launcher_test_fixture.h"

#include <termios.h>

#include <atomic>
#include <stdexcept>

#include "lakerun/base/error.h"
#include "lakerun/launch/command.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/temp_dir.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace lakerun::launch::testing;
TEST_F(LauncherTest, EnvironmentIsTorchrunsOnOneTwoAndFourRanks) {
  for (int n : {1, 2, 4}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Finished f = RunInProcess(Options(n, {"--print-env"}));
    ASSERT_EQ(f.exit_code, 0) << f.err;
    auto env = ParseEnv(f.out);
    ASSERT_EQ(env.size(), static_cast<size_t>(n)) << f.out;
    const std::string port = env[0]["MASTER_PORT"];
    const std::string run_id = env[0]["TORCHELASTIC_RUN_ID"];
    EXPECT_GT(std::stoi(port), 0);
    EXPECT_EQ(run_id.size(), 16u);
    for (int r = 0; r < n; ++r) {
      auto& e = env[r];
      EXPECT_EQ(e["RANK"], std::to_string(r));
      EXPECT_EQ(e["LOCAL_RANK"], std::to_string(r));
      EXPECT_EQ(e["WORLD_SIZE"], std::to_string(n));
      EXPECT_EQ(e["LOCAL_WORLD_SIZE"], std::to_string(n));
      EXPECT_EQ(e["GROUP_RANK"], "0");
      EXPECT_EQ(e["GROUP_WORLD_SIZE"], "1");
      EXPECT_EQ(e["ROLE_RANK"], std::to_string(r));
      EXPECT_EQ(e["ROLE_WORLD_SIZE"], std::to_string(n));
      EXPECT_EQ(e["MASTER_ADDR"], "127.0.0.1");
      EXPECT_EQ(e["MASTER_PORT"], port);
      EXPECT_EQ(e["TORCHELASTIC_USE_AGENT_STORE"], "True");
      EXPECT_EQ(e["TORCHELASTIC_RESTART_COUNT"], "0");
      EXPECT_EQ(e["TORCHELASTIC_MAX_RESTARTS"], "0");
      EXPECT_EQ(e["TORCHELASTIC_RUN_ID"], run_id);
      EXPECT_EQ(e["LAKERUN_RUN_ID"], run_id);
      EXPECT_EQ(e["LAKERUN_RESTART_COUNT"], "0");
      EXPECT_EQ(e["LAKERUN_LAUNCHER"], "1");
      EXPECT_GE(std::stoi(e["OMP_NUM_THREADS"]), 1);
      EXPECT_EQ(e["PGID_IS_PID"], "1");  // each rank leads its own process group
    }
  }
}

TEST_F(LauncherTest, UseGpuGivesEachRankOneGpuAndCapsToTheVisibleOnes) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "5,GPU-7e1d", 1);
  auto options = Options(4, {"--print-env"});
  options.use_gpu = true;
  Finished f = RunInProcess(options);
  if (old != nullptr) ::setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.err, HasSubstr("warning: -n 4 is more than the 2 GPUs visible (from CUDA_VISIBLE_DEVICES); "
                               "starting 2 ranks, one per GPU"));
  auto env = ParseEnv(f.out);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0]["CUDA_VISIBLE_DEVICES"], "5");
  EXPECT_EQ(env[1]["CUDA_VISIBLE_DEVICES"], "GPU-7e1d");
  EXPECT_EQ(env[1]["WORLD_SIZE"], "2");
  EXPECT_EQ(env[1]["LOCAL_RANK"], "1");
}

TEST_F(LauncherTest, UseGpuWithoutGpusIsAClearError) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  auto options = Options(2, {});
  options.use_gpu = true;
  EXPECT_THROW_WITH(lakerun::launch::Launch(options), lakerun::ConfigError, "--use-gpu", "no GPU is visible",
                    "CUDA_VISIBLE_DEVICES = ''");
  if (old != nullptr) ::setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else ::unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST_F(LauncherTest, PrefixesLinesKeepsStreamsApartAndFlushesPartialLines) {
  Finished f = RunInProcess(Options(2, {"--stdout", "hello", "--stderr", "warn", "--partial", "tail"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  for (const char* r : {"[rank0] ", "[rank1] "}) {
    EXPECT_THAT(f.out, HasSubstr(std::string(r) + "hello\n"));
    EXPECT_THAT(f.out, HasSubstr(std::string(r) + "tail\n"));
    EXPECT_THAT(f.err, HasSubstr(std::string(r) + "warn\n"));
  }
  EXPECT_THAT(f.out, Not(HasSubstr("warn")));
  EXPECT_THAT(f.err, Not(HasSubstr("hello")));
}

TEST_F(LauncherTest, RanksFilterShowsSomeRanksAndLogDirKeepsAll) {
  const std::string logs = dir_.Join("logs");
  Finished f = RunLauncher({"-n", "3", "--ranks", "1", "--log-dir", logs, "--", rank_, "--print-env", "--stderr",
                            "to stderr"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.out, HasSubstr("[rank1] RANK=1\n"));
  EXPECT_THAT(f.out, Not(HasSubstr("[rank0]")));
  EXPECT_THAT(f.out, Not(HasSubstr("[rank2]")));
  EXPECT_THAT(f.err, Not(HasSubstr("[rank0]")));
  for (int r = 0; r < 3; ++r) {
    const std::string out = ReadFile(logs + "/rank" + std::to_string(r) + ".stdout");
    EXPECT_THAT(out, HasSubstr("RANK=" + std::to_string(r) + "\n"));
    EXPECT_THAT(out, Not(HasSubstr("[rank")));  // raw bytes, no prefix
    EXPECT_EQ(ReadFile(logs + "/rank" + std::to_string(r) + ".stderr"), "to stderr\n");
  }
}

struct FailureCase {
  const char* how;
  int exit_code;
  const char* cause;
};

void PrintTo(const FailureCase& c, std::ostream* os) { *os << c.how; }

class LauncherFailureTest : public LauncherTest, public ::testing::WithParamInterface<FailureCase> {};

TEST_P(LauncherFailureTest, FirstFailureIsNamedAndNoProcessIsLeft) {
  const FailureCase& c = GetParam();
  auto options = Options(3, {"--pidfile", pid_dir(), "--grandchild", "--stderr", "setting up", "--fail-rank", "1",
                             "--fail-how", c.how, "--fail-after", "0.5", "--sleep", "60"});
  options.grace_period = std::chrono::seconds(1);
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, c.exit_code) << f.err;
  EXPECT_THAT(f.err, HasSubstr(std::string("error: rank 1 ") + c.cause));
  EXPECT_THAT(f.err, HasSubstr("last lines of rank 1's stderr"));
  EXPECT_THAT(f.err, HasSubstr("rank 1 is about to fail: " + std::string(c.how)));
  EXPECT_THAT(f.err, HasSubstr("exit code " + std::to_string(c.exit_code)));
  EXPECT_GE(RankPids().size(), 2u);  // at least the failing rank and its grandchild wrote their pids
  EXPECT_THAT(Survivors(), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(
    Causes, LauncherFailureTest,
    ::testing::Values(FailureCase{"exit:3", 3, "exited with code 3"},
                      FailureCase{"abort", 128 + SIGABRT, "was killed by signal 6 (SIGABRT)"},
                      FailureCase{"kill9", 128 + SIGKILL, "was killed by signal 9 (SIGKILL), likely out of memory"}),
    [](const ::testing::TestParamInfo<FailureCase>& info) {
      return std::string(info.param.how).substr(0, std::string(info.param.how).find(':'));
    });

TEST_F(LauncherTest, RanksIgnoringSigtermAreKilledAfterTheGracePeriod) {
  auto options = Options(3, {"--pidfile", pid_dir(), "--ignore-term", "--fail-rank", "0", "--fail-how", "exit:9",
                             "--fail-after", "0.5", "--sleep", "60"});
  options.grace_period = std::chrono::milliseconds(500);
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 9) << f.err;
  EXPECT_THAT(f.err, HasSubstr("rank 0 exited with code 9; stopping the other 2 ranks"));
  EXPECT_THAT(Survivors(), ::testing::IsEmpty());
}

TEST_F(LauncherTest, SigtermToTheLauncherIsForwardedAndLeavesNoProcess) {
  SignalTheLauncherOfThreeRanks(SIGTERM, {}, {});
}

TEST_F(LauncherTest, SigkillToTheLauncherLeavesNoProcess) { SignalTheLauncherOfThreeRanks(SIGKILL, {}, {}); }

// An interpreter's SIGINT handler (Python's) is set aside while Launch runs with take_signal_handlers: SIGINT stops
// the ranks and is reported; the handler is back afterwards and did not run.
std::atomic<int> g_own_handler_calls{0};
void OwnHandler(int) { g_own_handler_calls.fetch_add(1); }

TEST_F(LauncherTest, TakeSignalHandlersForwardsSigintDespiteAHandlerAndPutsItBack) {
  struct sigaction own {}, previous {}, after {};
  own.sa_handler = OwnHandler;
  sigemptyset(&own.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &own, &previous), 0);
  auto options = Options(2, {"--pidfile", pid_dir(), "--sleep", "60"});
  options.take_signal_handlers = true;
  options.grace_period = std::chrono::milliseconds(500);
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(::getpid(), SIGINT);
  });
  const auto start = Clock::now();
  Finished f = RunInProcess(options);
  interrupter.join();
  ::sigaction(SIGINT, nullptr, &after);
  ::sigaction(SIGINT, &previous, nullptr);
  EXPECT_EQ(f.exit_code, 128 + SIGINT) << f.err;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
  EXPECT_THAT(f.err, HasSubstr("received SIGINT"));
  EXPECT_EQ(after.sa_handler, &OwnHandler);
  EXPECT_EQ(g_own_handler_calls.load(), 0);
  EXPECT_THAT(Survivors(), ::testing::IsEmpty());
}

TEST_F(LauncherTest, TwoConcurrentLaunchesBothSucceed) {
  const pid_t a = Start({"-n", "2", "--", rank_, "--print-env", "--sleep", "0.5"}, "a");
  const pid_t b = Start({"-n", "2", "--", rank_, "--print-env", "--sleep", "0.5"}, "b");
  Finished fa = Wait(a), fb = Wait(b);
  ASSERT_EQ(fa.exit_code, 0) << fa.err;
  ASSERT_EQ(fb.exit_code, 0) << fb.err;
  auto ea = ParseEnv(fa.out), eb = ParseEnv(fb.out);
  ASSERT_EQ(ea.size(), 2u);
  ASSERT_EQ(eb.size(), 2u);
  EXPECT_NE(ea[0]["MASTER_PORT"], eb[0]["MASTER_PORT"]);
  EXPECT_NE(ea[0]["LAKERUN_RUN_ID"], eb[0]["LAKERUN_RUN_ID"]);
}

TEST_F(LauncherTest, MaxRestartsRestartsAllRanksAfterAFailure) {
  auto options = Options(2, {"--print-env", "--pidfile", pid_dir(), "--fail-rank", "1", "--fail-attempt", "0",
                             "--fail-how", "exit:5", "--sleep", "0.3"});
  options.max_restarts = 2;
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_THAT(f.err, HasSubstr("restarting all 2 ranks (restart 1 of 2) after: rank 1 exited with code 5"));
  EXPECT_THAT(f.err, Not(HasSubstr("restart 2 of 2")));
  EXPECT_THAT(f.out, HasSubstr("[rank0] TORCHELASTIC_RESTART_COUNT=1\n"));
  EXPECT_THAT(f.out, HasSubstr("[rank1] LAKERUN_RESTART_COUNT=1\n"));
  EXPECT_THAT(f.out, HasSubstr("[rank1] TORCHELASTIC_MAX_RESTARTS=2\n"));
  EXPECT_TRUE(Exists(PidFile(0, 1)));
  EXPECT_FALSE(Exists(PidFile(0, 2)));
}

// after_attempt hears how every rank of each attempt ended, before the restart and before Launch returns; the lines
// it returns are the launcher's notes, and an exception it throws only a warning.
TEST_F(LauncherTest, AfterAttemptHearsHowEachRankEndedBeforeTheRestart) {
  auto options = Options(2, {"--fail-rank", "0", "--fail-attempt", "0", "--fail-how", "kill9", "--sleep", "0.3"});
  options.max_restarts = 1;
  std::vector<lakerun::launch::AttemptReport> reports;
  options.after_attempt = [&](const lakerun::launch::AttemptReport& report) {
    reports.push_back(report);
    if (report.attempt == 1) throw std::runtime_error("tracking server unreachable");
    return std::vector<std::string>{"attempt " + std::to_string(report.attempt) + " ended"};
  };
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.err;
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].attempt, 0);
  ASSERT_EQ(reports[0].exits.size(), 2u);
  ASSERT_TRUE(reports[0].exits[0].has_value());
  EXPECT_EQ(reports[0].exits[0]->rank, 0);
  EXPECT_EQ(reports[0].exits[0]->signal, SIGKILL);
  EXPECT_TRUE(reports[0].exits[1].has_value());  // stopped with SIGTERM, or done sleeping
  for (const auto& exit : reports[1].exits) {
    ASSERT_TRUE(exit.has_value());
    EXPECT_EQ(exit->signal, 0);
    EXPECT_EQ(exit->exit_code, 0);
  }
  // The note comes before the restart it precedes.
  const size_t note = f.err.find("[lakerun] attempt 0 ended\n");
  ASSERT_NE(note, std::string::npos) << f.err;
  EXPECT_LT(note, f.err.find("restarting all 2 ranks"));
  EXPECT_THAT(f.err, HasSubstr("[lakerun] warning: after attempt 1: tracking server unreachable\n"));
}

TEST_F(LauncherTest, RestartsRunOutAndTheLastFailureIsReported) {
  auto options = Options(2, {"--fail-rank", "0", "--fail-how", "exit:7", "--sleep", "30"});
  options.max_restarts = 1;
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 7) << f.err;
  EXPECT_THAT(f.err, HasSubstr("restart 1 of 1"));
  EXPECT_THAT(f.err, HasSubstr("error: rank 0 exited with code 7 (first failure of 2 ranks, after 1 restart)"));
}

// The ranks start from several threads at once: an exec failure on every rank is one clear error, and the ranks
// that did start (none here) are not left behind.
TEST_F(LauncherTest, ExecFailureOfEveryRankIsOneClearError) {
  const std::string not_a_program = dir_.Join("not_a_program");
  {
    std::ofstream out(not_a_program);
    out << "\x7f" << "garbage, not ELF and no #! line\n";
  }
  ASSERT_EQ(::chmod(not_a_program.c_str(), 0755), 0);
  auto options = Options(4, {});
  options.command = {not_a_program};
  EXPECT_THROW_WITH(RunInProcess(options), lakerun::IoError, "cannot start '" + not_a_program + "'", "execve");
  // The launcher still works afterwards: a successful four-rank launch.
  EXPECT_EQ(RunInProcess(Options(4, {})).exit_code, 0);
}

TEST_F(LauncherTest, TimeoutStopsTheRanksWithExitCode124) {
  auto options = Options(2, {"--pidfile", pid_dir(), "--sleep", "60"});
  options.timeout = std::chrono::milliseconds(500);
  options.grace_period = std::chrono::milliseconds(500);
  Finished f = RunInProcess(options);
  EXPECT_EQ(f.exit_code, 124) << f.err;
  EXPECT_THAT(f.err, HasSubstr("timed out"));
  EXPECT_THAT(Survivors(), ::testing::IsEmpty());
}

// A pseudo-terminal in raw mode (no newline translation) to stand for the launcher's console; read back through
// its master end.
class Pty {
 public:
  Pty() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(master_, 0);
    EXPECT_EQ(::grantpt(master_), 0);
    EXPECT_EQ(::unlockpt(master_), 0);
    terminal_ = ::open(::ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(terminal_, 0);
    termios mode;
    ::tcgetattr(terminal_, &mode);
    ::cfmakeraw(&mode);
    ::tcsetattr(terminal_, TCSANOW, &mode);
    ::fcntl(master_, F_SETFL, O_NONBLOCK);
  }
  ~Pty() {
    ::close(terminal_);
    ::close(master_);
  }
  int terminal() const { return terminal_; }
  // What was written to the terminal so far.
  std::string Shown() {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(master_, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
    return out;
  }

 private:
  int master_ = -1;
  int terminal_ = -1;
};

// On a terminal, ranks learn it (so the Trainer draws its bar) and rank 0's '\r' updates show at once, in place.
TEST_F(LauncherTest, ProgressBarShowsLiveWhenTheConsoleIsATerminal) {
  Pty pty;
  lakerun::launch::LaunchOptions options = Options(2, {"--print-env", "--bar", "3"});
  const std::string out = dir_.Join("tty.out");
  options.stdout_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  options.stderr_fd = pty.terminal();
  const int exit_code = lakerun::launch::Launch(options).exit_code;
  ::close(options.stdout_fd);
  const std::string shown = pty.Shown();
  ASSERT_EQ(exit_code, 0) << shown;
  auto env = ParseEnv(ReadFile(out));
  EXPECT_EQ(env[0]["LAKERUN_CONSOLE_IS_TERMINAL"], "1");
  EXPECT_EQ(env[1]["LAKERUN_CONSOLE_IS_TERMINAL"], "1");
  // Updates that arrive in one read show as one; at least one shows before the line ends.
  const size_t live = shown.find("\r[rank0] step ");
  ASSERT_NE(live, std::string::npos) << shown;
  EXPECT_LT(live, shown.find("[rank0] step 3/3\n")) << shown;
}

// Piped, ranks are told the console is not a terminal, and a line rewritten with '\r' shows only its final text.
TEST_F(LauncherTest, PipedConsoleGetsPlainLines) {
  Finished f = RunInProcess(Options(2, {"--print-env", "--bar", "3"}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto env = ParseEnv(f.out);
  EXPECT_EQ(env[0]["LAKERUN_CONSOLE_IS_TERMINAL"], "0");
  EXPECT_THAT(f.err, HasSubstr("[rank0] step 3/3\n"));
  EXPECT_THAT(f.err, Not(HasSubstr("step 1/3")));
  EXPECT_THAT(f.err, Not(HasSubstr("\r")));
}

// Option errors are checked in this process (RunLaunchCommand is what `lakerun launch` runs): no rank starts.
int RunCommand(std::vector<std::string> args) {
  args.insert(args.begin(), "lakerun launch");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return lakerun::launch::RunLaunchCommand(static_cast<int>(args.size()), argv.data());
}

TEST(LaunchCommandTest, BadInvocationsAreClearErrors) {
  const std::string rank = LAUNCH_TEST_RANK;
  EXPECT_THROW_WITH(RunCommand({"-n", "2"}), lakerun::ConfigError, "no program given");
  EXPECT_THROW_WITH(RunCommand({"-n", "0", "--", rank}), lakerun::ConfigError,
                    "-n/--processes must be at least 1, got 0");
  EXPECT_THROW_WITH(RunCommand({"-n", "1", "--", "no-such-program-xyz"}), lakerun::ConfigError,
                    "program 'no-such-program-xyz' not found in PATH");
  EXPECT_THROW_WITH(RunCommand({"-n", "2", "--ranks", "0,5", "--", rank}), lakerun::ConfigError,
                    "--ranks: rank 5 is outside 0..1");
  EXPECT_THROW_WITH(RunCommand({"-n", "2", "--ranks", "0,x", "--", rank}), lakerun::ConfigError,
                    "--ranks: 'x' is not a rank number");
  EXPECT_THROW_WITH(RunCommand({"--grace-period", "-1", "--", rank}), lakerun::ConfigError, "--grace-period");
  EXPECT_THROW_WITH(RunCommand({"-n", "1", "--log-dir", "/proc/version", "--", rank}), lakerun::IoError,
                    "--log-dir", "/proc/version");
  EXPECT_THROW_WITH(RunCommand({"--no-such-flag", "--", rank}), lakerun::ConfigError,
                    "unknown flag '--no-such-flag'");
  EXPECT_EQ(RunCommand({"-n", "two", "--", rank}), 2);  // a value CLI11 cannot read: its usage message
}

// torchrun's spellings: --nproc_per_node=2 and --nproc-per-node 2 both start two ranks, and so do the other flags
// of several words with underscores; a misspelt flag is an error naming the nearest one, never taken for PROGRAM.
TEST(LaunchCommandTest, AcceptsTorchrunSpellings) {
  const std::string rank = LAUNCH_TEST_RANK;
  lakerun::testing::TempDir dir;
  EXPECT_EQ(RunCommand({"--nproc_per_node=2", "--standalone", "--nnodes=1", rank}), 0);
  EXPECT_EQ(RunCommand({"--nproc-per-node", "2", "--log_dir", dir.Join("logs"), "--max_restarts=0",
                        "--grace_period", "1", "--start_method=exec", "--master_addr", "127.0.0.1", "--", rank}),
            0);
  EXPECT_TRUE(Exists(dir.Join("logs/rank1.stdout")));
  EXPECT_THROW_WITH(RunCommand({"--nproc_pr_node=2", rank}), lakerun::ConfigError,
                    "unknown flag '--nproc_pr_node' (did you mean --nproc_per_node?)");
  EXPECT_THROW_WITH(RunCommand({"--nnodes", "2", rank}), lakerun::ConfigError, "--nnodes 2",
                    "every node needs the store's port, --master-port");
}

// Why `python`'s torch cannot join a job whose store an agent hosts, or "" when it can. PyTorch 2.4+ asks a TCPStore
// for libuv unless told otherwise, and env:// under an agent store (torchrun's, or lakerun's) never tells it
// otherwise: a torch built without libuv (Debian's python3-torch 2.6) then fails in init_process_group under any
// elastic launcher, torchrun included.
std::string PythonTorchCannotJoinAgentStore(const std::string& python) {
  lakerun::testing::TempDir dir;
  const lakerun::testing::ProgramRun probe = lakerun::testing::RunProgram(
      {python, "-c", "import torch.distributed as d; d.TCPStore('127.0.0.1', 0, 1, True)"}, dir.Join("probe.log"),
      std::chrono::seconds(120));
  if (probe.output.find("without libuv support") == std::string::npos) return "";
  return "this python3-torch was built without libuv but asks for it by default, so its env:// rendezvous fails "
         "under any agent store (torchrun's too)";
}

TEST_F(LauncherTest, UnmodifiedPythonDdpScriptRuns) {
  const char* python = std::getenv("LAKERUN_PYTHON");
  const std::string interpreter = python != nullptr && *python ? python : "/usr/bin/python3";
  if (!Exists(interpreter)) GTEST_SKIP() << interpreter << " is not installed";
  if (const std::string why = PythonTorchCannotJoinAgentStore(interpreter); !why.empty()) GTEST_SKIP() << why;
  lakerun::launch::LaunchOptions options;
  options.processes = 2;
  options.command = {interpreter, std::string(LAUNCH_TESTDATA) + "/ddp_check.py"};
  options.timeout = std::chrono::seconds(100);
  Finished f = RunInProcess(options);
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  EXPECT_THAT(f.out, HasSubstr("[rank0] ddp ok rank=0 world=2 allreduce_sum=3 weights_equal=True\n"));
  EXPECT_THAT(f.out, HasSubstr("[rank1] ddp ok rank=1 world=2 allreduce_sum=3 weights_equal=True\n"));
}

}  // namespace
