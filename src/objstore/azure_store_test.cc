// AzureBlobStore against Azurite (tests/interop's npm package, started per suite on a free loopback port). Skips
// with the reason when node or Azurite is not installed (scripts/setup.sh installs them).
#include "objstore/azure_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun_testing/emulators.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"
#include "lakerun/base/crypto.h"

namespace lakerun::objstore {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RetryPolicy FastRetries() {
  RetryPolicy policy;
  policy.max_retries = 2;
  policy.backoff_base = std::chrono::milliseconds(20);
  policy.jitter = std::chrono::milliseconds(0);
  policy.max_retry_time = std::chrono::milliseconds(10000);
  policy.request_timeout = std::chrono::milliseconds(10000);
  policy.connect_timeout = std::chrono::milliseconds(2000);
  return policy;
}

/// The error message `call` throws (an IoError or ConfigError); fails the test when it throws nothing.
std::string ErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

/// An account SAS (Blob service; service, container and object resources; read, write, delete, list, add, create)
/// valid until 2099, signed as the service documents for version 2020-12-06 and later.
std::string MakeAccountSas(const std::string& account, const std::string& key_base64) {
  const std::string version = "2021-08-06", services = "b", types = "sco", permissions = "rwdlac";
  const std::string expiry = "2099-01-01T00:00:00Z";
  const std::string to_sign = account + "\n" + permissions + "\n" + services + "\n" + types + "\n" + "\n" + expiry +
                              "\n" + "\n" + "\n" + version + "\n" + "\n";
  const std::string signature =
      Base64Encode(DigestBytes(HmacSha256(Base64Decode(key_base64, "test key"), to_sign)));
  return "sv=" + version + "&ss=" + services + "&srt=" + types + "&sp=" + permissions +
         "&se=" + UriEncode(expiry, false) + "&sig=" + UriEncode(signature, false);
}

class AzureStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = new testing::TempDir();
    try {
      emulator_ = new std::optional<testing::AzureEmulator>(
          testing::StartAzureEmulator(temp_->Join("azurite"), &why_not_));
    } catch (const Error& e) {
      start_error_ = e.what();
    }
  }
  static void TearDownTestSuite() {
    delete emulator_;
    emulator_ = nullptr;
    delete temp_;
    temp_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(start_error_.empty()) << start_error_;
    if (!emulator_->has_value()) GTEST_SKIP() << why_not_;
    container_ = "test-" + std::to_string(++containers_);  // 3 to 63 characters
    store_ = MakeStore(container_);
    store_->CreateContainer();
  }

  static const testing::AzureEmulator& Emulator() { return **emulator_; }

  static AzureSettings Settings() {
    AzureSettings settings;
    settings.account = Emulator().account();
    settings.account_key_base64 = Emulator().account_key_base64();
    settings.blob_endpoint = Emulator().endpoint();
    return settings;
  }

  static std::unique_ptr<AzureBlobStore> MakeStore(const std::string& container, AzureStoreOptions options = {},
                                                   AzureSettings settings = Settings()) {
    options.retry = FastRetries();
    return std::make_unique<AzureBlobStore>(settings, container, "", options);
  }

  std::string Read(const std::string& key) {
    const std::optional<ObjectInfo> info = store_->Head(key);
    EXPECT_TRUE(info.has_value()) << key;
    if (!info.has_value()) return "";
    std::string out(info->size, '\0');
    store_->GetRange(key, 0, out.size(), out.data());
    return out;
  }

  static std::vector<std::string> Keys(const ObjectListing& listing) {
    std::vector<std::string> keys;
    for (const auto& object : listing.objects) keys.push_back(object.key);
    return keys;
  }

  static testing::TempDir* temp_;
  static std::optional<testing::AzureEmulator>* emulator_;
  static std::string why_not_;
  static std::string start_error_;
  static int containers_;
  std::string container_;
  std::unique_ptr<AzureBlobStore> store_;
};

