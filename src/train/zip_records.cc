#include "train/zip_records.h"

#include <zlib.h>


#include "lakerun/base/crc32.h"
#include "lakerun/base/error.h"

namespace lakerun::train {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEnd = 0x06054b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr size_t kEndSize = 22, kLocatorSize = 20, kZip64EndSize = 56, kCentralSize = 46, kLocalSize = 30;

// Little-endian reads, bounds-checked against the whole archive.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  void Need(uint64_t offset, uint64_t n, const char* what) const {
    LAKERUN_CHECK_AS(CorruptDataError, offset <= bytes_.size() && n <= bytes_.size() - offset, what, " at offset ",
                     offset, " runs past the end of the file (", bytes_.size(), " bytes)");
  }
  uint64_t Le(uint64_t offset, int width) const {
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes_[offset + static_cast<size_t>(i)]);
    return v;
  }
  uint16_t U16(uint64_t offset) const { return static_cast<uint16_t>(Le(offset, 2)); }
  uint32_t U32(uint64_t offset) const { return static_cast<uint32_t>(Le(offset, 4)); }
  uint64_t U64(uint64_t offset) const { return Le(offset, 8); }
  std::string_view At(uint64_t offset, uint64_t n) const { return bytes_.substr(offset, n); }
  uint64_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

// The end-of-central-directory record: the last one whose comment reaches exactly to the end of the file.
uint64_t FindEnd(const Reader& r) {
  LAKERUN_CHECK_AS(CorruptDataError, r.size() >= kEndSize, "not a zip archive: ", r.size(), " bytes");
  const uint64_t lowest = r.size() > kEndSize + 0xffff ? r.size() - kEndSize - 0xffff : 0;
  for (uint64_t at = r.size() - kEndSize + 1; at-- > lowest;) {
    if (r.U32(at) == kEnd && at + kEndSize + r.U16(at + 20) == r.size()) return at;
  }
  LAKERUN_THROW(CorruptDataError, "not a zip archive: no end-of-central-directory record at its end");
}

struct Directory {
  uint64_t offset = 0, size = 0, entries = 0;
};

Directory ReadDirectory(const Reader& r, uint64_t end) {
  Directory d{r.U32(end + 16), r.U32(end + 12), r.U16(end + 10)};
  const bool zip64 = d.offset == 0xffffffff || d.size == 0xffffffff || d.entries == 0xffff;
  if (zip64 || (end >= kLocatorSize && r.U32(end - kLocatorSize) == kZip64Locator)) {
    LAKERUN_CHECK_AS(CorruptDataError, end >= kLocatorSize && r.U32(end - kLocatorSize) == kZip64Locator,
                     "zip64 archive without its end-of-central-directory locator");
    const uint64_t at = r.U64(end - kLocatorSize + 8);
    r.Need(at, kZip64EndSize, "zip64 end-of-central-directory record");
    LAKERUN_CHECK_AS(CorruptDataError, r.U32(at) == kZip64End, "no zip64 end-of-central-directory record at offset ",
                     at);
    d = Directory{r.U64(at + 48), r.U64(at + 40), r.U64(at + 32)};
  }
  r.Need(d.offset, d.size, "central directory");
  return d;
}

// The zip64 extra field (id 1) holds, in this order, the sizes and offset whose 32-bit fields are all ones.
void ReadZip64Extra(const Reader& r, uint64_t extra, uint64_t extra_len, ZipRecord* rec, uint64_t* local) {
  for (uint64_t at = extra; at + 4 <= extra + extra_len;) {
    const uint16_t id = r.U16(at), len = r.U16(at + 2);
    LAKERUN_CHECK_AS(CorruptDataError, at + 4 + len <= extra + extra_len, "record '", rec->name,
                     "': extra field overruns its header");
    if (id == 1) {
      uint64_t p = at + 4;
      auto take = [&](uint64_t* v) {
        if (*v != 0xffffffff) return;
        LAKERUN_CHECK_AS(CorruptDataError, p + 8 <= at + 4 + len, "record '", rec->name, "': short zip64 field");
        *v = r.U64(p);
        p += 8;
      };
      take(&rec->uncompressed_size);
      take(&rec->compressed_size);
      take(local);
    }
    at += 4 + len;
  }
}

}  // namespace

