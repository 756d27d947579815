// Checkpoints: classic every N commits, multi-part (and incomplete sets ignored), v2 with a sidecar. In each case
// the checkpoint plus the later commits must give exactly the state of a full replay.
#include <gtest/gtest.h>

#include "format/delta/log_files.h"
#include "lakerun/format/delta/checkpoint.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

DataTypePtr Schema() {
  return ParseSchema(R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},
    {"name":"part","type":"integer","nullable":true,"metadata":{}}]})",
                     "test");
}

AddFile FakeAdd(int i) {
  AddFile a;
  a.path = "part=" + std::to_string(i % 3) + "/f%20" + std::to_string(i) + ".parquet";
  a.partition_values["part"] = std::to_string(i % 3);
  a.size = 100 + i;
  a.modification_time = 1700000000000 + i;
  a.stats = R"({"numRecords":)" + std::to_string(i) + "}";
  if (i % 4 == 0) a.tags["k"] = "v" + std::to_string(i);
  return a;
}

CheckpointOptions Parts(int parts) {
  CheckpointOptions options;
  options.parts = parts;
  return options;
}

CreateTableOptions PartitionedByPart() {
  CreateTableOptions options;
  options.partition_columns = {"part"};
  return options;
}

// Builds a table with `commits` commits after creation: adds, some removes, a txn.
DeltaTable BuildTable(const std::string& path, int commits, Protocol protocol = {}, int interval = 0) {
  CreateTableOptions options;
  options.partition_columns = {"part"};
  options.protocol = protocol;
  DeltaTable table = CreateTable(path, Schema(), options);
  CommitOptions copts;
  copts.checkpoint_interval = interval;
  for (int i = 1; i <= commits; ++i) {
    ActionSet actions;
    actions.adds.push_back(FakeAdd(i));
    if (i % 5 == 0) actions.removes.push_back(RemoveOf(FakeAdd(i - 2), 1700000000000 + i));
    copts.txn = Txn{"app", i, std::nullopt};
    Commit(table, actions, copts);
  }
  return table;
}

void ExpectSameState(const Snapshot& a, const Snapshot& b) {
  EXPECT_EQ(a.version, b.version);
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].path, b.files[i].path);
    EXPECT_EQ(a.files[i].partition_values, b.files[i].partition_values);
    EXPECT_EQ(a.files[i].size, b.files[i].size);
    EXPECT_EQ(a.files[i].stats, b.files[i].stats);
    EXPECT_EQ(a.files[i].tags, b.files[i].tags);
  }
  ASSERT_EQ(a.tombstones.size(), b.tombstones.size());
  for (size_t i = 0; i < a.tombstones.size(); ++i) EXPECT_EQ(a.tombstones[i].path, b.tombstones[i].path);
  EXPECT_EQ(a.app_versions, b.app_versions);
  EXPECT_EQ(a.metadata.schema_string, b.metadata.schema_string);
  EXPECT_EQ(a.metadata.partition_columns, b.metadata.partition_columns);
  EXPECT_EQ(a.metadata.id, b.metadata.id);
  EXPECT_EQ(a.protocol.min_reader_version, b.protocol.min_reader_version);
  EXPECT_EQ(a.protocol.reader_features, b.protocol.reader_features);
}

// Replays from the commits alone, hiding checkpoints by renaming them.
Snapshot FullReplay(const DeltaTable& table, int64_t version) {
  auto& fs = table.fs();
  std::vector<std::pair<std::string, std::string>> moved;
  for (const auto& info : fs.List(table.log_path())) {
    if (info.name.find(".checkpoint.") != std::string::npos) {
      const std::string from = JoinPath(table.log_path(), info.name);
      moved.emplace_back(from, JoinPath(table.log_path(), "hidden-" + info.name));
      fs.Rename(moved.back().first, moved.back().second);
    }
  }
  Snapshot s = table.AtVersion(version);
  for (const auto& [from, to] : moved) fs.Rename(to, from);
  EXPECT_FALSE(s.checkpoint_version.has_value());
  return s;
}

