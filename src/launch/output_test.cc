#include "launch/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::launch::internal {
namespace {

std::string ReadFile(const std::string& path) {
  std::string data;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<missing>";
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return data;
}

class OutputRouterTest : public ::testing::Test {
 protected:
  OutputRouter::Options Options(int ranks) {
    OutputRouter::Options options;
    options.ranks = ranks;
    out_path_ = dir_.Join("out");
    err_path_ = dir_.Join("err");
    out_fd_ = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    err_fd_ = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    options.stdout_fd = out_fd_;
    options.stderr_fd = err_fd_;
    return options;
  }
  void TearDown() override {
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  lakerun::testing::TempDir dir_;
  std::string out_path_, err_path_;
  int out_fd_ = -1, err_fd_ = -1;
};

TEST_F(OutputRouterTest, PrefixesWholeLinesAndKeepsStreamsApart) {
  OutputRouter router(Options(2));
  router.Feed(1, Stream::kStdout, "hel");
  router.Feed(0, Stream::kStdout, "a\nb\n");
  router.Feed(1, Stream::kStdout, "lo\nwor");
  router.Feed(1, Stream::kStderr, "oops\n");
  router.Finish(1, Stream::kStdout);
  EXPECT_EQ(ReadFile(out_path_), "[rank0] a\n[rank0] b\n[rank1] hello\n[rank1] wor\n");
  EXPECT_EQ(ReadFile(err_path_), "[rank1] oops\n");
}

TEST_F(OutputRouterTest, FilterHidesRanksButKeepsTheirTailsAndLogs) {
  auto options = Options(3);
  options.show_ranks = {0, 2};
  options.log_dir = dir_.Join("logs/nested");
  OutputRouter router(options);
  router.Feed(1, Stream::kStderr, "hidden\n");
  router.Feed(1, Stream::kStdout, "raw");
  router.Feed(2, Stream::kStderr, "shown\n");
  EXPECT_EQ(ReadFile(err_path_), "[rank2] shown\n");
  EXPECT_EQ(router.StderrTail(1), std::vector<std::string>{"hidden"});
  EXPECT_EQ(ReadFile(dir_.Join("logs/nested/rank1.stderr")), "hidden\n");
  EXPECT_EQ(ReadFile(dir_.Join("logs/nested/rank1.stdout")), "raw");
  EXPECT_EQ(ReadFile(dir_.Join("logs/nested/rank0.stdout")), "");
}

TEST_F(OutputRouterTest, TailKeepsTheLastLinesAndThePartialOne) {
  OutputRouter router(Options(1));
  for (int i = 0; i < 30; ++i) router.Feed(0, Stream::kStderr, "line " + std::to_string(i) + "\n");
  router.Feed(0, Stream::kStderr, "partial");
  auto tail = router.StderrTail(0);
  ASSERT_EQ(tail.size(), OutputRouter::kTailLines);
  EXPECT_EQ(tail.front(), "line 11");
  EXPECT_EQ(tail.back(), "partial");
  router.ResetTails();
  router.Finish(0, Stream::kStderr);
  EXPECT_EQ(router.StderrTail(0), std::vector<std::string>{"partial"});
}

TEST_F(OutputRouterTest, SplitsOverlongLines) {
  OutputRouter router(Options(1));
  router.Feed(0, Stream::kStdout, std::string(OutputRouter::kMaxLineBytes + 5, 'x'));
  router.Finish(0, Stream::kStdout);
  const std::string out = ReadFile(out_path_);
  EXPECT_EQ(out, "[rank0] " + std::string(OutputRouter::kMaxLineBytes, 'x') + "\n[rank0] xxxxx\n");
}

TEST_F(OutputRouterTest, LineRewrittenWithCarriageReturnsShowsItsFinalText) {
  OutputRouter router(Options(1));
  router.Feed(0, Stream::kStderr, "\rstep 1/3");
  router.Feed(0, Stream::kStderr, "\rstep 2/3");
  EXPECT_EQ(ReadFile(err_path_), "");  // not live: nothing until the line ends
  router.Feed(0, Stream::kStderr, "\rstep 3/3\nwindows line\r\n");
  EXPECT_EQ(ReadFile(err_path_), "[rank0] step 3/3\n[rank0] windows line\n");
}

TEST_F(OutputRouterTest, LiveLineIsRewrittenInPlaceAndEndedByOtherOutput) {
  auto options = Options(2);
  options.live = true;
  options.log_dir = dir_.Join("logs");
  OutputRouter router(options);
  router.Feed(0, Stream::kStderr, "\rEpoch 0: 10/20 loss=0.50");
  EXPECT_EQ(ReadFile(err_path_), "\r[rank0] Epoch 0: 10/20 loss=0.50");
  router.Feed(0, Stream::kStderr, "\rEpoch 0: 20/20");
  // The shorter text is padded to erase the longer one before it.
  EXPECT_EQ(ReadFile(err_path_), "\r[rank0] Epoch 0: 10/20 loss=0.50\r[rank0] Epoch 0: 20/20          ");
  router.Feed(1, Stream::kStderr, "warning\n");  // another rank: the live line ends first
  router.Feed(0, Stream::kStderr, "\rEpoch 1: 1/20");
  router.Feed(0, Stream::kStderr, "\rEpoch 1: 20/20 loss=0.25\n");
  EXPECT_EQ(ReadFile(err_path_),
            "\r[rank0] Epoch 0: 10/20 loss=0.50\r[rank0] Epoch 0: 20/20          \n[rank1] warning\n"
            "\r[rank0] Epoch 1: 1/20\r[rank0] Epoch 1: 20/20 loss=0.25\n");
  EXPECT_EQ(router.StderrTail(0), std::vector<std::string>{"Epoch 1: 20/20 loss=0.25"});
  // The log keeps the raw bytes.
  EXPECT_EQ(ReadFile(dir_.Join("logs/rank0.stderr")),
            "\rEpoch 0: 10/20 loss=0.50\rEpoch 0: 20/20\rEpoch 1: 1/20\rEpoch 1: 20/20 loss=0.25\n");
}

TEST_F(OutputRouterTest, LogDirThatIsAFileIsAnError) {
  auto options = Options(1);
  options.log_dir = out_path_;
  EXPECT_THROW_WITH(OutputRouter router(options), IoError, out_path_);
}

}  // namespace
}  // namespace lakerun::launch::internal
