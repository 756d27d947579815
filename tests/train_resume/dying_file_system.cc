#include "dying_file_system.h"

#include <signal.h>

namespace lakerun::train_resume {
namespace {

// Appends the first half of the first chunk, then kills the process (the partial temp file stays on disk).
class DyingFile final : public WritableFile {
 public:
  explicit DyingFile(std::unique_ptr<WritableFile> base) : WritableFile(base->path()), base_(std::move(base)) {}
  void Append(std::string_view data) override {
    base_->Append(data.substr(0, data.size() / 2));
    base_->Sync();
    ::raise(SIGKILL);
  }
  void Sync() override { base_->Sync(); }
  void Close() override { base_->Close(); }
  uint64_t Position() const override { return base_->Position(); }

 private:
  std::unique_ptr<WritableFile> base_;
};

}  // namespace

class DieWritingLast::Fs final : public FileSystem {
 public:
  explicit Fs(int64_t step) : step_(step) {}
  const train::TrainerState* state = nullptr;

  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) override { return base_.OpenForRead(path); }
  std::unique_ptr<WritableFile> OpenForWrite(const std::string& path) override {
    auto file = base_.OpenForWrite(path);
    // WriteAtomically writes last.ckpt through a temp file named "last.ckpt.tmp.<pid>.<n>" beside it.
    if (state != nullptr && state->global_step == step_ && BaseName(path).rfind("last.ckpt.tmp.", 0) == 0) {
      return std::make_unique<DyingFile>(std::move(file));
    }
    return file;
  }
  std::unique_ptr<WritableFile> OpenForAppend(const std::string& path) override { return base_.OpenForAppend(path); }
  bool CreateExclusive(const std::string& path, std::string_view contents) override {
    return base_.CreateExclusive(path, contents);
  }
  bool Exists(const std::string& path) override { return base_.Exists(path); }
  std::optional<FileInfo> Stat(const std::string& path) override { return base_.Stat(path); }
  std::vector<FileInfo> List(const std::string& dir) override { return base_.List(dir); }
  void CreateDirs(const std::string& path) override { base_.CreateDirs(path); }
  void Remove(const std::string& path) override { base_.Remove(path); }
  void RemoveAll(const std::string& path) override { base_.RemoveAll(path); }
  void Rename(const std::string& from, const std::string& to) override { base_.Rename(from, to); }

 private:
  FileSystem& base_ = LocalFileSystem();
  int64_t step_;
};

DieWritingLast::DieWritingLast(int64_t step) : fs_(std::make_unique<Fs>(step)) {}
DieWritingLast::~DieWritingLast() = default;

void DieWritingLast::Setup(train::TrainerState& state) {
  fs_->state = &state;
  state.fs = fs_.get();
}

}  // namespace lakerun::train_resume