testing::TempDir* AzureStoreTest::temp_ = nullptr;
std::optional<testing::AzureEmulator>* AzureStoreTest::emulator_ = nullptr;
std::string AzureStoreTest::why_not_;
std::string AzureStoreTest::start_error_;
int AzureStoreTest::containers_ = 0;

TEST_F(AzureStoreTest, PutHeadAndRanges) {
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 3);
  EXPECT_EQ(store_->root_uri(), "az://" + container_);
  ASSERT_TRUE(store_->Put("dir/a.bin", data, /*if_absent=*/false));
  const std::optional<ObjectInfo> info = store_->Head("dir/a.bin");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->key, "dir/a.bin");
  EXPECT_EQ(info->size, 1000u);
  EXPECT_FALSE(info->etag.empty());
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LT(std::abs(info->mtime_ms - now_ms), 600000) << info->mtime_ms;
  EXPECT_FALSE(store_->Head("dir/missing.bin").has_value());
  EXPECT_FALSE(store_->Head("dir").has_value());

  for (const auto& [offset, n] : std::vector<std::pair<uint64_t, size_t>>{{0, 10}, {990, 10}, {500, 1}, {0, 1000}}) {
    std::string got(n, '\0');
    store_->GetRange("dir/a.bin", offset, n, got.data());
    EXPECT_EQ(got, data.substr(offset, n)) << offset << "+" << n;
  }
  std::string buffer(100, '\0');
  EXPECT_THROW_WITH(store_->GetRange("dir/a.bin", 995, 10, buffer.data()), IoError, "az://" + container_ + "/dir/a.bin",
                    "995-1004", "short read of 5 of 10 bytes");
  EXPECT_THROW_WITH(store_->GetRange("dir/a.bin", 2000, 10, buffer.data()), IoError, "/dir/a.bin", "2000-2009",
                    "416");
  store_->GetRange("dir/a.bin", 5, 0, buffer.data());  // nothing to read: no request
}

TEST_F(AzureStoreTest, OverwriteAndUnusualKeys) {
  ASSERT_TRUE(store_->Put("k", "first", false));
  ASSERT_TRUE(store_->Put("k", "second!", false));
  EXPECT_EQ(Read("k"), "second!");
  const std::string odd = "dir with space/ü+%#?&=.json";
  ASSERT_TRUE(store_->Put(odd, "odd", false));
  EXPECT_EQ(Read(odd), "odd");
  EXPECT_EQ(Keys(store_->List("dir with space/", false)), std::vector<std::string>{odd});
  ASSERT_TRUE(store_->Put("empty", "", false));
  EXPECT_EQ(store_->Head("empty")->size, 0u);
}

TEST_F(AzureStoreTest, ListDelimitedAndNot) {
  for (const char* key : {"t/a", "t/b", "t/sub/c", "t/sub/d/e", "t/zz/f", "u/x", "top"}) {
    ASSERT_TRUE(store_->Put(key, std::string(key) + "!", false));
  }
  ObjectListing one_level = store_->List("t/", true);
  EXPECT_EQ(Keys(one_level), (std::vector<std::string>{"t/a", "t/b"}));
  EXPECT_EQ(one_level.subprefixes, (std::vector<std::string>{"t/sub/", "t/zz/"}));
  EXPECT_EQ(one_level.objects[0].size, 4u);
  EXPECT_FALSE(one_level.objects[0].etag.empty());
  EXPECT_GT(one_level.objects[0].mtime_ms, 0);

  const ObjectListing all = store_->List("t/", false);
  EXPECT_EQ(Keys(all), (std::vector<std::string>{"t/a", "t/b", "t/sub/c", "t/sub/d/e", "t/zz/f"}));
  EXPECT_TRUE(all.subprefixes.empty());
  const ObjectListing root = store_->List("", true);
  EXPECT_EQ(Keys(root), std::vector<std::string>{"top"});
  EXPECT_EQ(root.subprefixes, (std::vector<std::string>{"t/", "u/"}));
  EXPECT_EQ(Keys(store_->List("", false)).size(), 7u);
  EXPECT_TRUE(store_->List("nothing/", true).objects.empty());
  EXPECT_EQ(Keys(store_->List("t/s", false)), (std::vector<std::string>{"t/sub/c", "t/sub/d/e"}));
}

