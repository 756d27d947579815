#include "dist/shard_file.h"

#include <lakerun/base/crc32.h>
#include <lakerun/base/error.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace lakerun::dist {
namespace {

std::string Trimmed(const std::string& header) { return header.substr(0, header.find_last_not_of(" \n") + 1); }

}  // namespace

std::string ShardFileName(int rank, int world) {
  char name[64];
  std::snprintf(name, sizeof(name), "shard-%05d-of-%05d.bin", rank, world);
  return name;
}

uint64_t ShardFileBlocks(uint64_t data_bytes, uint64_t block_bytes) {
  return (data_bytes + block_bytes - 1) / block_bytes;
}

std::string ShardFileHeader(const std::string& save_id, int rank, int world) {
  std::string header = StrCat("lakerun shard v1 ", save_id, " rank ", rank, " of ", world);
  LAKERUN_INTERNAL_ASSERT(header.size() < kShardFileHeaderBytes, header);
  header.resize(kShardFileHeaderBytes - 1, ' ');
  return header + "\n";
}

ShardFileBuilder::ShardFileBuilder(std::string header) : bytes_(std::move(header)) {
  LAKERUN_INTERNAL_ASSERT(bytes_.size() == kShardFileHeaderBytes);
}

uint64_t ShardFileBuilder::Append(const at::Tensor& t) {
  const at::Tensor host = t.to(at::kCPU).contiguous();
  const uint64_t at = bytes_.size();
  bytes_.append(static_cast<const char*>(host.data_ptr()), host.nbytes());
  return at;
}

ShardFileChecksums ShardFileBuilder::Finish(uint64_t block_bytes) {
  ShardFileChecksums sums{bytes_.size(), 0};
  std::string table;
  for (uint64_t at = kShardFileHeaderBytes; at < sums.at; at += block_bytes) {
    const uint32_t crc = Crc32(bytes_.data() + at, std::min<uint64_t>(block_bytes, sums.at - at));
    for (int shift = 0; shift < 32; shift += 8) table.push_back(static_cast<char>((crc >> shift) & 0xff));
  }
  sums.crc32 = Crc32(table);
  bytes_ += table;
  return sums;
}

ShardFileReader::ShardFileReader(std::string path, std::string header, uint64_t bytes, uint64_t block_bytes,
                                 ShardFileChecksums checksums)
    : path_(std::move(path)),
      header_(std::move(header)),
      bytes_(bytes),
      block_bytes_(block_bytes),
      checksums_(checksums),
      needed_(ShardFileBlocks(checksums.at - kShardFileHeaderBytes, block_bytes), false) {}

void ShardFileReader::Need(uint64_t offset, uint64_t n) {
  if (n == 0) return;
  LAKERUN_CHECK_AS(CorruptDataError,
                   offset >= kShardFileHeaderBytes && offset + n <= checksums_.at && offset + n > offset, path_,
                   ": the index places ", n, " bytes at offset ", offset, ", outside the file's elements (bytes ",
                   kShardFileHeaderBytes, " to ", checksums_.at, ")");
  const uint64_t first = (offset - kShardFileHeaderBytes) / block_bytes_;
  const uint64_t last = (offset + n - 1 - kShardFileHeaderBytes) / block_bytes_;
  for (uint64_t b = first; b <= last; ++b) needed_[b] = true;
  any_needed_ = true;
}

// The checksum table, checked against the index's CRC-32 of it.
std::vector<uint32_t> ShardFileReader::ReadChecksums(const RandomAccessFile& file) const {
  const std::string table = file.ReadAt(checksums_.at, static_cast<size_t>(bytes_ - checksums_.at));
  LAKERUN_CHECK_AS(CorruptDataError, Crc32(table) == checksums_.crc32, path_, ": its checksum table (bytes ",
                   checksums_.at, " to ", bytes_, ") has CRC-32 ", Crc32Text(Crc32(table)), ", the index says ",
                   Crc32Text(checksums_.crc32), ": the file is damaged");
  std::vector<uint32_t> crcs(needed_.size());
  for (std::size_t b = 0; b < crcs.size(); ++b) {
    for (int i = 3; i >= 0; --i) crcs[b] = (crcs[b] << 8) | static_cast<uint8_t>(table[4 * b + i]);
  }
  return crcs;
}

uint64_t ShardFileReader::Fetch(FileSystem& fs) {
  if (!any_needed_) return 0;
  std::unique_ptr<RandomAccessFile> file = fs.OpenForRead(path_);
  LAKERUN_CHECK_AS(CorruptDataError, file->Size() == bytes_, path_, ": ", file->Size(), " bytes, but the index says ",
                   bytes_, " (a truncated or replaced rank file)");
  const std::string header = file->ReadAt(0, kShardFileHeaderBytes);
  LAKERUN_CHECK_AS(CorruptDataError, header == header_, path_, ": its header \"", Trimmed(header),
                   "\" is not the index's \"", Trimmed(header_), "\": a rank file of another save");
  const std::vector<uint32_t> crcs = ReadChecksums(*file);
  uint64_t read = kShardFileHeaderBytes + (bytes_ - checksums_.at);
  for (uint64_t first = 0; first < needed_.size();) {
    if (!needed_[first]) {
      ++first;
      continue;
    }
    uint64_t end = first;
    while (end < needed_.size() && needed_[end]) ++end;
    const uint64_t at = kShardFileHeaderBytes + first * block_bytes_;
    const uint64_t n = std::min(checksums_.at, kShardFileHeaderBytes + end * block_bytes_) - at;
    std::string run = file->ReadAt(at, static_cast<size_t>(n));
    for (uint64_t b = first; b < end; ++b) {
      const uint64_t from = (b - first) * block_bytes_;
      const uint32_t crc = Crc32(run.data() + from, std::min<uint64_t>(block_bytes_, n - from));
      LAKERUN_CHECK_AS(CorruptDataError, crc == crcs[b], path_, ": block ", b, " (bytes ", at + from, " to ",
                       at + std::min<uint64_t>(from + block_bytes_, n), ") has CRC-32 ", Crc32Text(crc),
                       ", its checksum says ", Crc32Text(crcs[b]), ": the file is damaged");
    }
    read += n;
    runs_.emplace(first, std::move(run));
    first = end;
  }
  return read;
}

void ShardFileReader::CopyOut(uint64_t offset, uint64_t n, void* out) const {
  if (n == 0) return;
  const uint64_t block = (offset - kShardFileHeaderBytes) / block_bytes_;
  auto it = runs_.upper_bound(block);
  LAKERUN_INTERNAL_ASSERT(it != runs_.begin(), path_, ": bytes at ", offset, " were not read");
  --it;
  const uint64_t from = offset - (kShardFileHeaderBytes + it->first * block_bytes_);
  LAKERUN_INTERNAL_ASSERT(from + n <= it->second.size(), path_, ": bytes at ", offset, " were not read");
  std::memcpy(out, it->second.data() + from, n);
}

}  // namespace lakerun::dist
