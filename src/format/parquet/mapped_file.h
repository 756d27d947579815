// A read-only memory mapping of a whole local file (ReaderOptions::memory_map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace lakerun::parquet {

class MappedFile {
 public:
  /// Maps the file at `path` when it has exactly `expected_size` bytes; nullptr when it cannot be mapped (the caller
  /// then reads through its FileSystem as usual). Unmapped when the last shared owner lets go.
  static std::shared_ptr<const MappedFile> Map(const std::string& path, uint64_t expected_size);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

}  // namespace lakerun::parquet
