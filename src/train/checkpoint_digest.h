// Checkpoints verify themselves. A checkpoint is a zip archive (torch::serialize); every record carries the zip
// format's CRC-32, and SealCheckpoint adds a digest of the whole file as the archive's comment:
//
//   lakerun-digest crc32=<8 hex digits> size=<bytes>
//
// the CRC-32 and length of every byte before the comment (the end-of-central-directory record included, whose
// comment length field counts the digest). A comment is part of the zip format, so torch, Python's zipfile and unzip
// read a sealed file as before; the file stays one file, written atomically. Files without a comment (written before
// digests existed) are checked record by record only; any other comment is damage.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lakerun/base/file_system.h"

namespace lakerun::train {

/// `archive` (a zip whose comment is empty) with the digest appended as its comment. InternalError otherwise.
std::string SealCheckpoint(std::string archive);

/// Why `bytes` are not an intact checkpoint archive (not a zip, a record whose CRC-32 does not match, a digest that
/// does not match), or std::nullopt when they are.
std::optional<std::string> CheckpointProblem(std::string_view bytes);

/// A checkpoint file read and verified.
struct VerifiedCheckpoint {
  std::string path;
  std::string bytes;
};

/// The checkpoint at `path`, read and verified: a damaged file is a CorruptDataError naming it and the damage.
VerifiedCheckpoint ReadVerifiedCheckpoint(FileSystem& fs, const std::string& path);

}  // namespace lakerun::train
