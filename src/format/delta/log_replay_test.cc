// Log replay from hand-written commits, following the examples of PROTOCOL.md.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "format/delta/delta_test_util.h"
#include "format/delta/log_files.h"
#include "lakerun/base/error.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/table.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::delta {
namespace {

using namespace lakerun::delta::testing;

const char kDateRegionSchema[] =
    R"({"type":"struct","fields":[{"name":"asset","type":"string","nullable":true,"metadata":{}},)"
    R"({"name":"quantity","type":"double","nullable":true,"metadata":{}},)"
    R"({"name":"date","type":"date","nullable":true,"metadata":{}},)"
    R"({"name":"region","type":"string","nullable":true,"metadata":{}}]})";

std::vector<std::string> Paths(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& f : s.files) out.push_back(f.path);
  return out;
}

class LogReplayTest : public ::testing::Test {
 protected:
  void WriteBaseTable() {
    WriteCommit(dir_.path(), 0,
                {CommitInfoLine(1515491537026, "CREATE TABLE"), ProtocolLine(1, 2),
                 MetadataLine(kDateRegionSchema, R"(["date","region"])", R"({"appendOnly":"false"})"),
                 AddLine("date=2017-12-10/region=eu/part-00000.c000.snappy.parquet",
                         R"({"date":"2017-12-10","region":"eu"})"),
                 AddLine("date=2017-12-10/region=us/part-00001.c000.snappy.parquet",
                         R"({"date":"2017-12-10","region":"us"})")});
    WriteCommit(dir_.path(), 1,
                {CommitInfoLine(1515491538000, "DELETE"),
                 RemoveLine("date=2017-12-10/region=eu/part-00000.c000.snappy.parquet"),
                 AddLine("date=2017-12-11/region=eu/part-00002.c000.snappy.parquet",
                         R"({"date":"2017-12-11","region":"eu"})",
                         R"({"numRecords":3,"minValues":{"quantity":1.5},"maxValues":{"quantity":9},"nullCount":{"quantity":0}})")});
  }
  lakerun::testing::TempDir dir_;
};

TEST_F(LogReplayTest, AddsAndRemovesReconcile) {
  WriteBaseTable();
  DeltaTable table(dir_.path());
  EXPECT_EQ(table.LatestVersion(), 1);
  Snapshot latest = table.Latest();
  EXPECT_EQ(latest.version, 1);
  EXPECT_EQ(Paths(latest), (std::vector<std::string>{"date=2017-12-10/region=us/part-00001.c000.snappy.parquet",
                                                      "date=2017-12-11/region=eu/part-00002.c000.snappy.parquet"}));
  ASSERT_EQ(latest.tombstones.size(), 1u);
  EXPECT_EQ(latest.tombstones[0].path, "date=2017-12-10/region=eu/part-00000.c000.snappy.parquet");
  EXPECT_EQ(latest.metadata.partition_columns, (std::vector<std::string>{"date", "region"}));
  EXPECT_EQ(latest.metadata.schema->fields.size(), 4u);
  EXPECT_EQ(latest.metadata.schema->fields[2].type->kind, TypeKind::kDate);
  EXPECT_EQ(latest.metadata.configuration.at("appendOnly"), "false");
  ASSERT_TRUE(latest.commit_info.has_value());
  EXPECT_EQ(latest.commit_info->operation, "DELETE");
  EXPECT_EQ(latest.files[1].partition_values.at("region"), "eu");

  Snapshot v0 = table.AtVersion(0);
  EXPECT_EQ(v0.files.size(), 2u);
  EXPECT_TRUE(v0.tombstones.empty());
  EXPECT_EQ(v0.commit_info->operation, "CREATE TABLE");
}

TEST_F(LogReplayTest, ReAddingAFileReplacesItsStatsAndRemoveThenAddRevivesIt) {
  WriteBaseTable();
  WriteCommit(dir_.path(), 2,
              {AddLine("date=2017-12-11/region=eu/part-00002.c000.snappy.parquet",
                       R"({"date":"2017-12-11","region":"eu"})", R"({"numRecords":3,"tightBounds":true})"),
               AddLine("date=2017-12-10/region=eu/part-00000.c000.snappy.parquet",
                       R"({"date":"2017-12-10","region":"eu"})")});
  Snapshot s = DeltaTable(dir_.path()).Latest();
  ASSERT_EQ(s.files.size(), 3u);
  EXPECT_TRUE(s.tombstones.empty());
  EXPECT_EQ(*s.files[2].stats, R"({"numRecords":3,"tightBounds":true})");
}

