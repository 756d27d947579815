// ObjectFileSystem's mapping of file-system calls onto objects, on an in-memory store that counts its requests.
#include "objstore/object_file_system.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "objstore/xml.h"

namespace lakerun::objstore {
namespace {

class MemoryObjectStore final : public ObjectStore {
 public:
  explicit MemoryObjectStore(bool honours_conditions = true) : honours_conditions_(honours_conditions) {}

  const std::string& root_uri() const override { return root_; }
  std::optional<ObjectInfo> Head(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++heads;
    auto it = objects_.find(key);
    if (it == objects_.end()) return std::nullopt;
    return ObjectInfo{key, it->second.size(), 0, ""};
  }
  void GetRange(const std::string& key, uint64_t offset, size_t n, char* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++gets;
    got_bytes += n;
    const std::string& bytes = objects_.at(key);
    ASSERT_LE(offset + n, bytes.size());
    std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
              bytes.begin() + static_cast<std::ptrdiff_t>(offset + n), out);
  }
  bool Put(const std::string& key, std::string_view data, bool if_absent) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++puts;
    if (if_absent && honours_conditions_ && objects_.count(key)) return false;
    objects_[key] = std::string(data);
    return true;
  }
  void PutFile(const std::string& key, const std::string& local_path) override {
    Put(key, LocalFileSystem().ReadFile(local_path), false);
  }
  ObjectListing List(const std::string& prefix, bool delimited) override {
    std::lock_guard<std::mutex> lock(mu_);
    ObjectListing out;
    for (const auto& [key, bytes] : objects_) {
      if (key.rfind(prefix, 0) != 0) continue;
      const size_t slash = delimited ? key.find('/', prefix.size()) : std::string::npos;
      if (slash == std::string::npos) {
        out.objects.push_back({key, bytes.size(), 0, ""});
      } else if (out.subprefixes.empty() || out.subprefixes.back() != key.substr(0, slash + 1)) {
        out.subprefixes.push_back(key.substr(0, slash + 1));
      }
    }
    return out;
  }
  bool AnyUnder(const std::string& prefix) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++lists;
    auto it = objects_.lower_bound(prefix);
    return it != objects_.end() && it->first.rfind(prefix, 0) == 0;
  }
  void Delete(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.erase(key);
  }
  void Copy(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[to] = objects_.at(from);
  }
  std::map<std::string, std::string> objects() {
    std::lock_guard<std::mutex> lock(mu_);
    return objects_;
  }

  int heads = 0, gets = 0, puts = 0, lists = 0;
  uint64_t got_bytes = 0;

 private:
  const std::string root_ = "s3://bucket";
  bool honours_conditions_;
  std::mutex mu_;
  std::map<std::string, std::string> objects_;
};

std::string Pattern(size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7919) % 251);
  return out;
}

class ObjectFileSystemTest : public ::testing::Test {
 protected:
  explicit ObjectFileSystemTest(bool honours = true, ObjectFileOptions options = {})
      : store_(honours), fs_([this](const ObjectUri&) -> ObjectStore& { return store_; }, options) {}
  MemoryObjectStore store_;
  ObjectFileSystem fs_;
};

TEST_F(ObjectFileSystemTest, FilesAndDirectoriesAreObjectsAndPrefixes) {
  fs_.WriteAtomically("s3://bucket/t/_delta_log/00.json", "{}");
  fs_.WriteAtomically("s3://bucket/t/part-0.parquet", "abc");
  fs_.WriteAtomically("s3://bucket/t/x=1/part-1.parquet", "defg");
  EXPECT_EQ(store_.puts, 3);  // one PUT each: no temporary object, no rename
  ASSERT_TRUE(fs_.Stat("s3://bucket/t/part-0.parquet").has_value());
  EXPECT_EQ(fs_.Stat("s3://bucket/t/part-0.parquet")->size, 3u);
  EXPECT_TRUE(fs_.Stat("s3://bucket/t/x=1")->is_directory);
  EXPECT_TRUE(fs_.Stat("s3://bucket/t/")->is_directory);
  EXPECT_FALSE(fs_.Exists("s3://bucket/t/missing"));
  const std::vector<FileInfo> entries = fs_.List("s3://bucket/t");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "_delta_log");
  EXPECT_TRUE(entries[0].is_directory);
  EXPECT_EQ(entries[1].name, "part-0.parquet");
  EXPECT_EQ(entries[1].size, 3u);
  EXPECT_EQ(entries[2].name, "x=1");
  EXPECT_TRUE(fs_.List("s3://bucket/empty").empty());
  EXPECT_EQ(fs_.ReadFile("s3://bucket/t/x=1/part-1.parquet"), "defg");
  fs_.Rename("s3://bucket/t/x=1", "s3://bucket/t/x=2");
  EXPECT_EQ(fs_.ReadFile("s3://bucket/t/x=2/part-1.parquet"), "defg");
  EXPECT_FALSE(fs_.Exists("s3://bucket/t/x=1"));
  fs_.RemoveAll("s3://bucket/t");
  EXPECT_TRUE(store_.objects().empty());
}