TEST_F(AzureStoreTest, ListPagesThroughMarkers) {
  AzureStoreOptions options;
  options.max_results = 3;
  auto paged = MakeStore(container_, options);
  std::vector<std::string> expected;
  for (int i = 0; i < 11; ++i) {
    const std::string key = StrCat("p/", std::string(1, static_cast<char>('a' + i)), ".json");
    ASSERT_TRUE(paged->Put(key, "x", false));
    expected.push_back(key);
  }
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(paged->Put(StrCat("p/dir", i, "/f"), "y", false));
  EXPECT_EQ(Keys(paged->List("p/", true)), expected);
  EXPECT_EQ(paged->List("p/", true).subprefixes.size(), 5u);
  EXPECT_EQ(paged->List("p/", false).objects.size(), 16u);
}

TEST_F(AzureStoreTest, DeleteAndCopy) {
  ASSERT_TRUE(store_->Put("a", "payload", false));
  store_->Copy("a", "b/copy");
  EXPECT_EQ(Read("b/copy"), "payload");
  ASSERT_TRUE(store_->Put("c", "old", false));
  store_->Copy("a", "c");  // overwrites
  EXPECT_EQ(Read("c"), "payload");
  store_->Delete("a");
  EXPECT_FALSE(store_->Head("a").has_value());
  store_->Delete("a");  // missing is fine
  EXPECT_EQ(Keys(store_->List("", false)), (std::vector<std::string>{"b/copy", "c"}));
  EXPECT_THROW_WITH(store_->Copy("nope", "d"), IoError, "az://" + container_ + "/nope", "/d", "404");
}

TEST_F(AzureStoreTest, MissingBlobNamesIt) {
  std::string buffer(8, '\0');
  EXPECT_THROW_WITH(store_->GetRange("no/such.parquet", 0, 8, buffer.data()), IoError,
                    "GET az://" + container_ + "/no/such.parquet bytes 0-7", "404", "BlobNotFound", "no such blob");
}

TEST_F(AzureStoreTest, PutIfAbsentWritesOnce) {
  EXPECT_TRUE(store_->Put("log/00000.json", "winner", /*if_absent=*/true));
  EXPECT_FALSE(store_->Put("log/00000.json", "loser", /*if_absent=*/true));
  EXPECT_EQ(Read("log/00000.json"), "winner");
}

TEST_F(AzureStoreTest, ProbeFindsConditionalPutHonouredAndCleansUp) {
  EXPECT_EQ(store_->ProbeConditionalPut(), ConditionalPut::kHonoured);
  EXPECT_TRUE(store_->List("_lakerun_probe/", false).objects.empty());
  EXPECT_EQ(store_->ProbeConditionalPut(), ConditionalPut::kHonoured);  // cached
}

TEST_F(AzureStoreTest, PutFileWholeAndInBlocks) {
  testing::TempDir local;
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>('A' + i % 26);
  {
    std::ofstream out(local.Join("f.bin"), std::ios::binary);
    out << data;
  }
  store_->PutFile("whole.bin", local.Join("f.bin"));
  EXPECT_EQ(Read("whole.bin"), data);
  AzureStoreOptions options;
  options.block_upload_threshold = 100;
  options.block_size = 64;  // 16 blocks, the last one short
  MakeStore(container_, options)->PutFile("blocks.bin", local.Join("f.bin"));
  EXPECT_EQ(Read("blocks.bin"), data);
  EXPECT_THROW_WITH(store_->PutFile("x", local.Join("missing.bin")), IoError, "missing.bin",
                    "az://" + container_ + "/x");
}

