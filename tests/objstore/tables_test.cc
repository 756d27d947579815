// Tables in object storage, end to end, on real emulators started on loopback (s3rver for S3, Azurite for Azure
// Blob; skipped, saying why, when they are not installed): a Delta table with a checkpoint and deletion vectors
// written and read through UriFileSystem() by its URI, time travel, the loader on two ranks, credentials from the
// environment and from an AWS profile, the `lakerun table` commands, and concurrent Delta appenders.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/data/converter.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/checkpoint.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun/objstore/uri_file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/emulators.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/scoped_env.h"
#include "lakerun_testing/temp_dir.h"
#include "objstore/azure_store.h"

namespace lakerun {
namespace {

using parquet::Value;

// Stores are cached by bucket for the life of the process, so every emulator gets buckets no earlier test used.
std::string FreshName(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

delta::DataTypePtr Schema() {
  return delta::ParseSchema(R"({"type":"struct","fields":[
    {"name":"id","type":"long","nullable":false,"metadata":{}},
    {"name":"x","type":"float","nullable":false,"metadata":{}}]})",
                            "test");
}

std::vector<Value> Rows(int64_t from, int64_t to) {
  std::vector<Value> out;
  for (int64_t i = from; i < to; ++i) {
    out.push_back(Value::Struct({{"id", Value::Int(i)}, {"x", Value::Float(static_cast<float>(i) * 0.5f)}}));
  }
  return out;
}

