// The records of a zip archive (the container of torch::serialize archives, hence of lakerun's checkpoints) and the
// check of each record's CRC-32 against the one the archive stores for it.
//
//   ZipLayout zip = ReadZipLayout(bytes);          // throws CorruptDataError with what is wrong
//   for (const ZipRecord& r : zip.records) ...
//   std::optional<std::string> bad = CheckZipRecords(bytes, zip);
//
// Reads the end-of-central-directory record (zip64 included), the central directory and each record's local header,
// all bounds-checked. Records may be stored or deflated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::train {

struct ZipRecord {
  std::string name;
  uint16_t method = 0;           ///< 0 stored, 8 deflated
  uint32_t crc = 0;              ///< CRC-32 of the uncompressed bytes, from the central directory
  uint64_t data_offset = 0;      ///< where the record's (possibly compressed) bytes start
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
};

struct ZipLayout {
  std::vector<ZipRecord> records;
  uint64_t end_record_offset = 0;  ///< offset of the end-of-central-directory record (22 bytes, then the comment)
  std::string_view comment;        ///< the archive comment (a view into the bytes given)
};

/// Throws CorruptDataError (without a file name: callers add it) when `bytes` are not a readable zip archive.
ZipLayout ReadZipLayout(std::string_view bytes);

/// The first record whose bytes do not hash to its stored CRC-32 (or cannot be inflated), described; std::nullopt
/// when every record checks out.
std::optional<std::string> CheckZipRecords(std::string_view bytes, const ZipLayout& zip);

}  // namespace lakerun::train