TEST_F(AzureStoreTest, WrongKeyIsAClearErrorWithoutTheKey) {
  AzureSettings settings = Settings();
  settings.account_key_base64 = Base64Encode("an entirely wrong key of 32 byte");
  auto wrong = MakeStore(container_, {}, settings);
  const std::string head = ErrorOf([&] { wrong->Head("a"); });
  EXPECT_THAT(head, HasSubstr("HEAD az://" + container_ + "/a"));
  EXPECT_THAT(head, HasSubstr("403"));
  EXPECT_THAT(head, HasSubstr("check AZURE_STORAGE_KEY"));
  const std::string put = ErrorOf([&] { wrong->Put("a", "x", false); });
  EXPECT_THAT(put, HasSubstr("403 AuthorizationFailure"));  // Azure itself says AuthenticationFailed
  EXPECT_THAT(put, HasSubstr("check AZURE_STORAGE_KEY"));
  for (const std::string& message : {head, put}) {
    EXPECT_THAT(message, Not(HasSubstr(settings.account_key_base64)));
    EXPECT_THAT(message, Not(HasSubstr(Emulator().account_key_base64())));
    EXPECT_THAT(message, Not(HasSubstr("SharedKey")));
  }
}

TEST_F(AzureStoreTest, KeyThatIsNotBase64IsAConfigErrorWithoutIt) {
  AzureSettings settings = Settings();
  settings.account_key_base64 = "not*base64*secret";
  const std::string message = ErrorOf([&] { MakeStore(container_, {}, settings); });
  EXPECT_THAT(message, HasSubstr("AZURE_STORAGE_KEY"));
  EXPECT_THAT(message, Not(HasSubstr("secret")));
  EXPECT_THROW(MakeStore(container_, {}, settings), ConfigError);
  settings = Settings();
  settings.account = "";
  EXPECT_THROW_WITH(MakeStore(container_, {}, settings), ConfigError, "AZURE_STORAGE_ACCOUNT");
}

TEST_F(AzureStoreTest, MissingContainerSaysSo) {
  auto missing = MakeStore("nosuchcontainer");
  EXPECT_THROW_WITH(missing->List("", true), IoError, "az://nosuchcontainer", "ContainerNotFound",
                    "container 'nosuchcontainer' does not exist in storage account 'devstoreaccount1'");
  EXPECT_THROW_WITH(missing->Put("a", "x", false), IoError, "PUT az://nosuchcontainer/a", "ContainerNotFound");
  EXPECT_THROW_WITH(missing->Head("a"), IoError, "HEAD az://nosuchcontainer/a", "ContainerNotFound");
  EXPECT_THROW_WITH(missing->Delete("a"), IoError, "ContainerNotFound");
  missing->CreateContainer();
  missing->CreateContainer();  // exists: fine
  EXPECT_TRUE(missing->Put("a", "x", false));
}

TEST_F(AzureStoreTest, AccountSasWorksAndIsNeverPrinted) {
  AzureSettings settings = Settings();
  settings.account_key_base64.clear();
  settings.sas_token = "?" + MakeAccountSas(settings.account, Emulator().account_key_base64());
  auto sas = MakeStore(container_, {}, settings);
  ASSERT_TRUE(sas->Put("s/a", "via sas", false));
  EXPECT_FALSE(sas->Put("s/a", "again", true));
  EXPECT_EQ(sas->Head("s/a")->size, 7u);
  std::string got(7, '\0');
  sas->GetRange("s/a", 0, 7, got.data());
  EXPECT_EQ(got, "via sas");
  EXPECT_EQ(Keys(sas->List("s/", true)), std::vector<std::string>{"s/a"});
  sas->Copy("s/a", "s/b");
  EXPECT_EQ(Read("s/b"), "via sas");
  sas->Delete("s/a");
  EXPECT_FALSE(store_->Head("s/a").has_value());

  // A SAS whose signature does not match: a clear error that shows neither the SAS nor its signature.
  settings.sas_token = MakeAccountSas(settings.account, Base64Encode("an entirely wrong key of 32 byte"));
  const std::string signature = settings.sas_token.substr(settings.sas_token.find("&sig=") + 5);
  auto bad = MakeStore(container_, {}, settings);
  const std::string message = ErrorOf([&] { bad->Put("s/c", "x", false); });
  EXPECT_THAT(message, HasSubstr("PUT az://" + container_ + "/s/c"));
  EXPECT_THAT(message, HasSubstr("403"));
  EXPECT_THAT(message, HasSubstr("AZURE_STORAGE_SAS_TOKEN"));
  EXPECT_THAT(message, Not(HasSubstr(signature)));
  EXPECT_THAT(message, Not(HasSubstr(UriDecode(signature))));
  EXPECT_THAT(message, Not(HasSubstr("sig=")));
}