TEST_F(ObjectFileSystemTest, StatAsksAboutTheObjectAndOneKeyUnderItNeverTheWholePrefix) {
  for (int i = 0; i < 50; ++i) fs_.WriteAtomically("s3://bucket/t/_delta_log/" + std::to_string(i) + ".json", "{}");
  fs_.WriteAtomically("s3://bucket/t/part-0.parquet", "abc");
  const int lists_before = store_.lists, heads_before = store_.heads;
  const std::optional<FileInfo> log = fs_.Stat("s3://bucket/t/_delta_log");
  ASSERT_TRUE(log.has_value());
  EXPECT_TRUE(log->is_directory);
  EXPECT_EQ(store_.lists - lists_before, 1);
  EXPECT_EQ(store_.heads - heads_before, 1);
  const std::optional<FileInfo> file = fs_.Stat("s3://bucket/t/part-0.parquet");
  ASSERT_TRUE(file.has_value());
  EXPECT_FALSE(file->is_directory);
  EXPECT_EQ(file->size, 3u);
  EXPECT_FALSE(fs_.Stat("s3://bucket/t/part").has_value());  // a key prefix is neither an object nor a directory
  EXPECT_FALSE(fs_.Stat("s3://bucket/nothing").has_value());
  EXPECT_TRUE(fs_.Stat("s3://bucket")->is_directory);
}

TEST_F(ObjectFileSystemTest, AFileIsUploadedOnCloseOnly) {
  {
    auto file = fs_.OpenForWrite("s3://bucket/a");
    file->Append("half");
    // Destroyed without Close(): a writer that failed publishes nothing.
  }
  EXPECT_FALSE(fs_.Exists("s3://bucket/a"));
  auto file = fs_.OpenForWrite("s3://bucket/a");
  file->Append("hello ");
  file->Append("world");
  EXPECT_EQ(file->Position(), 11u);
  EXPECT_FALSE(fs_.Exists("s3://bucket/a"));
  file->Close();
  EXPECT_EQ(fs_.ReadFile("s3://bucket/a"), "hello world");
  auto more = fs_.OpenForAppend("s3://bucket/a");
  more->Append("!");
  more->Close();
  EXPECT_EQ(fs_.ReadFile("s3://bucket/a"), "hello world!");
}

class SmallSpillTest : public ObjectFileSystemTest {
 protected:
  static ObjectFileOptions Options() {
    ObjectFileOptions options;
    options.spill_bytes = 1000;
    return options;
  }
  SmallSpillTest() : ObjectFileSystemTest(true, Options()) {}
};

TEST_F(SmallSpillTest, LargeFilesAreStagedOnLocalDiskAndUploadedWhole) {
  const std::string bytes = Pattern(10000);
  auto file = fs_.OpenForWrite("s3://bucket/big");
  for (size_t at = 0; at < bytes.size(); at += 700) file->Append(std::string_view(bytes).substr(at, 700));
  file->Close();
  EXPECT_EQ(store_.objects().at("big"), bytes);
}

TEST_F(ObjectFileSystemTest, AFooterComesWithOneGetOfTheTail) {
  const std::string bytes = Pattern(1 << 20);
  fs_.WriteAtomically("s3://bucket/f.parquet", bytes);
  auto file = fs_.OpenForRead("s3://bucket/f.parquet");
  EXPECT_EQ(store_.heads, 1);
  EXPECT_EQ(file->Size(), bytes.size());
  // A Parquet reader's footer reads: the length at the end, then the footer before it.
  EXPECT_EQ(file->ReadAt(bytes.size() - 8, 8), bytes.substr(bytes.size() - 8));
  EXPECT_EQ(file->ReadAt(bytes.size() - 40000, 39992), bytes.substr(bytes.size() - 40000, 39992));
  EXPECT_EQ(store_.gets, 1);
  EXPECT_EQ(store_.got_bytes, 64u << 10);
  EXPECT_EQ(file->ReadAt(10, 5), bytes.substr(10, 5));  // elsewhere: its own ranged GET
  EXPECT_EQ(store_.gets, 2);
  EXPECT_THROW_WITH(file->ReadAt(bytes.size() - 2, 8), CorruptDataError, "goes past the end of the object");
}