TEST_F(LogReplayTest, PercentEncodedPathsAreDecodedAndKeyedDecoded) {
  WriteCommit(dir_.path(), 0,
              {ProtocolLine(1, 2), MetadataLine(SimpleSchema()), AddLine("a%20b/part%3D1%25.parquet"),
               AddLine("file:///abs/part-2.parquet")});
  WriteCommit(dir_.path(), 1, {RemoveLine("a b/part=1%25.parquet")});  // same file, other spelling
  DeltaTable table(dir_.path());
  Snapshot v0 = table.AtVersion(0);
  ASSERT_EQ(v0.files.size(), 2u);
  std::set<std::string> paths;
  for (const AddFile& f : v0.files) paths.insert(v0.DataFilePath(f));
  EXPECT_EQ(paths, (std::set<std::string>{dir_.path() + "/a b/part=1%.parquet", "/abs/part-2.parquet"}));
  Snapshot v1 = table.AtVersion(1);
  ASSERT_EQ(v1.files.size(), 1u);
  EXPECT_EQ(v1.files[0].path, "file:///abs/part-2.parquet");
  // A file: URI and the plain absolute path name one file (as kernel's canonicalized-paths tables write them).
  WriteCommit(dir_.path(), 2, {RemoveLine("/abs/part-2.parquet")});
  EXPECT_TRUE(table.Latest().files.empty());
}

TEST_F(LogReplayTest, TablesWithTypeWideningAreReadableButNotWritable) {
  for (const std::string feature : {"typeWidening", "typeWidening-preview"}) {
    const std::string path = dir_.path() + "/" + feature;
    const std::string features = "[\"" + feature + "\"]";
    WriteCommit(path, 0, {ProtocolLine(3, 7, features, features), MetadataLine(SimpleSchema())});
    DeltaTable table(path);
    EXPECT_EQ(table.Latest().version, 0) << feature;
    EXPECT_THROW_WITH(Commit(table, ActionSet{}, {}), NotImplemented, feature);
  }
}

TEST_F(LogReplayTest, APartitionFolderWithAColonIsAPathNotAUriScheme) {
  WriteCommit(dir_.path(), 0,
              {ProtocolLine(1, 2), MetadataLine(SimpleSchema()), AddLine("time=1971-07-22T03%3A00%3A00/part-0.parquet"),
               AddLine("hour=1:2/part-1.parquet")});
  Snapshot s = DeltaTable(dir_.path()).Latest();
  std::set<std::string> paths;
  for (const AddFile& f : s.files) paths.insert(s.DataFilePath(f));
  EXPECT_EQ(paths, (std::set<std::string>{dir_.path() + "/time=1971-07-22T03:00:00/part-0.parquet",
                                          dir_.path() + "/hour=1:2/part-1.parquet"}));
}

TEST_F(LogReplayTest, FilesAreKeyedByPathAndDeletionVector) {
  const std::string dv1 = R"({"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","sizeInBytes":40,"cardinality":6})";
  WriteCommit(dir_.path(), 0,
              {ProtocolLine(3, 7, R"(["deletionVectors"])", R"(["deletionVectors"])"),
               MetadataLine(SimpleSchema()), AddLine("f1.parquet", "{}", R"({"numRecords":30})")});
  // A DELETE that adds a DV: remove (f1, none), add (f1, dv1).
  WriteCommit(dir_.path(), 1,
              {RemoveLine("f1.parquet"), AddLine("f1.parquet", "{}", R"({"numRecords":30})", dv1)});
  Snapshot s = DeltaTable(dir_.path()).Latest();
  ASSERT_EQ(s.files.size(), 1u);
  ASSERT_TRUE(s.files[0].deletion_vector.has_value());
  EXPECT_EQ(s.files[0].deletion_vector->UniqueId(), "iwi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L");
  ASSERT_EQ(s.tombstones.size(), 1u);
  EXPECT_FALSE(s.tombstones[0].deletion_vector.has_value());
  EXPECT_EQ(s.NumRecords(), 24);
}

