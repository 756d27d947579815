#include "train/checkpoint_digest.h"

#include <cinttypes>
#include <cstdio>

#include "lakerun/base/crc32.h"
#include "lakerun/base/error.h"
#include "train/zip_records.h"

namespace lakerun::train {
namespace {

constexpr std::string_view kDigestPrefix = "lakerun-digest ";
constexpr size_t kEndRecordSize = 22;   // the end-of-central-directory record, before its comment
constexpr size_t kCommentLengthAt = 20;  // its comment length field (2 bytes, little-endian)

std::string DigestText(uint32_t crc, size_t size) {
  char out[64];
  std::snprintf(out, sizeof(out), "crc32=%08" PRIx32 " size=%zu", crc, size);
  return std::string(kDigestPrefix) + out;
}

std::string Digest(std::string_view sealed_part) { return DigestText(Crc32(sealed_part), sealed_part.size()); }

}  // namespace

std::string SealCheckpoint(std::string archive) {
  const ZipLayout zip = ReadZipLayout(archive);
  LAKERUN_CHECK_AS(InternalError, zip.comment.empty() && zip.end_record_offset + kEndRecordSize == archive.size(),
                   "checkpoint archive already has a comment of ", zip.comment.size(), " bytes");
  const size_t length_at = zip.end_record_offset + kCommentLengthAt;
  const size_t comment_size = DigestText(0, archive.size()).size();
  archive[length_at] = static_cast<char>(comment_size & 0xff);
  archive[length_at + 1] = static_cast<char>(comment_size >> 8);
  const std::string digest = Digest(archive);
  LAKERUN_INTERNAL_ASSERT(digest.size() == comment_size, digest);
  return archive + digest;
}

std::optional<std::string> CheckpointProblem(std::string_view bytes) {
  ZipLayout zip;
  try {
    zip = ReadZipLayout(bytes);
  } catch (const CorruptDataError& e) {
    return std::string(e.what());
  }
  // Records first: a damaged record is named; a digest mismatch alone means damage between them.
  if (auto bad = CheckZipRecords(bytes, zip)) return bad;
  if (zip.comment.empty()) return std::nullopt;  // written before digests existed (torch writes no comment)
  const std::string_view sealed = bytes.substr(0, zip.end_record_offset + kEndRecordSize);
  const std::string expected = Digest(sealed);
  if (zip.comment != expected) {
    return StrCat("the whole-file digest does not match: the file stores \"", zip.comment, "\", its bytes give \"",
                  expected, "\" (damage outside the records: headers or central directory)");
  }
  return std::nullopt;
}

VerifiedCheckpoint ReadVerifiedCheckpoint(FileSystem& fs, const std::string& path) {
  VerifiedCheckpoint out{path, fs.ReadFile(path)};
  if (auto problem = CheckpointProblem(out.bytes)) {
    LAKERUN_THROW(CorruptDataError, "checkpoint ", path, " is damaged: ", *problem);
  }
  return out;
}

}  // namespace lakerun::train
