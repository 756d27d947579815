// One rank's file of a sharded checkpoint: a 64-byte header, raw tensor elements, then a table of checksums. What
// lies where is in the index (checkpoint_index.h), not in the file.
//
// - The header is text: "lakerun shard v1 <save id> rank <r> of <world>\n", padded with spaces to 64 bytes. A loader
//   compares it byte for byte with the one the index implies, so a file of another save (a save that crashed
//   half-way over an older checkpoint in the same directory) is refused rather than read.
// - The elements are cut into blocks of the index's block_bytes (64 KiB); the table at the end of the file holds
//   each block's CRC-32 (little-endian uint32 each), and the index the CRC-32 of the table. A reader checks the
//   table, then every block it reads: a reader of part of a file reads and checks only the blocks it needs (at
//   most two beyond each range), and the index stays small however large the checkpoint.
//
//   ShardFileBuilder out(ShardFileHeader(id, rank, world));
//   uint64_t at = out.Append(tensor);                    // any dtype and device: copied as raw elements
//   ShardFileChecksums sums = out.Finish(block_bytes);   // appends the table
//   fs.WriteAtomically(path, out.bytes());
//
//   ShardFileReader in(path, header, bytes, block_bytes, sums);
//   in.Need(at, n);  in.Fetch(fs);  in.CopyOut(at, n, dst);
#pragma once

#include <lakerun/base/file_system.h>

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lakerun::dist {

inline constexpr uint64_t kShardFileHeaderBytes = 64;
/// Bytes a CRC-32 covers: a reader of a range reads at most two blocks beyond it.
inline constexpr uint64_t kShardFileBlockBytes = 64 << 10;

/// Where a rank file's checksum table is, and its CRC-32 (as the index keeps them).
struct ShardFileChecksums {
  uint64_t at = 0;  ///< byte offset of the table: the elements are bytes [kShardFileHeaderBytes, at)
  uint32_t crc32 = 0;
};

/// "shard-00003-of-00004.bin".
std::string ShardFileName(int rank, int world);
/// Blocks of `block_bytes` in `data_bytes` bytes of elements: the entries of the checksum table.
uint64_t ShardFileBlocks(uint64_t data_bytes, uint64_t block_bytes);
/// The header of rank `rank`'s file of the save `save_id` in a world of `world` (kShardFileHeaderBytes bytes).
std::string ShardFileHeader(const std::string& save_id, int rank, int world);

/// A rank file assembled in memory.
class ShardFileBuilder {
 public:
  explicit ShardFileBuilder(std::string header);
  /// Appends `t`'s elements (contiguous, row-major, copied to the CPU first when elsewhere); returns their offset.
  uint64_t Append(const at::Tensor& t);
  /// Appends the checksum table: the CRC-32 of each block of `block_bytes` of the elements (the last one shorter).
  ShardFileChecksums Finish(uint64_t block_bytes);
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

/// Byte ranges of one rank file, each block read checked against the file's checksum table.
class ShardFileReader {
 public:
  /// `bytes`, `block_bytes` and `checksums` as the index gives them (checked by IndexFromJson to agree); `header`
  /// as ShardFileHeader.
  ShardFileReader(std::string path, std::string header, uint64_t bytes, uint64_t block_bytes,
                  ShardFileChecksums checksums);
  /// Asks for bytes [offset, offset + n). CorruptDataError when they lie outside the file's data.
  void Need(uint64_t offset, uint64_t n);
  bool needed() const { return any_needed_; }
  /// Opens the file, checks its size, header and checksum table, reads every needed block (each run of consecutive
  /// blocks in one read) and checks their CRCs. Returns the bytes read. IoError when the file cannot be read,
  /// CorruptDataError when it is truncated, of another save or damaged, naming the path (and the block).
  uint64_t Fetch(FileSystem& fs);
  /// Copies bytes [offset, offset + n), asked for by Need, out of what Fetch read.
  void CopyOut(uint64_t offset, uint64_t n, void* out) const;

 private:
  std::vector<uint32_t> ReadChecksums(const RandomAccessFile& file) const;

  std::string path_, header_;
  uint64_t bytes_, block_bytes_;
  ShardFileChecksums checksums_;
  std::vector<bool> needed_;               // per block
  bool any_needed_ = false;
  std::map<uint64_t, std::string> runs_;   // first block of a run of needed blocks -> its bytes
};

}  // namespace lakerun::dist
