// The file-system interface every lakerun reader and writer goes through.
//
// Parquet and Delta readers, the Delta log writer, checkpoint I/O and the MLflow file store use only this, so tests
// can run them on MemoryFileSystem or inject faults with FaultInjectingFileSystem. Paths are plain strings; the local
// implementation passes them to POSIX unchanged.
//
// Thread-safety: implementations are safe to call from several threads; a file handle may be read concurrently
// (ReadAt is positional) but a WritableFile belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lakerun {

/// A file opened for positional reads.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  /// Size in bytes at open time.
  virtual uint64_t Size() const = 0;
  /// Reads exactly `n` bytes at `offset` into `out`. Throws IoError (read failed) or CorruptDataError (the range
  /// goes past the end of the file), naming the path, offset and length.
  virtual void ReadAt(uint64_t offset, size_t n, void* out) const = 0;
  /// Convenience: ReadAt into a new string.
  std::string ReadAt(uint64_t offset, size_t n) const;
  /// Reads the whole file.
  std::string ReadAll() const { return ReadAt(0, static_cast<size_t>(Size())); }
  /// A hint that these (offset, length) ranges will be read soon, as a row group's column chunks are. A remote file
  /// fetches them at once (neighbours coalesced, several requests in flight) and serves the ReadAt calls that follow
  /// from memory; a local file ignores it. Ranges past the end of the file are ignored here and fail in ReadAt.
  virtual void WillRead(const std::vector<std::pair<uint64_t, size_t>>& ranges) const { (void)ranges; }
  const std::string& path() const { return path_; }

 protected:
  explicit RandomAccessFile(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

/// A file opened for appending. Close() (or the destructor) releases it; Sync() makes written bytes durable.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual void Append(std::string_view data) = 0;
  virtual void Sync() = 0;
  virtual void Close() = 0;
  /// Bytes appended so far.
  virtual uint64_t Position() const = 0;
  const std::string& path() const { return path_; }

 protected:
  explicit WritableFile(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

struct FileInfo {
  std::string name;  ///< entry name, without the directory
  bool is_directory = false;
  uint64_t size = 0;
  int64_t mtime_ms = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) = 0;
  /// OpenForRead of a file whose size the caller already knows (from a listing or a Delta log): a file system that
  /// would have to ask for it (an object store's HEAD or tail GET) opens without a request. `size` must be the
  /// file's current size; the default ignores it.
  virtual std::unique_ptr<RandomAccessFile> OpenForReadOfSize(const std::string& path, uint64_t size) {
    (void)size;
    return OpenForRead(path);
  }
  /// Creates or truncates `path`.
  virtual std::unique_ptr<WritableFile> OpenForWrite(const std::string& path) = 0;
  /// Opens `path` for appending, creating it if missing.
  virtual std::unique_ptr<WritableFile> OpenForAppend(const std::string& path) = 0;
  /// Atomically creates `path` with `contents` only if it does not exist yet (put-if-absent, as a Delta log commit
  /// needs). Returns false, writing nothing, when it already exists.
  virtual bool CreateExclusive(const std::string& path, std::string_view contents) = 0;

  virtual bool Exists(const std::string& path) = 0;
  /// Stat of one entry; std::nullopt when it does not exist.
  virtual std::optional<FileInfo> Stat(const std::string& path) = 0;
  /// Entries of a directory, sorted by name. Throws IoError if `dir` is not a readable directory.
  virtual std::vector<FileInfo> List(const std::string& dir) = 0;
  /// mkdir -p.
  virtual void CreateDirs(const std::string& path) = 0;
  /// Removes a file or an empty directory; missing is not an error.
  virtual void Remove(const std::string& path) = 0;
  /// Removes a directory tree; missing is not an error.
  virtual void RemoveAll(const std::string& path) = 0;
  /// Atomically replaces `to` with `from` (POSIX rename semantics).
  virtual void Rename(const std::string& from, const std::string& to) = 0;

  /// Writes `contents` to `path` atomically: temp file beside it, fsync, rename. Readers see the old or the new
  /// file, never a torn one, even if the process dies part-way. Object stores override it with one PUT, which is
  /// atomic there.
  virtual void WriteAtomically(const std::string& path, std::string_view contents);
  std::string ReadFile(const std::string& path);
  /// The path on the local disk that `path` names, when it names one (a file a reader may memory-map); std::nullopt
  /// for memory, remote and other non-local files.
  virtual std::optional<std::string> LocalPath(const std::string& path) { (void)path; return std::nullopt; }
};

/// The process's local (POSIX) file system.
FileSystem& LocalFileSystem();

/// A file system held in memory; for tests.
std::unique_ptr<FileSystem> NewMemoryFileSystem();

/// Joins path components with '/'.
std::string JoinPath(std::string_view a, std::string_view b);
/// The directory part of a path ("a/b/c" -> "a/b"; "c" -> ".").
std::string DirName(std::string_view path);
/// The last component of a path.
std::string BaseName(std::string_view path);

}  // namespace lakerun