TEST_F(LogReplayTest, LatestProtocolMetadataAndTxnWin) {
  WriteBaseTable();
  WriteCommit(dir_.path(), 2,
              {ProtocolLine(1, 3), MetadataLine(kDateRegionSchema, R"(["date"])", R"({"delta.appendOnly":"true"})"),
               R"({"txn":{"appId":"3ba13872-2d47-4e17-86a0-21afd2a22395","version":364475}})"});
  WriteCommit(dir_.path(), 3, {R"({"txn":{"appId":"3ba13872-2d47-4e17-86a0-21afd2a22395","version":364476}})",
                               R"({"someFutureAction":{"x":1}})"});
  Snapshot s = DeltaTable(dir_.path()).Latest();
  EXPECT_EQ(s.protocol.min_writer_version, 3);
  EXPECT_EQ(s.metadata.partition_columns, std::vector<std::string>{"date"});
  EXPECT_EQ(s.metadata.configuration.at("delta.appendOnly"), "true");
  EXPECT_EQ(s.TxnVersion("3ba13872-2d47-4e17-86a0-21afd2a22395"), 364476);
  EXPECT_EQ(s.TxnVersion("other"), std::nullopt);
}

TEST_F(LogReplayTest, MissingCommitInTheMiddleNamesVersionAndFile) {
  WriteBaseTable();
  WriteCommit(dir_.path(), 2, {AddLine("x.parquet")});
  LocalFileSystem().Remove(dir_.Join("_delta_log/00000000000000000001.json"));
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), CorruptDataError, "00000000000000000001.json", "version 1",
                    dir_.path());
  // Version 0 is still readable.
  EXPECT_EQ(DeltaTable(dir_.path()).AtVersion(0).files.size(), 2u);
}

TEST_F(LogReplayTest, CorruptJsonLineNamesFileAndLine) {
  WriteBaseTable();
  WriteCommit(dir_.path(), 2, {AddLine("x.parquet"), R"({"add":{"path":"y.parquet",)"});
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), CorruptDataError, "version 2",
                    "00000000000000000002.json line 2", "not valid JSON");
  WriteCommit(dir_.path(), 2, {R"({"add":{"size":3}})"});
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), CorruptDataError, "version 2", "lacks string field 'path'");
  WriteCommit(dir_.path(), 2, {R"({"metaData":{"id":"x","schemaString":"{not json","partitionColumns":[]}})"});
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), CorruptDataError, "version 2", "schemaString");
}

TEST_F(LogReplayTest, MalformedActionsAreErrorsNotCrashes) {
  WriteBaseTable();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"add":[1,2]})", "must be an object"},
      {R"({"add":{"path":"x","partitionValues":5}})", "partitionValues must be an object"},
      {R"({"add":{"path":"x","size":"big"}})", "field 'size' must be an integer"},
      {R"({"add":{"path":"x","deletionVector":{"storageType":"x","pathOrInlineDv":"a","sizeInBytes":1,"cardinality":1}}})",
       "storageType must be"},
      {R"({"add":{"path":"bad%zzescape"}})", "malformed percent escape"},
      {R"({"protocol":{"minReaderVersion":1}})", "minWriterVersion"},
      {R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":"deletionVectors"}})",
       "'readerFeatures' must be an array"},
      {R"({"txn":{"appId":"a"}})", "lacks integer field 'version'"},
      {R"([1,2,3])", "must be a JSON object"},
      {R"({"metaData":{"id":"x","schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["nope"]}})",
       "partition column 'nope' is not in the schema"},
  };
  for (const auto& [line, message] : cases) {
    WriteCommit(dir_.path(), 2, {line});
    EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), CorruptDataError, "version 2", message);
  }
}

TEST_F(LogReplayTest, UnsupportedReaderFeatureIsRefusedByName) {
  WriteCommit(dir_.path(), 0,
              {ProtocolLine(3, 7, R"(["deletionVectors","variantType"])", R"(["deletionVectors","variantType"])"),
               MetadataLine(SimpleSchema())});
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), NotImplemented, "'variantType'", "version 0", dir_.path());
  WriteCommit(dir_.path(), 1, {ProtocolLine(4, 7)});
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), NotImplemented, "reader version 4");
}