TEST_F(ObjectFileSystemTest, AFileOfKnownSizeOpensWithoutARequestAndFetchesHeadAndTailTogether) {
  const std::string bytes = Pattern(1 << 20);
  fs_.WriteAtomically("s3://bucket/f.parquet", bytes);
  auto file = fs_.OpenForReadOfSize("s3://bucket/f.parquet", bytes.size());
  EXPECT_EQ(store_.heads, 0);
  EXPECT_EQ(store_.gets, 0);
  EXPECT_EQ(file->Size(), bytes.size());
  // Reads at both ends (a Parquet file's magic and its footer's length), announced together.
  file->WillRead({{0, 4}, {bytes.size() - 8, 8}});
  EXPECT_EQ(file->ReadAt(0, 4), bytes.substr(0, 4));
  EXPECT_EQ(file->ReadAt(bytes.size() - 8, 8), bytes.substr(bytes.size() - 8));
  EXPECT_EQ(file->ReadAt(bytes.size() - 40000, 39992), bytes.substr(bytes.size() - 40000, 39992));  // the footer
  EXPECT_EQ(store_.gets, 2);  // the first bytes and the tail, in flight at once
  EXPECT_EQ(store_.heads, 0);
  // A file no larger than the tail comes whole in one GET, however many of its ranges are announced.
  const std::string small = Pattern(10000);
  fs_.WriteAtomically("s3://bucket/small.parquet", small);
  auto whole = fs_.OpenForReadOfSize("s3://bucket/small.parquet", small.size());
  whole->WillRead({{0, 4}, {small.size() - 8, 8}, {100, 200}});
  EXPECT_EQ(whole->ReadAt(0, 4), small.substr(0, 4));
  EXPECT_EQ(whole->ReadAt(100, 200), small.substr(100, 200));
  EXPECT_EQ(whole->ReadAt(small.size() - 8, 8), small.substr(small.size() - 8));
  EXPECT_EQ(store_.gets, 3);
}

TEST_F(ObjectFileSystemTest, WillReadCoalescesNeighboursAndServesTheReadsThatFollow) {
  const std::string bytes = Pattern(8 << 20);
  fs_.WriteAtomically("s3://bucket/f", bytes);
  auto file = fs_.OpenForRead("s3://bucket/f");
  ASSERT_EQ(store_.gets, 1);  // the tail, with the size
  // Three column chunks close together and one far away: two GETs.
  const std::vector<std::pair<uint64_t, size_t>> ranges = {
      {1000, 5000}, {6500, 20000}, {30000, 100}, {6 << 20, 1 << 20}};
  file->WillRead(ranges);  // returns at once; the reads wait for the GETs in flight
  for (const auto& [offset, n] : ranges) EXPECT_EQ(file->ReadAt(offset, n), bytes.substr(offset, n));
  EXPECT_EQ(store_.gets, 3);
  file->WillRead(ranges);
  file->WillRead(ranges);  // announced twice: fetched once
  for (const auto& [offset, n] : ranges) EXPECT_EQ(file->ReadAt(offset, n), bytes.substr(offset, n));
  EXPECT_EQ(store_.gets, 5);
  // Served blocks are dropped: reading a range again fetches it again.
  EXPECT_EQ(file->ReadAt(1000, 10), bytes.substr(1000, 10));
  EXPECT_EQ(store_.gets, 6);
}

TEST_F(ObjectFileSystemTest, CreateExclusiveIsAConditionalPut) {
  EXPECT_TRUE(fs_.CreateExclusive("s3://bucket/t/_delta_log/00000000000000000000.json", "a"));
  EXPECT_FALSE(fs_.CreateExclusive("s3://bucket/t/_delta_log/00000000000000000000.json", "b"));
  EXPECT_EQ(fs_.ReadFile("s3://bucket/t/_delta_log/00000000000000000000.json"), "a");
  for (const auto& [key, bytes] : store_.objects()) EXPECT_EQ(key.rfind("_lakerun_probe/", 0), std::string::npos);
}

