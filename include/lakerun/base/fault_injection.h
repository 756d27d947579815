// A FileSystem wrapper that injects faults: for tests of every reader's and writer's error paths.
//
//   auto fs = lakerun::FaultInjectingFileSystem(lakerun::LocalFileSystem());
//   fs.FailReadsOf("part-0.parquet", /*after_bytes=*/4096);  // reads past byte 4096 throw IoError
//   fs.CrashWritesAfter(100);                                // the 101st written byte "crashes" the writer
#pragma once

#include <cstdint>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun {

/// Thrown by FaultInjectingFileSystem when a simulated crash point is reached. Derives from IoError so code under
/// test treats it like any failed write.
class InjectedCrash : public IoError {
  using IoError::IoError;
};

class FaultInjectingFileSystem : public FileSystem {
 public:
  /// Wraps `base`, which must outlive this object.
  explicit FaultInjectingFileSystem(FileSystem& base) : base_(base) {}

  /// Reads of files whose path ends with `path_suffix` fail with IoError once they touch a byte at or beyond
  /// `after_bytes`.
  void FailReadsOf(const std::string& path_suffix, uint64_t after_bytes = 0);
  /// Flips every bit of the byte at `offset` of files whose path ends with `path_suffix`, as seen by readers.
  void CorruptByte(const std::string& path_suffix, uint64_t offset);
  /// After `bytes` more bytes are written through this file system, writes throw (the partial data stays), and so
  /// do renames and exclusive creates: a process "crashing" in the middle of a write.
  void CrashWritesAfter(uint64_t bytes);
  /// Renames throw IoError (the source stays), e.g. to test that an atomic save leaves the previous file intact.
  void FailRenames(bool fail);
  void Reset();
  /// Bytes read through files this file system opened (all of them, since construction or ResetBytesRead()).
  uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }
  void ResetBytesRead() { bytes_read_.store(0, std::memory_order_relaxed); }

  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) override;
  std::unique_ptr<WritableFile> OpenForWrite(const std::string& path) override;
  std::unique_ptr<WritableFile> OpenForAppend(const std::string& path) override;
  bool CreateExclusive(const std::string& path, std::string_view contents) override;
  bool Exists(const std::string& path) override { return base_.Exists(path); }
  std::optional<FileInfo> Stat(const std::string& path) override { return base_.Stat(path); }
  std::vector<FileInfo> List(const std::string& dir) override { return base_.List(dir); }
  void CreateDirs(const std::string& path) override { base_.CreateDirs(path); }
  void Remove(const std::string& path) override { base_.Remove(path); }
  void RemoveAll(const std::string& path) override { base_.RemoveAll(path); }
  void Rename(const std::string& from, const std::string& to) override;

  /// Internal: charges `n` written bytes against the crash budget; throws once it is exhausted.
  void ChargeWrite(const std::string& path, uint64_t n, uint64_t* allowed);

 private:
  struct ReadFault {
    bool fail = false;
    uint64_t fail_after = 0;
    std::map<uint64_t, bool> corrupt_offsets;
  };
  ReadFault FaultFor(const std::string& path);

  FileSystem& base_;
  std::mutex mu_;
  std::map<std::string, ReadFault> read_faults_;  // by path suffix
  bool crash_armed_ = false;
  uint64_t write_budget_ = 0;
  bool fail_renames_ = false;
  std::atomic<uint64_t> bytes_read_{0};
};

}  // namespace lakerun