TEST_F(LogReplayTest, SupportedReaderFeaturesAreAccepted) {
  const std::string features =
      R"(["columnMapping","deletionVectors","timestampNtz","v2Checkpoint","vacuumProtocolCheck"])";
  WriteCommit(dir_.path(), 0, {ProtocolLine(3, 7, features, features), MetadataLine(SimpleSchema())});
  Snapshot s = DeltaTable(dir_.path()).Latest();
  EXPECT_TRUE(s.protocol.HasReaderFeature("vacuumProtocolCheck"));
  EXPECT_EQ(s.column_mapping_mode(), ColumnMappingMode::kNone);
}

TEST_F(LogReplayTest, TimeTravelByTimestampUsesFileModificationTimes) {
  WriteBaseTable();
  WriteCommit(dir_.path(), 2, {CommitInfoLine(0, "WRITE"), AddLine("x.parquet")});
  const std::string log = dir_.Join("_delta_log/");
  SetMtime(log + "00000000000000000000.json", 1000000);
  SetMtime(log + "00000000000000000001.json", 2000000);
  SetMtime(log + "00000000000000000002.json", 3000000);
  DeltaTable table(dir_.path());
  EXPECT_EQ(table.AtTimestamp(1000000).version, 0);
  EXPECT_EQ(table.AtTimestamp(2500000).version, 1);
  EXPECT_EQ(table.AtTimestamp(2500000).files.size(), 2u);
  EXPECT_EQ(table.AtTimestamp(9000000).version, 2);
  EXPECT_THROW_WITH(table.AtTimestamp(999999), InvalidArgument, "before the earliest", "version 0");
  auto history = table.History();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[1].timestamp_ms, 2000000);
  EXPECT_EQ(history[1].commit_info->operation, "DELETE");
}

TEST_F(LogReplayTest, TimeTravelByTimestampPrefersInCommitTimestamps) {
  WriteCommit(dir_.path(), 0,
              {CommitInfoLine(5, "CREATE TABLE", 1700000000000), ProtocolLine(1, 7, "", R"(["inCommitTimestamp"])"),
               MetadataLine(SimpleSchema(), "[]", R"({"delta.enableInCommitTimestamps":"true"})")});
  WriteCommit(dir_.path(), 1, {CommitInfoLine(6, "WRITE", 1700000005000), AddLine("a.parquet")});
  WriteCommit(dir_.path(), 2, {CommitInfoLine(7, "WRITE", 1700000009000), AddLine("b.parquet")});
  DeltaTable table(dir_.path());
  EXPECT_EQ(table.AtTimestamp(1700000004999).version, 0);
  EXPECT_EQ(table.AtTimestamp(1700000005000).version, 1);
  EXPECT_EQ(table.AtTimestamp(1700000005000).timestamp_ms, 1700000005000);
  EXPECT_EQ(table.AtTimestamp(1800000000000).files.size(), 2u);
}

TEST_F(LogReplayTest, JsonV2CheckpointPlusLaterCommitsEqualsFullReplay) {
  WriteBaseTable();
  WriteCommit(dir_.path(), 2, {AddLine("date=2017-12-12/region=us/p3.parquet",
                                       R"({"date":"2017-12-12","region":"us"})")});
  WriteCommit(dir_.path(), 3, {RemoveLine("date=2017-12-10/region=us/part-00001.c000.snappy.parquet")});
  const Snapshot full = DeltaTable(dir_.path()).Latest();
  // A UUID-named v2 checkpoint of version 2 (JSON), as in PROTOCOL.md's "V2 Spec" example.
  const Snapshot v2 = DeltaTable(dir_.path()).AtVersion(2);
  std::string text = R"({"checkpointMetadata":{"version":2,"tags":{}}})" "\n" + ProtocolLine(1, 2) + "\n" +
                     MetadataLine(kDateRegionSchema, R"(["date","region"])", R"({"appendOnly":"false"})") + "\n";
  for (const auto& f : v2.files) {
    text += AddLine(f.path, R"({"date":")" + *f.partition_values.at("date") + R"(","region":")" +
                                *f.partition_values.at("region") + R"("})") + "\n";
  }
  LocalFileSystem().WriteAtomically(
      dir_.Join("_delta_log/00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"), text);
  // Without commits 0..1 the table must come from the checkpoint.
  LocalFileSystem().Remove(dir_.Join("_delta_log/00000000000000000000.json"));
  LocalFileSystem().Remove(dir_.Join("_delta_log/00000000000000000001.json"));
  const Snapshot from_checkpoint = DeltaTable(dir_.path()).Latest();
  EXPECT_EQ(from_checkpoint.checkpoint_version, 2);
  EXPECT_EQ(Paths(from_checkpoint), Paths(full));
  EXPECT_EQ(from_checkpoint.metadata.partition_columns, full.metadata.partition_columns);
  // Versions before the checkpoint are gone.
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).AtVersion(1), CorruptDataError, "cannot be reconstructed");
}