std::vector<int64_t> Ids(const std::vector<Value>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(r.Field("id")->as_int());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> Range(int64_t from, int64_t to, std::set<int64_t> except = {}) {
  std::vector<int64_t> out;
  for (int64_t i = from; i < to; ++i) {
    if (!except.count(i)) out.push_back(i);
  }
  return out;
}

// Writes the test table at `uri`: 3 appends, a checkpoint at version 3, then a DELETE of rows 1, 3 and 9 of the
// first file with a deletion-vector file (version 4). Returns nothing; the reads check it.
void WriteTable(const std::string& uri) {
  delta::CreateTableOptions options;
  options.protocol.min_reader_version = 3;
  options.protocol.min_writer_version = 7;
  options.protocol.reader_features = std::vector<std::string>{"deletionVectors"};
  options.protocol.writer_features = std::vector<std::string>{"deletionVectors"};
  delta::DeltaTable table = delta::CreateTable(uri, Schema(), options);
  delta::AppendRows(table, Rows(0, 100), {});
  delta::AppendRows(table, Rows(100, 200), {});
  delta::AppendRows(table, Rows(200, 300), {});
  delta::WriteCheckpoint(table, table.Latest());
  const delta::Snapshot before = table.Latest();
  const auto first = std::find_if(before.files.begin(), before.files.end(), [](const delta::AddFile& f) {
    return f.stats && f.stats->find("\"minValues\":{\"id\":0,") != std::string::npos;
  });
  ASSERT_NE(first, before.files.end());
  delta::AddFile with_dv = *first;
  with_dv.deletion_vector = delta::WriteDeletionVectorFile(UriFileSystem(), uri, {1, 3, 9}, "dv");
  delta::ActionSet del;
  del.removes.push_back(delta::RemoveOf(*first, 1));
  del.adds.push_back(with_dv);
  delta::Commit(table, del, {});
}

void CheckTable(const std::string& uri) {
  delta::DeltaTable table(uri);
  const delta::Snapshot latest = table.Latest();
  EXPECT_EQ(latest.version, 4);
  EXPECT_EQ(Ids(delta::TableScan(table, latest).ReadAll()), Range(0, 300, {1, 3, 9}));
  EXPECT_EQ(Ids(delta::TableScan(table, table.AtVersion(1)).ReadAll()), Range(0, 100));  // time travel
  EXPECT_EQ(Ids(delta::TableScan(table, table.AtVersion(3)).ReadAll()), Range(0, 300));
  ASSERT_TRUE(delta::ReadLastCheckpoint(table).has_value());
  EXPECT_EQ(delta::ReadLastCheckpoint(table)->version, 3);
}

// Every sample id the loader gives rank `rank` of `world` in one epoch.
std::vector<int64_t> LoaderIds(const std::string& uri, int64_t rank, int64_t world) {
  data::TableOptions table_options;
  table_options.columns = {"id", "x"};
  data::LoaderOptions options;
  options.batch_size = 16;
  options.rank = rank;
  options.world_size = world;
  options.num_threads = 2;
  data::Loader loader(data::OpenTable(uri, table_options), options);
  std::vector<int64_t> ids;
  while (auto batch = loader.Next()) {
    const at::Tensor id = batch->at("id");
    for (int64_t i = 0; i < id.size(0); ++i) ids.push_back(id[i].item<int64_t>());
  }
  return ids;
}

void CheckLoaderOnTwoRanks(const std::string& uri) {
  std::vector<int64_t> rank0, rank1;
  std::thread other([&] { rank1 = LoaderIds(uri, 1, 2); });
  rank0 = LoaderIds(uri, 0, 2);
  other.join();
  EXPECT_EQ(rank0.size(), rank1.size());
  std::vector<int64_t> all = rank0;
  all.insert(all.end(), rank1.begin(), rank1.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());  // padding repeats a sample to even the ranks
  EXPECT_EQ(all, Range(0, 300, {1, 3, 9}));
}

class S3TablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bucket_ = FreshName("lake");
    std::string why_not;
    emulator_ = testing::StartS3Emulator(temp_.Join("s3"), {bucket_}, &why_not);
    if (!emulator_) GTEST_SKIP() << why_not;
    env_.Set("AWS_ENDPOINT_URL", emulator_->endpoint());
    env_.Set("AWS_REGION", "us-east-1");
    env_.Set("AWS_ACCESS_KEY_ID", emulator_->access_key_id());
    env_.Set("AWS_SECRET_ACCESS_KEY", emulator_->secret_access_key());
    env_.Unset("AWS_SESSION_TOKEN");
    env_.Unset("AWS_PROFILE");
    // s3rver ignores If-None-Match on PUT: the one writer of these tests says it is alone.
    env_.Set("AWS_S3_ALLOW_UNSAFE_RENAME", "true");
    env_.Set("LAKERUN_OBJSTORE_TIMEOUT", "10");
  }

  testing::TempDir temp_;
  std::string bucket_;
  testing::ScopedEnv env_;
  std::optional<testing::S3Emulator> emulator_;
};

TEST_F(S3TablesTest, ADeltaTableIsWrittenAndReadByItsUri) {
  const std::string uri = "s3://" + bucket_ + "/tables/t";
  WriteTable(uri);
  EXPECT_TRUE(delta::IsDeltaTable(uri));
  CheckTable(uri);
  CheckLoaderOnTwoRanks(uri);
  // The same table through s3a://, as Spark and Hadoop write it.
  EXPECT_EQ(delta::DeltaTable("s3a://" + bucket_ + "/tables/t").Latest().version, 4);
}