// Delta appenders: each writer takes the next free version with put-if-absent until it wins one. The log must end
// with contiguous versions, each holding exactly one writer's intact commit, every commit present once.
TEST_F(AzureStoreTest, ConcurrentPutIfAbsentAppendersGetContiguousVersions) {
  constexpr int kWriters = 4, kCommits = 8;
  auto commit = [](int writer, int n) { return StrCat("{\"writer\":", writer, ",\"commit\":", n, ",\"pad\":\"",
                                                      std::string(200 + writer * 37 + n, 'x'), "\"}"); };
  auto version_key = [](int version) {
    char name[32];
    std::snprintf(name, sizeof(name), "_delta_log/%05d.json", version);
    return std::string(name);
  };
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      try {
        int version = 0;
        for (int n = 0; n < kCommits; ++n) {
          while (!store_->Put(version_key(version), commit(w, n), /*if_absent=*/true)) ++version;
          ++version;
        }
      } catch (const std::exception& e) {
        ++failures;
        ADD_FAILURE() << "writer " << w << ": " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  const std::vector<std::string> keys = Keys(store_->List("_delta_log/", false));
  ASSERT_EQ(keys.size(), static_cast<size_t>(kWriters * kCommits));
  std::set<std::string> seen;
  for (int version = 0; version < kWriters * kCommits; ++version) {
    ASSERT_EQ(keys[version], version_key(version));
    const std::string content = Read(keys[version]);
    bool matches = false;
    for (int w = 0; w < kWriters && !matches; ++w) {
      for (int n = 0; n < kCommits && !matches; ++n) matches = content == commit(w, n);
    }
    EXPECT_TRUE(matches) << keys[version] << " holds a torn or unknown commit: " << content.substr(0, 80);
    EXPECT_TRUE(seen.insert(content).second) << keys[version] << " repeats a commit";
  }
}

// A store that dies: requests fail, bounded by the retry policy, naming the blob and never the key.
TEST(AzureStoreKilledTest, DeadEmulatorIsABoundedIoError) {
  testing::TempDir temp;
  std::string why_not;
  auto emulator = testing::StartAzureEmulator(temp.Join("azurite"), &why_not);
  if (!emulator) GTEST_SKIP() << why_not;
  AzureSettings settings;
  settings.account = emulator->account();
  settings.account_key_base64 = emulator->account_key_base64();
  settings.blob_endpoint = emulator->endpoint();
  AzureStoreOptions options;
  options.retry = FastRetries();
  AzureBlobStore store(settings, "kill", "", options);
  store.CreateContainer();
  ASSERT_TRUE(store.Put("a", std::string(4096, 'a'), false));
  emulator->Kill();
  const auto start = std::chrono::steady_clock::now();
  std::string buffer(4096, '\0');
  EXPECT_THROW_WITH(store.GetRange("a", 0, 4096, buffer.data()), IoError, "GET az://kill/a bytes 0-4095",
                    "3 attempt(s)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const std::string message = ErrorOf([&] { store.Head("a"); });
  EXPECT_THAT(message, Not(HasSubstr(settings.account_key_base64)));
}

}  // namespace
}  // namespace lakerun::objstore
