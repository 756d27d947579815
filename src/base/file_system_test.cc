#include "lakerun/base/file_system.h"
#include "lakerun/base/stale_temporaries.h"

#include <sys/wait.h>
#include <unistd.h>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun {
namespace {

// The same contract must hold on every implementation.
class FileSystemContractTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      fs_ = &LocalFileSystem();
      root_ = temp_.path();
    } else {
      mem_ = NewMemoryFileSystem();
      fs_ = mem_.get();
      root_ = "/mem";
      fs_->CreateDirs(root_);
    }
  }
  std::string P(const std::string& name) { return JoinPath(root_, name); }

  testing::TempDir temp_;
  std::unique_ptr<FileSystem> mem_;
  FileSystem* fs_ = nullptr;
  std::string root_;
};

TEST_P(FileSystemContractTest, WriteThenReadBack) {
  auto file = fs_->OpenForWrite(P("a.bin"));
  file->Append("hello ");
  file->Append("world");
  EXPECT_EQ(file->Position(), 11u);
  file->Close();
  auto in = fs_->OpenForRead(P("a.bin"));
  EXPECT_EQ(in->Size(), 11u);
  EXPECT_EQ(in->ReadAt(6, 5), "world");
  EXPECT_EQ(in->ReadAll(), "hello world");
}

TEST_P(FileSystemContractTest, ReadPastEndNamesPathAndOffset) {
  fs_->WriteAtomically(P("short"), "abc");
  auto in = fs_->OpenForRead(P("short"));
  EXPECT_THROW_WITH(in->ReadAt(2, 5), CorruptDataError, "short", "offset 2", "3 bytes");
}

TEST_P(FileSystemContractTest, MissingFileIsIoErrorNamingIt) {
  EXPECT_THROW_WITH(fs_->OpenForRead(P("nope.parquet")), IoError, "nope.parquet");
  EXPECT_FALSE(fs_->Exists(P("nope.parquet")));
  EXPECT_FALSE(fs_->Stat(P("nope.parquet")).has_value());
}

TEST_P(FileSystemContractTest, CreateExclusiveIsPutIfAbsent) {
  EXPECT_TRUE(fs_->CreateExclusive(P("00000.json"), "first"));
  EXPECT_FALSE(fs_->CreateExclusive(P("00000.json"), "second"));
  EXPECT_EQ(fs_->ReadFile(P("00000.json")), "first");
}

TEST_P(FileSystemContractTest, ListIsSortedAndMarksDirectories) {
  fs_->CreateDirs(P("d/sub"));
  fs_->WriteAtomically(P("d/b.txt"), "bb");
  fs_->WriteAtomically(P("d/a.txt"), "a");
  auto entries = fs_->List(P("d"));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "a.txt");
  EXPECT_EQ(entries[1].name, "b.txt");
  EXPECT_EQ(entries[1].size, 2u);
  EXPECT_EQ(entries[2].name, "sub");
  EXPECT_TRUE(entries[2].is_directory);
}

TEST_P(FileSystemContractTest, RenameReplacesAndRemoveAllClears) {
  fs_->WriteAtomically(P("x"), "new");
  fs_->WriteAtomically(P("y"), "old");
  fs_->Rename(P("x"), P("y"));
  EXPECT_EQ(fs_->ReadFile(P("y")), "new");
  EXPECT_FALSE(fs_->Exists(P("x")));
  fs_->CreateDirs(P("tree/a/b"));
  fs_->WriteAtomically(P("tree/a/b/f"), "1");
  fs_->RemoveAll(P("tree"));
  EXPECT_FALSE(fs_->Exists(P("tree")));
}

TEST_P(FileSystemContractTest, AppendKeepsExistingBytes) {
  fs_->WriteAtomically(P("log"), "1\n");
  auto out = fs_->OpenForAppend(P("log"));
  out->Append("2\n");
  out->Close();
  EXPECT_EQ(fs_->ReadFile(P("log")), "1\n2\n");
}

INSTANTIATE_TEST_SUITE_P(LocalAndMemory, FileSystemContractTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Local" : "Memory"; });

TEST(LocalFileSystemTest, CreateExclusiveHasOneWinnerAcrossProcesses) {
  testing::TempDir dir;
  const std::string target = dir.Join("00000000000000000001.json");
  constexpr int kProcs = 6;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      const bool won = LocalFileSystem().CreateExclusive(target, "writer " + std::to_string(i));
      ::_exit(won ? 0 : 1);
    }
    pids.push_back(pid);
  }
  int winners = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ++winners;
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(LocalFileSystem().ReadFile(target).rfind("writer ", 0), 0u);
  // No temp files are left behind.
  EXPECT_EQ(LocalFileSystem().List(dir.path()).size(), 1u);
}

TEST(PathTest, JoinDirBase) {
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "/abs"), "/abs");
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/c"), "/");
  EXPECT_EQ(BaseName("a/b/c.parquet"), "c.parquet");
  EXPECT_EQ(BaseName("a/b/"), "b");
}

TEST(StaleTemporariesTest, NamesOfWriteAtomicallyAndCreateExclusiveTemporaries) {
  const std::optional<TemporaryName> atomic = ParseTemporaryName("epoch=3-step=9.ckpt.tmp.4242.17");
  ASSERT_TRUE(atomic.has_value());
  EXPECT_EQ(atomic->target, "epoch=3-step=9.ckpt");
  EXPECT_EQ(atomic->pid, 4242);
  const std::optional<TemporaryName> excl = ParseTemporaryName("00000000000000000003.json.excl.77.12345");
  ASSERT_TRUE(excl.has_value());
  EXPECT_EQ(excl->target, "00000000000000000003.json");
  EXPECT_EQ(excl->pid, 77);
  for (const char* other : {"last.ckpt", "last.ckpt.tmp.12x.0", "last.ckpt.tmp.12", ".tmp.12.0", "a.tmp.1234567890.0",
                            "x.json"}) {
    EXPECT_FALSE(ParseTemporaryName(other).has_value()) << other;
  }
  EXPECT_TRUE(TemporaryMayBeOwned(::getpid(), 0));
  EXPECT_FALSE(TemporaryMayBeOwned(0, 0));
}

}  // namespace
}  // namespace lakerun