TEST(DeltaCheckpointTest, EveryTenCommitsAndLaterCommitsEqualFullReplay) {
  lakerun::testing::TempDir dir;
  DeltaTable table = BuildTable(dir.path(), 23, {}, /*interval=*/10);
  auto& fs = LocalFileSystem();
  EXPECT_TRUE(fs.Exists(dir.Join("_delta_log/00000000000000000010.checkpoint.parquet")));
  EXPECT_TRUE(fs.Exists(dir.Join("_delta_log/00000000000000000020.checkpoint.parquet")));
  EXPECT_FALSE(fs.Exists(dir.Join("_delta_log/00000000000000000021.checkpoint.parquet")));
  auto last = ReadLastCheckpoint(table);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->version, 20);
  Snapshot latest = table.Latest();
  EXPECT_EQ(latest.checkpoint_version, 20);
  ExpectSameState(latest, FullReplay(table, 23));
  // Time travel to a version between checkpoints uses the older checkpoint.
  Snapshot v15 = table.AtVersion(15);
  EXPECT_EQ(v15.checkpoint_version, 10);
  ExpectSameState(v15, FullReplay(table, 15));
  // With the commits before the checkpoint gone, the checkpoint alone carries the state.
  for (int v = 0; v < 20; ++v) fs.Remove(JoinPath(table.log_path(), CommitFileName(v)));
  ExpectSameState(table.Latest(), latest);
  EXPECT_THROW_WITH(table.AtVersion(15), CorruptDataError, "cannot be reconstructed");
}

TEST(DeltaCheckpointTest, MultiPartCheckpointAndIncompleteSetIgnored) {
  lakerun::testing::TempDir dir;
  DeltaTable table = BuildTable(dir.path(), 12);
  WriteCheckpoint(table, table.AtVersion(9), Parts(3));
  internal::LogListing listing = internal::ListLog(LocalFileSystem(), table.log_path());
  ASSERT_EQ(listing.checkpoints.count(9), 1u);
  EXPECT_EQ(listing.checkpoints.at(9).front().paths.size(), 3u);
  Snapshot latest = table.Latest();
  EXPECT_EQ(latest.checkpoint_version, 9);
  ExpectSameState(latest, FullReplay(table, 12));
  EXPECT_EQ(ReadLastCheckpoint(table)->parts, 3);
  // Lose part 2: the set is incomplete and must be ignored; replay falls back to the commits.
  LocalFileSystem().Remove(
      dir.Join("_delta_log/00000000000000000009.checkpoint.0000000002.0000000003.parquet"));
  Snapshot without = table.Latest();
  EXPECT_FALSE(without.checkpoint_version.has_value());
  ExpectSameState(without, latest);
}

// Checkpoints whose row groups hold far more actions than one read batch: every action must come back.
TEST(DeltaCheckpointTest, LargeCheckpointsKeepEveryAction) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateTable(dir.path(), Schema(), PartitionedByPart());
  ActionSet actions;
  for (int i = 1; i <= 10000; ++i) actions.adds.push_back(FakeAdd(i));
  Commit(table, actions);
  ActionSet removes;
  for (int i = 1; i <= 10000; i += 100) removes.removes.push_back(RemoveOf(FakeAdd(i), 1700000000000));
  Commit(table, removes);
  const Snapshot replayed = table.Latest();
  ASSERT_EQ(replayed.files.size(), 9900u);
  ASSERT_EQ(replayed.tombstones.size(), 100u);
  WriteCheckpoint(table, replayed);
  Snapshot classic = table.Latest();
  EXPECT_EQ(classic.checkpoint_version, 2);
  ExpectSameState(classic, replayed);
  LocalFileSystem().Remove(dir.Join("_delta_log/00000000000000000002.checkpoint.parquet"));
  WriteCheckpoint(table, replayed, Parts(3));
  Snapshot multi_part = table.Latest();
  EXPECT_EQ(multi_part.checkpoint_version, 2);
  ExpectSameState(multi_part, replayed);
}

