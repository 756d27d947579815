// The POSIX implementation of FileSystem.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun {
namespace {

[[noreturn]] void ThrowErrno(const char* what, const std::string& path) {
  const int err = errno;
  LAKERUN_THROW(IoError, what, " ", path, ": ", std::strerror(err));
}

class LocalRandomAccessFile final : public RandomAccessFile {
 public:
  LocalRandomAccessFile(std::string path, int fd, uint64_t size)
      : RandomAccessFile(std::move(path)), fd_(fd), size_(size) {}
  ~LocalRandomAccessFile() override { ::close(fd_); }

  uint64_t Size() const override { return size_; }

  void ReadAt(uint64_t offset, size_t n, void* out) const override {
    if (offset > size_ || n > size_ - offset) {
      LAKERUN_THROW(CorruptDataError, path(), ": read of ", n, " bytes at offset ", offset,
                    " goes past the end of the file (", size_, " bytes)");
    }
    char* dst = static_cast<char*>(out);
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        ThrowErrno(StrCat("cannot read ", n, " bytes at offset ", offset, " of").c_str(), path());
      }
      if (got == 0) {
        LAKERUN_THROW(CorruptDataError, path(), ": file shrank while reading at offset ", offset + done);
      }
      done += static_cast<size_t>(got);
    }
  }

 private:
  int fd_;
  uint64_t size_;
};

class LocalWritableFile final : public WritableFile {
 public:
  LocalWritableFile(std::string path, int fd, uint64_t position)
      : WritableFile(std::move(path)), fd_(fd), position_(position) {}
  ~LocalWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void Append(std::string_view data) override {
    LAKERUN_CHECK_AS(IoError, fd_ >= 0, path(), ": append after close");
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t put = ::write(fd_, data.data() + done, data.size() - done);
      if (put < 0) {
        if (errno == EINTR) continue;
        ThrowErrno("cannot write", path());
      }
      done += static_cast<size_t>(put);
    }
    position_ += data.size();
  }

  void Sync() override {
    if (fd_ >= 0 && ::fsync(fd_) != 0) ThrowErrno("cannot fsync", path());
  }

  void Close() override {
    if (fd_ < 0) return;
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) ThrowErrno("cannot close", path());
  }

  uint64_t Position() const override { return position_; }

 private:
  int fd_;
  uint64_t position_;
};

void SyncDirectoryOf(const std::string& path) {
  const int dir = ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

class PosixFileSystem final : public FileSystem {
 public:
  std::optional<std::string> LocalPath(const std::string& path) override { return path; }

  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) ThrowErrno("cannot open", path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      ThrowErrno("cannot stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      LAKERUN_THROW(IoError, "cannot open ", path, " for reading: it is a directory");
    }
    return std::make_unique<LocalRandomAccessFile>(path, fd, static_cast<uint64_t>(st.st_size));
  }

  std::unique_ptr<WritableFile> OpenForWrite(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) ThrowErrno("cannot create", path);
    return std::make_unique<LocalWritableFile>(path, fd, 0);
  }

  std::unique_ptr<WritableFile> OpenForAppend(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) ThrowErrno("cannot open for append", path);
    struct stat st {};
    ::fstat(fd, &st);
    return std::make_unique<LocalWritableFile>(path, fd, static_cast<uint64_t>(st.st_size));
  }

  bool CreateExclusive(const std::string& path, std::string_view contents) override {
    // Write a private temp file, then link(2) it into place: link fails with EEXIST if the target exists, and
    // readers never see a partially written target.
    const std::string tmp = StrCat(path, ".excl.", ::getpid(), ".", ::gettid());
    {
      auto file = OpenForWrite(tmp);
      file->Append(contents);
      file->Sync();
      file->Close();
    }
    const int rc = ::link(tmp.c_str(), path.c_str());
    const int err = errno;
    ::unlink(tmp.c_str());
    if (rc == 0) {
      SyncDirectoryOf(path);
      return true;
    }
    if (err == EEXIST) return false;
    errno = err;
    ThrowErrno("cannot create", path);
  }

  bool Exists(const std::string& path) override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }

  std::optional<FileInfo> Stat(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
      ThrowErrno("cannot stat", path);
    }
    FileInfo info;
    info.name = BaseName(path);
    info.is_directory = S_ISDIR(st.st_mode);
    info.size = static_cast<uint64_t>(st.st_size);
    info.mtime_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    return info;
  }

  std::vector<FileInfo> List(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) ThrowErrno("cannot list directory", dir);
    std::vector<FileInfo> out;
    while (struct dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      auto info = Stat(JoinPath(dir, name));
      if (info) {
        info->name = name;
        out.push_back(*info);
      }
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(), [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
    return out;
  }

  void CreateDirs(const std::string& path) override {
    if (path.empty()) return;
    std::string prefix;
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = path.find('/', pos + 1);
      prefix = path.substr(0, pos);
      if (prefix.empty()) continue;
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) ThrowErrno("cannot create directory", prefix);
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      LAKERUN_THROW(IoError, "cannot create directory ", path, ": a file is in the way");
    }
  }

  void Remove(const std::string& path) override {
    if (::remove(path.c_str()) != 0 && errno != ENOENT) ThrowErrno("cannot remove", path);
  }

  void RemoveAll(const std::string& path) override {
    auto info = Stat(path);
    if (!info) return;
    if (info->is_directory) {
      for (const auto& entry : List(path)) RemoveAll(JoinPath(path, entry.name));
    }
    Remove(path);
  }

  void Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) ThrowErrno(StrCat("cannot rename ", from, " to").c_str(), to);
    SyncDirectoryOf(to);
  }
};

}  // namespace

FileSystem& LocalFileSystem() {
  static PosixFileSystem* fs = new PosixFileSystem();  // never destroyed: usable from static destructors
  return *fs;
}

}  // namespace lakerun