class IgnoredConditionsTest : public ObjectFileSystemTest {
 protected:
  IgnoredConditionsTest() : ObjectFileSystemTest(/*honours=*/false) {}
};

TEST_F(IgnoredConditionsTest, AStoreThatIgnoresConditionalWritesIsRefusedForCommits) {
  EXPECT_THROW_WITH(fs_.CreateExclusive("s3://bucket/t/_delta_log/00000000000000000000.json", "a"), NotImplemented,
                    "ignores conditional writes");
  EXPECT_FALSE(fs_.Exists("s3://bucket/t/_delta_log/00000000000000000000.json"));
  fs_.WriteAtomically("s3://bucket/plain", "x");  // other writes are fine
  EXPECT_EQ(fs_.ReadFile("s3://bucket/plain"), "x");
}

TEST(ObjectFileSystemUnsafeTest, TheUnsafeSettingLetsASingleWriterCommit) {
  MemoryObjectStore store(/*honours_conditions=*/false);
  ObjectFileOptions options;
  options.allow_unsafe_commits = true;
  ObjectFileSystem fs([&](const ObjectUri&) -> ObjectStore& { return store; }, options);
  EXPECT_TRUE(fs.CreateExclusive("s3://bucket/v0", "a"));
  EXPECT_FALSE(fs.CreateExclusive("s3://bucket/v0", "b"));  // checked before writing
  EXPECT_EQ(fs.ReadFile("s3://bucket/v0"), "a");
}

TEST(ObjectUriTest, EverySchemeUsersWrite) {
  EXPECT_FALSE(ParseObjectUri("/local/path").has_value());
  EXPECT_FALSE(ParseObjectUri("file:///x").has_value());
  const ObjectUri s3 = *ParseObjectUri("s3a://bucket/a/b.parquet");
  EXPECT_EQ(s3.kind, StoreKind::kS3);
  EXPECT_EQ(s3.bucket, "bucket");
  EXPECT_EQ(s3.key, "a/b.parquet");
  EXPECT_EQ(s3.root, "s3a://bucket");
  const ObjectUri adls = *ParseObjectUri("abfss://data@acct.dfs.core.windows.net/tables/t");
  EXPECT_EQ(adls.kind, StoreKind::kAzure);
  EXPECT_EQ(adls.bucket, "data");
  EXPECT_EQ(adls.account, "acct");
  EXPECT_EQ(adls.key, "tables/t");
  const ObjectUri az = *ParseObjectUri("az://data/t");
  EXPECT_EQ(az.account, "");
  EXPECT_EQ(ParseObjectUri("gs://b")->key, "");
  EXPECT_THROW_WITH(ParseObjectUri("s3:///key"), ConfigError, "names no bucket");
  EXPECT_THROW_WITH(ParseObjectUri("abfss://data/t"), ConfigError, "CONTAINER@ACCOUNT");
}

TEST(XmlTest, FindsElementsAndDecodesText) {
  const std::string xml =
      "<?xml version=\"1.0\"?><ListBucketResult><Prefix>t/</Prefix><Contents><Key>a&amp;b &#x4E2D;.parquet</Key>"
      "<Size>12</Size></Contents><Contents><Key><![CDATA[c<d]]></Key><Size>3</Size></Contents>"
      "<CommonPrefixes><Prefix>t/x=1/</Prefix></CommonPrefixes><IsTruncated>false</IsTruncated><Marker/>"
      "</ListBucketResult>";
  const auto contents = XmlElements(xml, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(XmlText(contents[0], "Key"), "a&b \xE4\xB8\xAD.parquet");
  EXPECT_EQ(XmlText(contents[1], "Key"), "c<d");
  EXPECT_EQ(XmlText(XmlElements(xml, "CommonPrefixes")[0], "Prefix"), "t/x=1/");
  EXPECT_EQ(XmlElements(xml, "Marker").size(), 1u);
  EXPECT_EQ(XmlText(xml, "Missing"), "");
  EXPECT_EQ(XmlText("<Error><Code>NoSuchKey</Code></Error>", "Code"), "NoSuchKey");
}

}  // namespace
}  // namespace lakerun::objstore