// Every field of add and remove survives a checkpoint: deletion vectors, row ids, null partition values, tags, and
// removes with and without extended file metadata.
TEST(DeltaCheckpointTest, FileActionFieldsRoundTrip) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateTable(dir.path(), Schema(), PartitionedByPart());
  ActionSet actions;
  AddFile with_dv = FakeAdd(1);
  with_dv.deletion_vector = DeletionVectorDescriptor{'u', "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6};
  with_dv.base_row_id = 7;
  with_dv.default_row_commit_version = 1;
  with_dv.data_change = false;
  AddFile null_part = FakeAdd(2);
  null_part.partition_values["part"] = std::nullopt;
  null_part.stats.reset();
  actions.adds = {with_dv, null_part, FakeAdd(4), FakeAdd(5)};
  Commit(table, actions);
  ActionSet removes;
  removes.removes.push_back(RemoveOf(FakeAdd(4), 1700000000001));
  RemoveFile bare;
  bare.path = FakeAdd(5).path;
  bare.data_change = false;
  removes.removes.push_back(bare);
  Commit(table, removes);
  const Snapshot replayed = table.Latest();
  WriteCheckpoint(table, replayed, Parts(2));
  const Snapshot s = table.Latest();
  ASSERT_EQ(s.checkpoint_version, 2);
  ExpectSameState(s, replayed);
  ASSERT_EQ(s.files.size(), 2u);
  for (size_t i = 0; i < s.files.size(); ++i) {
    const AddFile& a = s.files[i];
    const AddFile& b = replayed.files[i];
    EXPECT_EQ(a.data_change, b.data_change);
    EXPECT_EQ(a.base_row_id, b.base_row_id);
    EXPECT_EQ(a.default_row_commit_version, b.default_row_commit_version);
    EXPECT_EQ(a.modification_time, b.modification_time);
    ASSERT_EQ(a.deletion_vector.has_value(), b.deletion_vector.has_value());
    if (a.deletion_vector) {
      EXPECT_EQ(a.deletion_vector->UniqueId(), b.deletion_vector->UniqueId());
      EXPECT_EQ(a.deletion_vector->size_in_bytes, 40);
      EXPECT_EQ(a.deletion_vector->cardinality, 6);
    }
  }
  EXPECT_EQ(s.files[1].partition_values.at("part"), std::nullopt);
  EXPECT_EQ(s.files[1].stats, std::nullopt);
  ASSERT_EQ(s.tombstones.size(), 2u);
  for (size_t i = 0; i < s.tombstones.size(); ++i) {
    const RemoveFile& a = s.tombstones[i];
    const RemoveFile& b = replayed.tombstones[i];
    EXPECT_EQ(a.partition_values, b.partition_values);
    EXPECT_EQ(a.extended_file_metadata, b.extended_file_metadata);
    EXPECT_EQ(a.size, b.size);
    EXPECT_EQ(a.deletion_timestamp, b.deletion_timestamp);
    EXPECT_EQ(a.data_change, b.data_change);
  }
}

TEST(DeltaCheckpointTest, V2CheckpointWithSidecar) {
  lakerun::testing::TempDir dir;
  Protocol v2;
  v2.min_reader_version = 3;
  v2.min_writer_version = 7;
  v2.reader_features = std::vector<std::string>{"v2Checkpoint"};
  v2.writer_features = std::vector<std::string>{"v2Checkpoint"};
  DeltaTable table = BuildTable(dir.path(), 8, v2);
  CheckpointOptions with_sidecar;
  with_sidecar.v2_with_sidecar = true;
  WriteCheckpoint(table, table.AtVersion(6), with_sidecar);
  EXPECT_EQ(LocalFileSystem().List(dir.Join("_delta_log/_sidecars")).size(), 1u);
  Snapshot latest = table.Latest();
  EXPECT_EQ(latest.checkpoint_version, 6);
  ExpectSameState(latest, FullReplay(table, 8));
  EXPECT_THROW_WITH(WriteCheckpoint(table, latest, Parts(2)), InvalidArgument, "multi-part", "v2Checkpoint");
}

TEST(DeltaCheckpointTest, CheckpointOfRealDataReadsBack) {
  lakerun::testing::TempDir dir;
  CreateTableOptions options;
  options.partition_columns = {"part"};
  DeltaTable table = CreateTable(dir.path(), Schema(), options);
  WriteOptions wopts;
  wopts.commit.checkpoint_interval = 2;
  for (int c = 0; c < 3; ++c) {
    std::vector<Value> rows;
    for (int i = 0; i < 4; ++i) {
      rows.push_back(Value::Struct({{"id", Value::Int(c * 10 + i)}, {"part", Value::Int(i % 2)}}));
    }
    AppendRows(table, rows, wopts);
  }
  Snapshot s = table.Latest();
  EXPECT_EQ(s.checkpoint_version, 2);
  EXPECT_EQ(TableScan(table, s).ReadAll().size(), 12u);
  ScanOptions only;
  only.filter = Filter::Parse("part = 1");
  for (const auto& row : TableScan(table, s, only).ReadAll()) EXPECT_EQ(row.Field("part")->as_int(), 1);
}

TEST(DeltaCheckpointTest, CorruptCheckpointNamesTheFile) {
  lakerun::testing::TempDir dir;
  DeltaTable table = BuildTable(dir.path(), 3);
  WriteCheckpoint(table, table.AtVersion(2));
  const std::string cp = dir.Join("_delta_log/00000000000000000002.checkpoint.parquet");
  std::string bytes = LocalFileSystem().ReadFile(cp);
  LocalFileSystem().WriteAtomically(cp, bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW_WITH(table.Latest(), CorruptDataError, "version 2", "00000000000000000002.checkpoint.parquet");
}

}  // namespace
}  // namespace lakerun::delta