// One epoch of a folder of Parquet files in S3, counted: opening a file takes its footer (one GET of its tail), and
// the loader fetches each file's row groups, with the 4 bytes of its head magic, in one GET, not one per row group
// or page.
TEST_F(S3TablesTest, AnEpochTakesAFewGetsPerFileNotOnePerRowGroup) {
  const std::string uri = "s3://" + bucket_ + "/folder";
  constexpr int kFiles = 3, kRowGroups = 4, kRows = 20000;  // 160 KB row groups: more than a footer's tail
  for (int f = 0; f < kFiles; ++f) {
    const std::string local = temp_.Join("part-" + std::to_string(f) + ".parquet");
    parquet::ParquetWriter writer(LocalFileSystem(), local,
                                  parquet::Schema::FromFields({parquet::Leaf("id", parquet::PhysicalType::kInt64)}));
    for (int rg = 0; rg < kRowGroups; ++rg) {
      std::vector<int64_t> ids;
      for (int i = 0; i < kRows; ++i) ids.push_back((f * kRowGroups + rg) * kRows + i);
      writer.WriteRowGroup({parquet::ColumnData::Int64s(ids)});
    }
    writer.Close();
    CopyFile(LocalFileSystem(), local, UriFileSystem(), uri + "/part-" + std::to_string(f) + ".parquet");
  }
  const ObjectStoreReads before = ObjectStoreReadsSoFar();
  data::LoaderOptions options;
  options.batch_size = 32;
  options.num_threads = 2;
  options.seed = 5;
  data::Loader loader(data::OpenTable(uri), options);
  std::set<int64_t> ids;
  while (auto batch = loader.Next()) {
    for (int64_t i = 0; i < batch->size(); ++i) ids.insert(batch->at("id")[i].item<int64_t>());
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kFiles * kRowGroups * kRows));
  const ObjectStoreReads after = ObjectStoreReadsSoFar();
  EXPECT_EQ(after.files_opened - before.files_opened, static_cast<uint64_t>(kFiles));
  EXPECT_EQ(after.get_requests - before.get_requests, static_cast<uint64_t>(2 * kFiles));
}

// A remote file's head magic is checked with its first GET of data, not at open: a file whose PAR1 at offset 0 was
// damaged opens (its footer is fine) and fails at the first read, naming the file and the offset.
TEST_F(S3TablesTest, AFileWithoutItsHeadMagicFailsAtItsFirstRead) {
  const std::string local = temp_.Join("bad-head.parquet");
  parquet::ParquetWriter writer(LocalFileSystem(), local,
                                parquet::Schema::FromFields({parquet::Leaf("id", parquet::PhysicalType::kInt64)}));
  writer.WriteRowGroup({parquet::ColumnData::Int64s({1, 2, 3})});
  writer.Close();
  std::string bytes = LocalFileSystem().OpenForRead(local)->ReadAll();
  bytes[1] = 'X';
  const std::string uri = "s3://" + bucket_ + "/bad-head/part-0.parquet";
  UriFileSystem().WriteAtomically(uri, bytes);
  data::Loader loader(data::OpenTable(uri), data::LoaderOptions{});
  EXPECT_THROW_WITH(loader.Next(), CorruptDataError, uri, "no PAR1 magic at offset 0");
}

// gs:// speaks GCS's S3-compatible XML API with HMAC keys; here against the S3 emulator standing in for GCS.
TEST_F(S3TablesTest, GcsThroughItsXmlApi) {
  env_.Set("GCS_ENDPOINT_URL", emulator_->endpoint());
  env_.Set("GCS_HMAC_ACCESS_ID", emulator_->access_key_id());
  env_.Set("GCS_HMAC_SECRET", emulator_->secret_access_key());
  const std::string uri = "gs://" + bucket_ + "/tables/g";
  WriteTable(uri);
  CheckTable(uri);
  // One data file alone, as a plain Parquet file (its deletion vector lives in the Delta log, not in the file).
  const delta::Snapshot latest = delta::DeltaTable(uri).Latest();
  const std::string file = latest.DataFilePath(latest.files.front());
  ASSERT_EQ(file.rfind("gs://", 0), 0u) << file;
  EXPECT_EQ(data::OpenTable(file)->num_rows(), 100u);
}

