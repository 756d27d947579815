#include "format/parquet/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lakerun::parquet {

std::shared_ptr<const MappedFile> MappedFile::Map(const std::string& path, uint64_t expected_size) {
  if (expected_size == 0) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* p = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == expected_size) {
    p = ::mmap(nullptr, static_cast<size_t>(expected_size), PROT_READ, MAP_SHARED, fd, 0);
  }
  ::close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<const MappedFile>(
      new MappedFile(static_cast<const uint8_t*>(p), static_cast<size_t>(expected_size)));
}

MappedFile::~MappedFile() { ::munmap(const_cast<uint8_t*>(data_), size_); }

}  // namespace lakerun::parquet