TEST_F(LogReplayTest, ListingIgnoresIncompleteMultiPartCheckpointsAndTempFiles) {
  WriteBaseTable();
  auto& fs = LocalFileSystem();
  const std::string log = dir_.Join("_delta_log/");
  fs.WriteAtomically(log + "00000000000000000001.checkpoint.0000000001.0000000003.parquet", "x");
  fs.WriteAtomically(log + "00000000000000000001.checkpoint.0000000003.0000000003.parquet", "x");
  fs.WriteAtomically(log + "00000000000000000000.checkpoint.0000000001.0000000002.parquet", "x");
  fs.WriteAtomically(log + "00000000000000000000.checkpoint.0000000002.0000000002.parquet", "x");
  fs.WriteAtomically(log + "00000000000000000002.json.tmp.123.0", "garbage");
  fs.WriteAtomically(log + "00000000000000000001.crc", "{}");
  internal::LogListing listing = internal::ListLog(fs, dir_.Join("_delta_log"));
  EXPECT_EQ(listing.commits.size(), 2u);
  EXPECT_EQ(listing.checkpoints.count(1), 0u);  // parts 1 and 3 of 3: incomplete, ignored
  ASSERT_EQ(listing.checkpoints.count(0), 1u);
  EXPECT_EQ(listing.checkpoints.at(0).front().paths.size(), 2u);
}

TEST_F(LogReplayTest, NotATableIsAClearError) {
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).Latest(), InvalidArgument, "not a Delta table", dir_.path());
  EXPECT_FALSE(IsDeltaTable(dir_.path()));
  EXPECT_THROW_WITH(DeltaTable(dir_.path()).History(), InvalidArgument, "not a Delta table");
}

TEST(DeltaSchemaTest, ParsesProtocolExampleWithColumnMapping) {
  const std::string schema = R"json({"type":"struct","fields":[
    {"name":"a","type":"integer","nullable":false,"metadata":{}},
    {"name":"b","type":{"type":"struct","fields":[{"name":"d","type":"integer","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}},
    {"name":"c","type":{"type":"array","elementType":"integer","containsNull":false},"nullable":true,"metadata":{}},
    {"name":"e","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"d","type":"integer","nullable":false,
       "metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-a7f4159c-53be-4cb0-b81a-f7e5240cfc49"}}]},"containsNull":true},
     "nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-5f422f40-de70-45b2-88ab-1d5c90e94db1"}},
    {"name":"f","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}},
    {"name":"g","type":"decimal(10,2)","nullable":true,"metadata":{}}]})json";
  DataTypePtr t = ParseSchema(schema, "test");
  ASSERT_EQ(t->fields.size(), 6u);
  EXPECT_FALSE(t->fields[0].nullable);
  EXPECT_EQ(t->fields[1].type->fields[0].name, "d");
  EXPECT_EQ(t->fields[2].type->kind, TypeKind::kArray);
  EXPECT_FALSE(t->fields[2].type->contains_null);
  const StructField& e = t->fields[3];
  EXPECT_EQ(e.PhysicalName(), "col-5f422f40-de70-45b2-88ab-1d5c90e94db1");
  EXPECT_EQ(e.field_id, 4);
  EXPECT_EQ(e.type->element->fields[0].field_id, 5);
  EXPECT_EQ(t->fields[4].type->key->kind, TypeKind::kString);
  EXPECT_EQ(TypeName(*t->fields[5].type), "decimal(10,2)");
  // Round trip.
  DataTypePtr again = ParseSchema(SchemaToJson(*t), "test");
  EXPECT_EQ(SchemaToJson(*again), SchemaToJson(*t));
  EXPECT_THROW_WITH(ParseSchema(R"({"type":"struct","fields":[{"name":"x","type":"uint7"}]})", "table t version 9"),
                    CorruptDataError, "table t version 9", "'x'", "uint7");
}

}  // namespace
}  // namespace lakerun::delta