TEST_F(S3TablesTest, CredentialsComeFromAnAwsProfile) {
  const std::string uri = "s3://" + bucket_ + "/tables/p";
  WriteTable(uri);
  const std::string other_bucket = bucket_;  // the cached store keeps its credentials: a new root reads the profile
  env_.Unset("AWS_ACCESS_KEY_ID");
  env_.Unset("AWS_SECRET_ACCESS_KEY");
  LocalFileSystem().WriteAtomically(temp_.Join("credentials"),
                                    "[default]\naws_access_key_id = WRONG\naws_secret_access_key = WRONG\n\n"
                                    "[dev]\naws_access_key_id = S3RVER\naws_secret_access_key = S3RVER\n");
  env_.Set("AWS_SHARED_CREDENTIALS_FILE", temp_.Join("credentials"));
  env_.Set("AWS_CONFIG_FILE", temp_.Join("no-config"));
  env_.Set("AWS_PROFILE", "dev");
  EXPECT_EQ(delta::DeltaTable("s3n://" + other_bucket + "/tables/p").Latest().version, 4);
  env_.Set("AWS_PROFILE", "default");
  EXPECT_THROW_WITH(delta::DeltaTable("s3a://" + other_bucket + "/tables/p").Latest(), IoError, "HTTP 403",
                    "profile 'default'");
}

TEST_F(S3TablesTest, TheTableCommandsTakeTheUri) {
  const std::string uri = "s3://" + bucket_ + "/tables/c";
  WriteTable(uri);
  testing::Child head({LAKERUN_CLI, "table", "head", uri, "-n", "3"}, temp_.Join("head.log"));
  const testing::Exit exit = head.Wait(std::chrono::seconds(60));
  const std::string log = LocalFileSystem().ReadFile(temp_.Join("head.log"));
  ASSERT_EQ(exit.status(), 0) << log;
  EXPECT_NE(log.find("297 rows"), std::string::npos) << log;
  testing::Child inspect({LAKERUN_CLI, "table", "inspect", uri}, temp_.Join("inspect.log"));
  const testing::Exit inspected = inspect.Wait(std::chrono::seconds(60));
  EXPECT_EQ(inspected.status(), 0) << LocalFileSystem().ReadFile(temp_.Join("inspect.log"));
  // An import straight into the bucket, then read back.
  LocalFileSystem().WriteAtomically(temp_.Join("iris.csv"), "sepal,species\n5.1,setosa\n6.2,virginica\n");
  const std::string imported = "s3://" + bucket_ + "/tables/iris";
  testing::Child import({LAKERUN_CLI, "table", "import", "csv", temp_.Join("iris.csv"), imported},
                        temp_.Join("import.log"));
  ASSERT_EQ(import.Wait(std::chrono::seconds(60)).status(), 0) << LocalFileSystem().ReadFile(temp_.Join("import.log"));
  EXPECT_EQ(data::OpenTable(imported)->num_rows(), 2u);
}

// The converter's cache keys a remote table by its Delta version: the second run reads local files, and from the
// store only the log and the data files' footers (to fingerprint and describe them), not their pages.
TEST_F(S3TablesTest, TheConverterCachesARemoteTableLocally) {
  const std::string uri = "s3://" + bucket_ + "/tables/cached";
  delta::DeltaTable table = delta::CreateTable(uri, Schema());
  delta::AppendRows(table, Rows(0, 60000), {});
  data::ConverterOptions options;
  options.cache_dir = temp_.Join("cache");
  options.world_size = 2;
  data::TableOptions columns;
  columns.columns = {"id", "x"};
  const uint64_t before = ObjectStoreReadsSoFar().bytes;
  const data::ConvertedDataset first = data::ConvertTable(uri, columns, options);
  const uint64_t first_bytes = ObjectStoreReadsSoFar().bytes - before;
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.rows, 60000u);
  EXPECT_FALSE(IsObjectStorePath(first.path));
  const data::ConvertedDataset second = data::ConvertTable(uri, columns, options);
  const uint64_t second_bytes = ObjectStoreReadsSoFar().bytes - before - first_bytes;
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(second.path, first.path);
  EXPECT_LT(second_bytes * 4, first_bytes) << second_bytes << " bytes read again of " << first_bytes;
  delta::AppendRows(table, Rows(60000, 60010), {});  // a new version: a new entry
  const data::ConvertedDataset third = data::ConvertTable(uri, columns, options);
  EXPECT_FALSE(third.reused);
  EXPECT_EQ(third.rows, 60010u);
}

