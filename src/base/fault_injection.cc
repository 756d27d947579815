#include "lakerun/base/fault_injection.h"

#include <cstring>

namespace lakerun {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class FaultyReadFile final : public RandomAccessFile {
 public:
  FaultyReadFile(std::unique_ptr<RandomAccessFile> base, bool fail, uint64_t fail_after,
                 std::map<uint64_t, bool> corrupt, std::atomic<uint64_t>* bytes_read)
      : RandomAccessFile(base->path()),
        base_(std::move(base)),
        fail_(fail),
        fail_after_(fail_after),
        corrupt_(std::move(corrupt)),
        bytes_read_(bytes_read) {}

  uint64_t Size() const override { return base_->Size(); }

  void ReadAt(uint64_t offset, size_t n, void* out) const override {
    if (fail_ && offset + n > fail_after_) {
      LAKERUN_THROW(IoError, "cannot read ", n, " bytes at offset ", offset, " of ", path(),
                    ": Input/output error (injected)");
    }
    base_->ReadAt(offset, n, out);
    bytes_read_->fetch_add(n, std::memory_order_relaxed);
    for (const auto& [pos, unused] : corrupt_) {
      if (pos >= offset && pos < offset + n) static_cast<unsigned char*>(out)[pos - offset] ^= 0xFF;
    }
  }

 private:
  std::unique_ptr<RandomAccessFile> base_;
  bool fail_;
  uint64_t fail_after_;
  std::map<uint64_t, bool> corrupt_;
  std::atomic<uint64_t>* bytes_read_;
};

class CrashingWritableFile final : public WritableFile {
 public:
  CrashingWritableFile(std::unique_ptr<WritableFile> base, FaultInjectingFileSystem& fs)
      : WritableFile(base->path()), base_(std::move(base)), fs_(fs) {}

  void Append(std::string_view data) override {
    uint64_t allowed = data.size();
    try {
      fs_.ChargeWrite(path(), data.size(), &allowed);
    } catch (...) {
      base_->Append(data.substr(0, allowed));  // the torn prefix a crash would leave behind
      throw;
    }
    base_->Append(data);
  }
  void Sync() override { base_->Sync(); }
  void Close() override { base_->Close(); }
  uint64_t Position() const override { return base_->Position(); }

 private:
  std::unique_ptr<WritableFile> base_;
  FaultInjectingFileSystem& fs_;
};

}  // namespace

void FaultInjectingFileSystem::FailReadsOf(const std::string& path_suffix, uint64_t after_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& fault = read_faults_[path_suffix];
  fault.fail = true;
  fault.fail_after = after_bytes;
}

void FaultInjectingFileSystem::CorruptByte(const std::string& path_suffix, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  read_faults_[path_suffix].corrupt_offsets[offset] = true;
}

void FaultInjectingFileSystem::CrashWritesAfter(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  crash_armed_ = true;
  write_budget_ = bytes;
}

void FaultInjectingFileSystem::FailRenames(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_renames_ = fail;
}

void FaultInjectingFileSystem::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  read_faults_.clear();
  crash_armed_ = false;
  fail_renames_ = false;
}

FaultInjectingFileSystem::ReadFault FaultInjectingFileSystem::FaultFor(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  ReadFault merged;
  for (const auto& [suffix, fault] : read_faults_) {
    if (!EndsWith(path, suffix)) continue;
    if (fault.fail) {
      merged.fail = true;
      merged.fail_after = fault.fail_after;
    }
    merged.corrupt_offsets.insert(fault.corrupt_offsets.begin(), fault.corrupt_offsets.end());
  }
  return merged;
}

std::unique_ptr<RandomAccessFile> FaultInjectingFileSystem::OpenForRead(const std::string& path) {
  auto base = base_.OpenForRead(path);
  ReadFault fault = FaultFor(path);
  return std::make_unique<FaultyReadFile>(std::move(base), fault.fail, fault.fail_after,
                                          std::move(fault.corrupt_offsets), &bytes_read_);
}

std::unique_ptr<WritableFile> FaultInjectingFileSystem::OpenForWrite(const std::string& path) {
  uint64_t unused = 0;
  ChargeWrite(path, 0, &unused);
  return std::make_unique<CrashingWritableFile>(base_.OpenForWrite(path), *this);
}

std::unique_ptr<WritableFile> FaultInjectingFileSystem::OpenForAppend(const std::string& path) {
  uint64_t unused = 0;
  ChargeWrite(path, 0, &unused);
  return std::make_unique<CrashingWritableFile>(base_.OpenForAppend(path), *this);
}

bool FaultInjectingFileSystem::CreateExclusive(const std::string& path, std::string_view contents) {
  uint64_t allowed = 0;
  ChargeWrite(path, contents.size(), &allowed);
  return base_.CreateExclusive(path, contents);
}

void FaultInjectingFileSystem::Rename(const std::string& from, const std::string& to) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_renames_ || (crash_armed_ && write_budget_ == 0)) {
      LAKERUN_THROW(InjectedCrash, "cannot rename ", from, " to ", to, ": crashed (injected)");
    }
  }
  base_.Rename(from, to);
}

void FaultInjectingFileSystem::ChargeWrite(const std::string& path, uint64_t n, uint64_t* allowed) {
  std::lock_guard<std::mutex> lock(mu_);
  *allowed = n;
  if (!crash_armed_) return;
  if (write_budget_ > 0 && n <= write_budget_) {
    write_budget_ -= n;
    return;
  }
  *allowed = write_budget_;
  write_budget_ = 0;
  LAKERUN_THROW(InjectedCrash, "cannot write ", path, ": crashed after the write budget ran out (injected)");
}

}  // namespace lakerun
