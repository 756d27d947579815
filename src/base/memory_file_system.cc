// An in-memory FileSystem for tests. Directories are implicit parents of files plus explicitly created ones.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun {
namespace {

std::string Normalize(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

struct MemState {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<std::string>> files;
  std::set<std::string> dirs;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  MemRandomAccessFile(std::string path, std::shared_ptr<const std::string> data)
      : RandomAccessFile(std::move(path)), data_(std::move(data)) {}
  uint64_t Size() const override { return data_->size(); }
  void ReadAt(uint64_t offset, size_t n, void* out) const override {
    if (offset > data_->size() || n > data_->size() - offset) {
      LAKERUN_THROW(CorruptDataError, path(), ": read of ", n, " bytes at offset ", offset,
                    " goes past the end of the file (", data_->size(), " bytes)");
    }
    std::memcpy(out, data_->data() + offset, n);
  }

 private:
  std::shared_ptr<const std::string> data_;  // a snapshot taken at open time
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::string path, std::shared_ptr<MemState> state, std::shared_ptr<std::string> data)
      : WritableFile(std::move(path)), state_(std::move(state)), data_(std::move(data)) {}
  void Append(std::string_view bytes) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    data_->append(bytes);
  }
  void Sync() override {}
  void Close() override {}
  uint64_t Position() const override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return data_->size();
  }

 private:
  std::shared_ptr<MemState> state_;
  std::shared_ptr<std::string> data_;
};

class MemoryFileSystem final : public FileSystem {
 public:
  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->files.find(path);
    if (it == state_->files.end()) LAKERUN_THROW(IoError, "cannot open ", path, ": No such file or directory");
    return std::make_unique<MemRandomAccessFile>(path, std::make_shared<const std::string>(*it->second));
  }

  std::unique_ptr<WritableFile> OpenForWrite(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    auto data = std::make_shared<std::string>();
    state_->files[path] = data;
    return std::make_unique<MemWritableFile>(path, state_, data);
  }

  std::unique_ptr<WritableFile> OpenForAppend(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    auto& slot = state_->files[path];
    if (!slot) slot = std::make_shared<std::string>();
    return std::make_unique<MemWritableFile>(path, state_, slot);
  }

  bool CreateExclusive(const std::string& raw, std::string_view contents) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->files.count(path) || state_->dirs.count(path)) return false;
    state_->files[path] = std::make_shared<std::string>(contents);
    return true;
  }

  bool Exists(const std::string& raw) override { return Stat(raw).has_value(); }

  std::optional<FileInfo> Stat(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    FileInfo info;
    info.name = BaseName(path);
    auto it = state_->files.find(path);
    if (it != state_->files.end()) {
      info.size = it->second->size();
      return info;
    }
    if (IsDirLocked(path)) {
      info.is_directory = true;
      return info;
    }
    return std::nullopt;
  }

  std::vector<FileInfo> List(const std::string& raw) override {
    const std::string dir = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!IsDirLocked(dir)) LAKERUN_THROW(IoError, "cannot list directory ", dir, ": No such file or directory");
    const std::string prefix = dir + "/";
    std::map<std::string, FileInfo> entries;
    auto add = [&](const std::string& path, bool is_file, uint64_t size) {
      if (path.compare(0, prefix.size(), prefix) != 0) return;
      const std::string rest = path.substr(prefix.size());
      const size_t slash = rest.find('/');
      FileInfo info;
      info.name = rest.substr(0, slash);
      info.is_directory = slash != std::string::npos || !is_file;
      info.size = info.is_directory ? 0 : size;
      entries.emplace(info.name, info);
    };
    for (const auto& [path, data] : state_->files) add(path, true, data->size());
    for (const auto& path : state_->dirs) add(path, false, 0);
    std::vector<FileInfo> out;
    for (auto& [name, info] : entries) out.push_back(info);
    return out;
  }

  void CreateDirs(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->files.count(path)) LAKERUN_THROW(IoError, "cannot create directory ", path, ": a file is in the way");
    state_->dirs.insert(path);
  }

  void Remove(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->files.erase(path);
    state_->dirs.erase(path);
  }

  void RemoveAll(const std::string& raw) override {
    const std::string path = Normalize(raw);
    const std::string prefix = path + "/";
    std::lock_guard<std::mutex> lock(state_->mu);
    for (auto it = state_->files.begin(); it != state_->files.end();) {
      it = (it->first == path || it->first.compare(0, prefix.size(), prefix) == 0) ? state_->files.erase(it)
                                                                                     : std::next(it);
    }
    for (auto it = state_->dirs.begin(); it != state_->dirs.end();) {
      it = (*it == path || it->compare(0, prefix.size(), prefix) == 0) ? state_->dirs.erase(it) : std::next(it);
    }
  }

  void Rename(const std::string& raw_from, const std::string& raw_to) override {
    const std::string from = Normalize(raw_from), to = Normalize(raw_to);
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->files.find(from);
    if (it == state_->files.end()) LAKERUN_THROW(IoError, "cannot rename ", from, " to ", to, ": No such file");
    auto data = it->second;
    state_->files.erase(it);
    state_->files[to] = data;
  }

 private:
  bool IsDirLocked(const std::string& path) const {
    if (path == "/" || path == "." || state_->dirs.count(path)) return true;
    const std::string prefix = path + "/";
    for (const auto& [file, data] : state_->files) {
      if (file.compare(0, prefix.size(), prefix) == 0) return true;
    }
    for (const auto& dir : state_->dirs) {
      if (dir.compare(0, prefix.size(), prefix) == 0) return true;
    }
    return false;
  }

  std::shared_ptr<MemState> state_ = std::make_shared<MemState>();
};

}  // namespace

std::unique_ptr<FileSystem> NewMemoryFileSystem() { return std::make_unique<MemoryFileSystem>(); }

}  // namespace lakerun
