// Concurrent writers: processes racing to append end with contiguous versions and every commit present; conflicts
// and exhausted retries are reported.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "format/delta/log_files.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::delta {
namespace {

DataTypePtr Schema() {
  return ParseSchema(R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})",
                     "test");
}

AddFile NamedAdd(const std::string& name) {
  AddFile a;
  a.path = name;
  a.size = 1;
  a.stats = R"({"numRecords":1})";
  return a;
}

// Waits for every child up to `deadline`; kills and reaps the ones still running. Returns their exit codes.
std::vector<int> WaitAll(const std::vector<pid_t>& pids, std::chrono::seconds timeout) {
  std::vector<int> codes(pids.size(), -1);
  std::vector<bool> done(pids.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t remaining = pids.size();
  while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        done[i] = true;
        --remaining;
        codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    if (!done[i]) {
      ::kill(pids[i], SIGKILL);
      int status = 0;
      ::waitpid(pids[i], &status, 0);
    }
  }
  return codes;
}

TEST(DeltaConcurrencyTest, ForkedWritersEndWithContiguousVersionsAndEveryCommit) {
  lakerun::testing::TempDir dir;
  CreateTable(dir.path(), Schema());
  constexpr int kWriters = 4;
  constexpr int kCommits = 50;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        DeltaTable table(dir.path());
        for (int i = 0; i < kCommits; ++i) {
          ActionSet actions;
          actions.adds.push_back(NamedAdd("w" + std::to_string(w) + "-" + std::to_string(i) + ".parquet"));
          CommitOptions options;
          options.txn = Txn{"writer-" + std::to_string(w), i, std::nullopt};
          Commit(table, actions, options);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        code = 1;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  const std::vector<int> codes = WaitAll(pids, std::chrono::seconds(100));
  for (int w = 0; w < kWriters; ++w) EXPECT_EQ(codes[static_cast<size_t>(w)], 0) << "writer " << w;

  DeltaTable table(dir.path());
  internal::LogListing log = internal::ListLog(LocalFileSystem(), table.log_path());
  ASSERT_EQ(log.commits.size(), static_cast<size_t>(kWriters * kCommits + 1));
  int64_t expected = 0;
  for (const auto& [version, path] : log.commits) EXPECT_EQ(version, expected++);  // contiguous, no gaps
  Snapshot s = table.Latest();
  EXPECT_EQ(s.version, kWriters * kCommits);
  std::set<std::string> paths;
  for (const auto& f : s.files) paths.insert(f.path);
  EXPECT_EQ(paths.size(), static_cast<size_t>(kWriters * kCommits));
  for (int w = 0; w < kWriters; ++w) {
    EXPECT_EQ(s.TxnVersion("writer-" + std::to_string(w)), kCommits - 1);
    for (int i = 0; i < kCommits; ++i) {
      EXPECT_TRUE(paths.count("w" + std::to_string(w) + "-" + std::to_string(i) + ".parquet")) << w << " " << i;
    }
  }
  // Checkpoints written concurrently are complete and agree with the log.
  EXPECT_TRUE(s.checkpoint_version.has_value());
  EXPECT_EQ(s.NumRecords(), kWriters * kCommits);
}

TEST(DeltaConcurrencyTest, ConcurrentMetadataChangeIsAConflict) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateTable(dir.path(), Schema());
  const int64_t read_version = table.Latest().version;
  // Someone else changes the metadata.
  ActionSet change;
  change.metadata = table.Latest().metadata;
  change.metadata->configuration["delta.appendOnly"] = "false";
  Commit(table, change, {});
  ActionSet mine;
  mine.adds.push_back(NamedAdd("mine.parquet"));
  EXPECT_THROW_WITH(Commit(table, mine, {}, read_version), ConcurrentModificationError, "commit 1",
                    "changed the table metadata");
  // A concurrent blind append is no conflict: the commit lands at the next free version.
  ActionSet other;
  other.adds.push_back(NamedAdd("other.parquet"));
  Commit(table, other, {});
  EXPECT_EQ(Commit(table, mine, {}, /*read_version=*/1).version, 3);
}

TEST(DeltaConcurrencyTest, ConcurrentRemoveOfTheSameFileIsAConflict) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateTable(dir.path(), Schema());
  ActionSet add;
  add.adds.push_back(NamedAdd("f.parquet"));
  Commit(table, add, {});
  ActionSet del;
  del.removes.push_back(RemoveOf(NamedAdd("f.parquet"), 1));
  Commit(table, del, {});
  EXPECT_THROW_WITH(Commit(table, del, {}, /*read_version=*/1), ConcurrentModificationError,
                    "concurrently removed file f.parquet");
}

TEST(DeltaConcurrencyTest, RetriesAreBounded) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateTable(dir.path(), Schema());
  ActionSet a;
  a.adds.push_back(NamedAdd("a.parquet"));
  Commit(table, a, {});
  CommitOptions once;
  once.max_attempts = 1;
  EXPECT_THROW_WITH(Commit(table, a, once, /*read_version=*/0), ConcurrentModificationError,
                    "gave up committing after 1 attempts");
  once.max_attempts = 0;
  EXPECT_THROW_WITH(Commit(table, a, once), InvalidArgument, "max_attempts");
}

// A writer killed between writing its commit's temporary and linking it into place leaves `<version>.json.excl.<pid>.
// <n>` in the log; the next commit removes the temporaries of dead writers and keeps those of live ones.
TEST(DeltaConcurrencyTest, TemporariesOfKilledWritersAreRemovedByTheNextCommit) {
  lakerun::testing::TempDir dir;
  DeltaTable table = CreateTable(dir.path(), Schema());
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const std::string dead = std::to_string(child), me = std::to_string(::getpid());
  const std::string stale = "00000000000000000001.json.excl." + dead + ".7";
  const std::string stale_checkpoint = "_last_checkpoint.tmp." + dead + ".0";
  const std::string live = "00000000000000000002.json.excl." + me + ".9";
  for (const auto& name : {stale, stale_checkpoint, live}) {
    LocalFileSystem().WriteAtomically(JoinPath(table.log_path(), name), "{\"add\":");
  }
  ActionSet a;
  a.adds.push_back(NamedAdd("a.parquet"));
  EXPECT_EQ(Commit(table, a, {}).version, 1);
  std::set<std::string> left;
  for (const auto& f : LocalFileSystem().List(table.log_path())) left.insert(f.name);
  EXPECT_EQ(left.count(stale), 0u);
  EXPECT_EQ(left.count(stale_checkpoint), 0u);
  EXPECT_EQ(left.count(live), 1u);
  EXPECT_EQ(table.Latest().files.size(), 1u);
}

}  // namespace
}  // namespace lakerun::delta
