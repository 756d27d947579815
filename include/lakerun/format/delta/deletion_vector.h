// Deletion vectors (PROTOCOL.md, "Deletion Vectors" and "Deletion Vector Format").
//
// A deletion vector is a set of row indexes (positions in a data file, from 0) that are no longer in the table. It
// is stored as a RoaringBitmapArray: the magic number 1681511377 followed by a 64-bit portable RoaringBitmap. It
// lives inline in the log (Z85 text, storageType 'i') or in a file (storageType 'u': a UUID-named file under the
// table root; 'p': an absolute path) whose format is a version byte 1 then, per DV, a big-endian size, the bitmap
// and a big-endian CRC-32 of the bitmap.
//
//   std::vector<uint64_t> deleted = LoadDeletionVector(fs, table_root, *add.deletion_vector, "table t version 3");
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/actions.h"

namespace lakerun::delta {

/// Z85 (ZeroMQ RFC 32). Decode needs a multiple of 5 characters; throws CorruptDataError naming `context`.
std::string Z85Decode(std::string_view text, const std::string& context);
/// Encodes `bytes`, zero-padded to a multiple of 4.
std::string Z85Encode(std::string_view bytes);

/// Parses a RoaringBitmapArray (magic number + 64-bit portable RoaringBitmap) into sorted row indexes.
std::vector<uint64_t> ParseRoaringBitmapArray(std::string_view bytes, const std::string& context);
/// Serializes sorted, unique row indexes as a RoaringBitmapArray (array and bitmap containers).
std::string SerializeRoaringBitmapArray(const std::vector<uint64_t>& sorted_rows);

/// The file of an on-disk DV ('u': <table>/<prefix>/deletion_vector_<uuid>.bin; 'p': the absolute path).
std::string DeletionVectorFilePath(const std::string& table_path, const DeletionVectorDescriptor& dv,
                                   const std::string& context);
/// Loads a DV's row indexes, sorted. Checks the file's version byte, the stored size against sizeInBytes, the
/// CRC-32, the magic number and the cardinality; every failure is a CorruptDataError naming `context` and the file.
std::vector<uint64_t> LoadDeletionVector(FileSystem& fs, const std::string& table_path,
                                         const DeletionVectorDescriptor& dv, const std::string& context);

/// An inline ('i') descriptor for these rows.
DeletionVectorDescriptor InlineDeletionVector(const std::vector<uint64_t>& sorted_rows);
/// Writes a new DV file (format version 1, one DV at offset 1) under `table_path` and returns its 'u' descriptor.
/// `prefix` is the optional random directory prefix (e.g. "ab").
DeletionVectorDescriptor WriteDeletionVectorFile(FileSystem& fs, const std::string& table_path,
                                                 const std::vector<uint64_t>& sorted_rows,
                                                 const std::string& prefix = "");

}  // namespace lakerun::delta