ZipLayout ReadZipLayout(std::string_view bytes) {
  const Reader r(bytes);
  ZipLayout zip;
  zip.end_record_offset = FindEnd(r);
  zip.comment = r.At(zip.end_record_offset + kEndSize, r.U16(zip.end_record_offset + 20));
  const Directory dir = ReadDirectory(r, zip.end_record_offset);
  uint64_t at = dir.offset;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    r.Need(at, kCentralSize, "central directory entry");
    LAKERUN_CHECK_AS(CorruptDataError, r.U32(at) == kCentralHeader, "central directory entry ", i, " at offset ", at,
                     " has a bad signature");
    ZipRecord rec;
    rec.method = r.U16(at + 10);
    rec.crc = r.U32(at + 16);
    rec.compressed_size = r.U32(at + 20);
    rec.uncompressed_size = r.U32(at + 24);
    const uint64_t name_len = r.U16(at + 28), extra_len = r.U16(at + 30), comment_len = r.U16(at + 32);
    uint64_t local = r.U32(at + 42);
    r.Need(at + kCentralSize, name_len + extra_len + comment_len, "central directory entry");
    rec.name = std::string(r.At(at + kCentralSize, name_len));
    ReadZip64Extra(r, at + kCentralSize + name_len, extra_len, &rec, &local);
    r.Need(local, kLocalSize, "local header");
    LAKERUN_CHECK_AS(CorruptDataError, r.U32(local) == kLocalHeader, "record '", rec.name,
                     "': no local header at offset ", local);
    rec.data_offset = local + kLocalSize + r.U16(local + 26) + r.U16(local + 28);
    r.Need(rec.data_offset, rec.compressed_size, "record data");
    zip.records.push_back(std::move(rec));
    at += kCentralSize + name_len + extra_len + comment_len;
  }
  LAKERUN_CHECK_AS(CorruptDataError, at <= dir.offset + dir.size, "central directory entries overrun its ", dir.size,
                   " bytes");
  return zip;
}

namespace {

// CRC-32 of a deflated record's inflated bytes; std::nullopt when the stream does not inflate to `size` bytes.
std::optional<uint32_t> InflatedCrc(std::string_view data, uint64_t size) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return std::nullopt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out(1 << 16, '\0');
  uint32_t crc = 0;
  uint64_t total = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    const size_t produced = out.size() - z.avail_out;
    crc = Crc32(out.data(), produced, crc);
    total += produced;
    if (rc == Z_OK && produced == 0 && z.avail_in == 0) break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || total != size) return std::nullopt;
  return crc;
}

}  // namespace

std::optional<std::string> CheckZipRecords(std::string_view bytes, const ZipLayout& zip) {
  for (const ZipRecord& rec : zip.records) {
    const std::string_view data = bytes.substr(rec.data_offset, rec.compressed_size);
    const std::string where = StrCat("record '", rec.name, "' (", rec.compressed_size, " bytes at offset ",
                                     rec.data_offset, ")");
    std::optional<uint32_t> crc;
    if (rec.method == 0) {
      if (rec.compressed_size != rec.uncompressed_size) {
        return StrCat(where, " is stored, yet its sizes differ (", rec.uncompressed_size, " uncompressed)");
      }
      crc = Crc32(data);
    } else if (rec.method == 8) {
      crc = InflatedCrc(data, rec.uncompressed_size);
    } else {
      return StrCat(where, " uses compression method ", rec.method, " (stored and deflated only)");
    }
    if (!crc) return where + " does not inflate";
    if (*crc != rec.crc) {
      return StrCat(where, ": its bytes hash to CRC-32 ", Crc32Text(*crc), ", the archive stores ",
                    Crc32Text(rec.crc));
    }
  }
  return std::nullopt;
}

}  // namespace lakerun::train
