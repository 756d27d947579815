// How OpenTable opens a table's files: at the size its listing or Delta log gives (no Stat or HEAD per file, which
// on an object store is a round trip each), and with a clear error when that size is no longer the file's.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

// A file that reports the size it was opened at, as an object store's file does, and reads the real one.
class SizedFile final : public RandomAccessFile {
 public:
  SizedFile(std::unique_ptr<RandomAccessFile> base, uint64_t size)
      : RandomAccessFile(base->path()), base_(std::move(base)), size_(size) {}
  uint64_t Size() const override { return size_; }
  void ReadAt(uint64_t offset, size_t n, void* out) const override { base_->ReadAt(offset, n, out); }

 private:
  std::unique_ptr<RandomAccessFile> base_;
  uint64_t size_;
};

// The local file system, recording how files are opened and stat'ed; its listings can be told to lie about a size.
class RecordingFileSystem final : public FileSystem {
 public:
  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) override {
    Record(&opened_unsized, path);
    return base_.OpenForRead(path);
  }
  std::unique_ptr<RandomAccessFile> OpenForReadOfSize(const std::string& path, uint64_t size) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      opened_at[path] = size;
    }
    return std::make_unique<SizedFile>(base_.OpenForRead(path), size);
  }
  std::unique_ptr<WritableFile> OpenForWrite(const std::string& path) override { return base_.OpenForWrite(path); }
  std::unique_ptr<WritableFile> OpenForAppend(const std::string& path) override { return base_.OpenForAppend(path); }
  bool CreateExclusive(const std::string& path, std::string_view contents) override {
    return base_.CreateExclusive(path, contents);
  }
  bool Exists(const std::string& path) override { return base_.Exists(path); }
  std::optional<FileInfo> Stat(const std::string& path) override {
    Record(&stat_paths, path);
    return base_.Stat(path);
  }
  std::vector<FileInfo> List(const std::string& dir) override {
    std::vector<FileInfo> entries = base_.List(dir);
    for (FileInfo& e : entries) {
      if (e.name == misreported_name) e.size += 10;
    }
    return entries;
  }
  void CreateDirs(const std::string& path) override { base_.CreateDirs(path); }
  void Remove(const std::string& path) override { base_.Remove(path); }
  void RemoveAll(const std::string& path) override { base_.RemoveAll(path); }
  void Rename(const std::string& from, const std::string& to) override { base_.Rename(from, to); }

  std::set<std::string> ParquetStats() {
    std::set<std::string> out;
    for (const std::string& p : stat_paths) {
      if (p.size() > 8 && p.compare(p.size() - 8, 8, ".parquet") == 0) out.insert(p);
    }
    return out;
  }

  std::set<std::string> opened_unsized;
  std::map<std::string, uint64_t> opened_at;
  std::set<std::string> stat_paths;
  std::string misreported_name;  ///< entries with this name are listed 10 bytes longer than they are

 private:
  void Record(std::set<std::string>* into, const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    into->insert(path);
  }

  FileSystem& base_ = LocalFileSystem();
  std::mutex mu_;
};

void WriteIds(const std::string& path, int64_t first, int64_t n) {
  pq::ParquetWriter writer(LocalFileSystem(), path, pq::Schema::FromFields({pq::Leaf("id", pq::PhysicalType::kInt64)}));
  std::vector<int64_t> ids;
  for (int64_t i = first; i < first + n; ++i) ids.push_back(i);
  writer.WriteRowGroup({pq::ColumnData::Int64s(ids)});
  writer.Close();
}

TEST(TableOpenTest, AFolderTableOpensEveryFileAtItsListedSizeAndStatsNone) {
  testing::TempDir dir;
  WriteIds(dir.Join("part-0.parquet"), 0, 10);
  WriteIds(dir.Join("part-1.parquet"), 10, 20);
  LocalFileSystem().CreateDirs(dir.Join("sub"));
  WriteIds(dir.Join("sub/part-2.parquet"), 30, 5);
  RecordingFileSystem fs;
  auto source = OpenTable(dir.path(), {}, fs);
  EXPECT_EQ(source->num_rows(), 35u);
  EXPECT_TRUE(fs.opened_unsized.empty());
  ASSERT_EQ(fs.opened_at.size(), 3u);
  for (const auto& [path, size] : fs.opened_at) EXPECT_EQ(size, LocalFileSystem().Stat(path)->size) << path;
  EXPECT_TRUE(fs.ParquetStats().empty());
}

TEST(TableOpenTest, ASingleFileOpensAtTheSizeItsStatGave) {
  testing::TempDir dir;
  WriteIds(dir.Join("one.parquet"), 0, 10);
  RecordingFileSystem fs;
  EXPECT_EQ(OpenTable(dir.Join("one.parquet"), {}, fs)->num_rows(), 10u);
  EXPECT_TRUE(fs.opened_unsized.empty());
  EXPECT_EQ(fs.opened_at.at(dir.Join("one.parquet")), LocalFileSystem().Stat(dir.Join("one.parquet"))->size);
}

TEST(TableOpenTest, ADeltaTableOpensItsFilesAtTheSizesItsLogRecords) {
  testing::TempDir dir;
  const std::string root = dir.Join("table");
  auto schema = delta::MakeStruct({delta::StructField{"id", delta::PrimitiveType("long"), false}});
  delta::DeltaTable table = delta::CreateTable(root, schema, {});
  for (int64_t part = 0; part < 3; ++part) {
    delta::AppendRows(table, {pq::Value::Struct({{"id", pq::Value::Int(part)}})});
  }
  RecordingFileSystem fs;
  EXPECT_EQ(OpenTable(root, {}, fs)->num_rows(), 3u);
  size_t data_files = 0;
  for (const auto& [path, size] : fs.opened_at) {
    EXPECT_EQ(size, LocalFileSystem().Stat(path)->size) << path;
    data_files += path.size() > 8 && path.compare(path.size() - 8, 8, ".parquet") == 0;
  }
  EXPECT_EQ(data_files, 3u);
  for (const std::string& p : fs.opened_unsized) EXPECT_EQ(p.find(".parquet"), std::string::npos) << p;
  EXPECT_TRUE(fs.ParquetStats().empty());
}

TEST(TableOpenTest, AFileWhoseSizeChangedSinceItWasListedIsNamedWithBothSizes) {
  testing::TempDir dir;
  WriteIds(dir.Join("part-0.parquet"), 0, 10);
  WriteIds(dir.Join("part-1.parquet"), 10, 10);
  const uint64_t size = LocalFileSystem().Stat(dir.Join("part-1.parquet"))->size;
  RecordingFileSystem fs;
  fs.misreported_name = "part-1.parquet";
  EXPECT_THROW_WITH(OpenTable(dir.path(), {}, fs), IoError,
                    StrCat(dir.Join("part-1.parquet"), ": listed at ", size + 10, " bytes, but it holds ", size,
                           " (it changed after it was listed, or a Delta log records a wrong size)"));
}

}  // namespace
}  // namespace lakerun::data
