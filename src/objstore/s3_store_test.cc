// S3Store against s3rver, a real S3 emulator on loopback (npm; skipped, saying why, when it is not installed).
#include "objstore/s3_store.h"

#include <gtest/gtest.h>

#include <chrono>

#include "lakerun/base/error.h"
#include "lakerun_testing/emulators.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"
#include "objstore/object_file_system.h"

namespace lakerun::objstore {
namespace {

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    emulator_ = testing::StartS3Emulator(temp_.Join("s3"), {"lake"}, &why_not);
    if (!emulator_) GTEST_SKIP() << why_not;
  }

  S3StoreConfig Config(std::string bucket = "lake") const {
    S3StoreConfig config;
    config.bucket = bucket;
    config.root_uri = "s3://" + bucket;
    config.endpoint_url = emulator_->endpoint();
    config.path_style = true;
    config.credentials = AwsCredentials{emulator_->access_key_id(), emulator_->secret_access_key(), ""};
    config.credentials_source = "the test";
    config.retry.backoff_base = std::chrono::milliseconds(50);
    config.retry.jitter = std::chrono::milliseconds(10);
    config.retry.max_retry_time = std::chrono::seconds(5);
    config.retry.request_timeout = std::chrono::seconds(5);
    return config;
  }

  testing::TempDir temp_;
  std::optional<testing::S3Emulator> emulator_;
};

TEST_F(S3StoreTest, ObjectsGoInAndComeOutByteForByte) {
  S3Store store(Config());
  std::string bytes(300000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 % 256);
  ASSERT_TRUE(store.Put("t/part 0+é.parquet", bytes, /*if_absent=*/false));
  const std::optional<ObjectInfo> info = store.Head("t/part 0+é.parquet");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->size, bytes.size());
  EXPECT_GT(info->mtime_ms, 1600000000000);
  std::string middle(1000, '\0');
  store.GetRange("t/part 0+é.parquet", 123456, middle.size(), middle.data());
  EXPECT_EQ(middle, bytes.substr(123456, 1000));
  EXPECT_FALSE(store.Head("t/missing").has_value());
  // The size and the last bytes together (s3rver reads "bytes=-n" as "bytes=0-n": detected, then explicit ranges).
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string tail;
    const std::optional<ObjectInfo> with_tail = store.HeadWithTail("t/part 0+é.parquet", 1000, &tail);
    ASSERT_TRUE(with_tail.has_value());
    EXPECT_EQ(with_tail->size, bytes.size());
    EXPECT_EQ(tail, bytes.substr(bytes.size() - 1000)) << attempt;
  }
  std::string none;
  EXPECT_FALSE(store.HeadWithTail("t/missing", 1000, &none).has_value());
  // s3rver reads x-amz-copy-source with decodeURI, which leaves "%2B" encoded: copy a key without reserved characters.
  store.Put("t/plain é", bytes, false);
  store.Copy("t/plain é", "t/copy");
  EXPECT_EQ(store.Head("t/copy")->size, bytes.size());
  store.Delete("t/copy");
  store.Delete("t/copy");  // missing is fine
  EXPECT_FALSE(store.Head("t/copy").has_value());
}

TEST_F(S3StoreTest, ListingsPageThroughContinuationTokens) {
  S3StoreConfig config = Config();
  config.max_keys = 2;
  S3Store store(config);
  for (const char* key : {"t/a", "t/b", "t/c", "t/d/x", "t/d/y", "t/e/z", "u/q"}) store.Put(key, key, false);
  const ObjectListing flat = store.List("t/", /*delimited=*/false);
  ASSERT_EQ(flat.objects.size(), 6u);
  EXPECT_EQ(flat.objects.front().key, "t/a");
  EXPECT_EQ(flat.objects.back().key, "t/e/z");
  const ObjectListing level = store.List("t/", /*delimited=*/true);
  ASSERT_EQ(level.objects.size(), 3u);
  EXPECT_EQ(level.subprefixes, (std::vector<std::string>{"t/d/", "t/e/"}));
}

TEST_F(S3StoreTest, TheEmulatorIgnoresConditionalWritesAndCommitsAreRefused) {
  S3Store store(Config());
  EXPECT_EQ(store.ProbeConditionalPut(), ConditionalPut::kIgnored);
  EXPECT_TRUE(store.List("_lakerun_probe/", false).objects.empty());  // the probe cleans up
  ObjectFileSystem fs([&](const ObjectUri&) -> ObjectStore& { return store; });
  EXPECT_THROW_WITH(fs.CreateExclusive("s3://lake/t/_delta_log/00000000000000000000.json", "{}"), NotImplemented,
                    "s3://lake ignores conditional writes");
}

// s3rver checks the access key id but not a SigV4 signature (its V4 verification is unimplemented), so the wrong
// credential here is the key id; a wrong secret is refused by AWS and by Azurite (azure_store_test.cc).
TEST_F(S3StoreTest, AWrongKeyIsAClearErrorWithoutTheSecret) {
  S3StoreConfig config = Config();
  config.credentials->access_key_id = "NOT-A-KEY";
  config.credentials->secret_access_key = "secret-XYZZY";
  S3Store store(config);
  try {
    store.Put("t/a", "x", false);
    FAIL() << "an unknown access key was accepted";
  } catch (const IoError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("PUT s3://lake/t/a: HTTP 403 InvalidAccessKeyId"), std::string::npos) << message;
    EXPECT_NE(message.find("check the credentials from the test"), std::string::npos) << message;
    EXPECT_EQ(message.find("XYZZY"), std::string::npos) << message;
  }
}

TEST_F(S3StoreTest, AMissingBucketAndAMissingObjectAreNamed) {
  S3Store nowhere(Config("no-such-bucket"));
  EXPECT_THROW_WITH(nowhere.List("", false), IoError, "bucket 'no-such-bucket' does not exist");
  S3Store store(Config());
  char byte;
  EXPECT_THROW_WITH(store.GetRange("t/missing", 0, 1, &byte), IoError, "GET s3://lake/t/missing bytes 0-0: HTTP 404");
}

TEST_F(S3StoreTest, AStoreKilledMidReadGivesABoundedErrorNamingTheObject) {
  S3Store store(Config());
  store.Put("t/a", std::string(1000, 'a'), false);
  char bytes[10];
  store.GetRange("t/a", 0, 10, bytes);  // a live, kept-alive connection
  emulator_->Kill();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(store.GetRange("t/a", 10, 10, bytes), IoError, "GET s3://lake/t/a bytes 10-19 failed after");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));  // the 5 s budget, not a hang
}

}  // namespace
}  // namespace lakerun::objstore
