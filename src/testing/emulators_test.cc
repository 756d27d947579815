// The emulator launchers: they listen, keep their data in dir/data, and Stop()/Kill() end them (and free the port).
#include "lakerun_testing/emulators.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "lakerun/base/file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::testing {
namespace {

bool Answers(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

TEST(EmulatorsTest, S3rverListensWithItsBucketsAndStops) {
  TempDir temp;
  std::string why_not;
  auto s3 = StartS3Emulator(temp.Join("s3"), {"alpha", "beta"}, &why_not);
  if (!s3) GTEST_SKIP() << why_not;
  EXPECT_EQ(s3->endpoint(), "http://127.0.0.1:" + std::to_string(s3->port()));
  EXPECT_EQ(s3->access_key_id(), "S3RVER");
  EXPECT_TRUE(Answers(s3->port()));
  EXPECT_TRUE(LocalFileSystem().Exists(temp.Join("s3/data/alpha")));
  EXPECT_TRUE(LocalFileSystem().Exists(temp.Join("s3/data/beta")));
  const pid_t pid = s3->pid();
  s3->Stop();
  EXPECT_FALSE(s3->Running());
  EXPECT_TRUE(WaitGone({pid}, std::chrono::seconds(5)).empty());
  EXPECT_FALSE(Answers(s3->port()));
  s3->Stop();  // idempotent
}

TEST(EmulatorsTest, S3rverRestartsOnTheSameDirectory) {
  TempDir temp;
  std::string why_not;
  auto first = StartS3Emulator(temp.Join("s3"), {"alpha"}, &why_not);
  if (!first) GTEST_SKIP() << why_not;
  first->Stop();
  auto second = StartS3Emulator(temp.Join("s3"), {"alpha"}, &why_not);
  ASSERT_TRUE(second.has_value()) << why_not;
  EXPECT_TRUE(second->Running());
}

TEST(EmulatorsTest, AzuriteListensAndDiesOnKill) {
  TempDir temp;
  std::string why_not;
  auto az = StartAzureEmulator(temp.Join("az"), &why_not);
  if (!az) GTEST_SKIP() << why_not;
  EXPECT_EQ(az->endpoint(), "http://127.0.0.1:" + std::to_string(az->port()) + "/devstoreaccount1");
  EXPECT_EQ(az->account(), "devstoreaccount1");
  EXPECT_TRUE(Answers(az->port()));
  const pid_t pid = az->pid();
  az->Kill();
  EXPECT_FALSE(az->Running());
  EXPECT_TRUE(WaitGone({pid}, std::chrono::seconds(5)).empty());
  EXPECT_FALSE(Answers(az->port()));
}

TEST(EmulatorsTest, MissingPackageIsAReasonNotAnError) {
  TempDir temp;
  const char* was = std::getenv("LAKERUN_SOURCE_DIR");
  const std::string saved = was != nullptr ? was : "";
  ::setenv("LAKERUN_SOURCE_DIR", temp.path().c_str(), 1);  // a tree without tests/interop/node_modules
  std::string why_not;
  const auto s3 = StartS3Emulator(temp.Join("s3"), {}, &why_not);
  const auto az = StartAzureEmulator(temp.Join("az"), &why_not);
  if (was != nullptr) {
    ::setenv("LAKERUN_SOURCE_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("LAKERUN_SOURCE_DIR");
  }
  EXPECT_FALSE(s3.has_value());
  EXPECT_FALSE(az.has_value());
  EXPECT_NE(why_not.find("scripts/setup.sh"), std::string::npos) << why_not;
}

}  // namespace
}  // namespace lakerun::testing