TEST_F(S3TablesTest, AMissingObjectAndAMissingBucketAreNamed) {
  EXPECT_THROW_WITH(UriFileSystem().ReadFile("s3://" + bucket_ + "/nothing/here"), IoError,
                    "s3://" + bucket_ + "/nothing/here");
  EXPECT_THROW_WITH(UriFileSystem().List("s3://" + FreshName("absent") + "/t"), IoError, "does not exist");
}

class AzureTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    emulator_ = testing::StartAzureEmulator(temp_.Join("azure"), &why_not);
    if (!emulator_) GTEST_SKIP() << why_not;
    container_ = FreshName("lake");
    env_.Set("AZURE_STORAGE_ACCOUNT", emulator_->account());
    env_.Set("AZURE_STORAGE_KEY", emulator_->account_key_base64());
    env_.Set("AZURE_STORAGE_BLOB_ENDPOINT", emulator_->endpoint());
    env_.Unset("AZURE_STORAGE_SAS_TOKEN");
    env_.Unset("AZURE_STORAGE_CONNECTION_STRING");
    env_.Set("LAKERUN_OBJSTORE_TIMEOUT", "10");
    CreateContainer(container_);
  }
  void CreateContainer(const std::string& name);

  testing::TempDir temp_;
  std::string container_;
  testing::ScopedEnv env_;
  std::optional<testing::AzureEmulator> emulator_;
};

TEST_F(AzureTablesTest, ADeltaTableIsWrittenAndReadByItsUri) {
  const std::string uri = "az://" + container_ + "/tables/t";
  WriteTable(uri);
  CheckTable(uri);
  CheckLoaderOnTwoRanks(uri);
  // ADLS Gen2 spelling of the same table.
  const std::string abfss = "abfss://" + container_ + "@" + emulator_->account() + ".dfs.core.windows.net/tables/t";
  EXPECT_EQ(delta::DeltaTable(abfss).Latest().version, 4);
}

// Delta appenders on a store that honours conditional writes: every commit lands once, versions stay contiguous.
TEST_F(AzureTablesTest, ConcurrentAppendersLoseNothing) {
  const std::string uri = "az://" + container_ + "/tables/concurrent";
  delta::CreateTable(uri, Schema());
  constexpr int kWriters = 4;
  constexpr int kCommits = 5;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      try {
        delta::DeltaTable table(uri);
        for (int c = 0; c < kCommits; ++c) {
          const int64_t first = 1000 * w + 10 * c;
          delta::AppendRows(table, Rows(first, first + 10), {});
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "writer " << w << ": " << e.what();
        ++failures;
      }
    });
  }
  for (auto& t : writers) t.join();
  ASSERT_EQ(failures.load(), 0);
  delta::DeltaTable table(uri);
  EXPECT_EQ(table.Latest().version, kWriters * kCommits);
  std::vector<int64_t> expected;
  for (int w = 0; w < kWriters; ++w) {
    for (int c = 0; c < kCommits; ++c) {
      for (int i = 0; i < 10; ++i) expected.push_back(1000 * w + 10 * c + i);
    }
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Ids(delta::TableScan(table, table.Latest()).ReadAll()), expected);
}

void AzureTablesTest::CreateContainer(const std::string& name) {
  objstore::AzureSettings settings;
  settings.account = emulator_->account();
  settings.account_key_base64 = emulator_->account_key_base64();
  settings.blob_endpoint = emulator_->endpoint();
  objstore::AzureBlobStore(settings, name).CreateContainer();
}

}  // namespace
}  // namespace lakerun
