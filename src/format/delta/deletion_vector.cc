// RoaringBitmapArray parsing/serialization and deletion-vector storage.
//
// 32-bit RoaringBitmap serialization (RoaringFormatSpec): a cookie (12346 = no run containers, followed by the
// container count; or 12347 in the low 16 bits with count-1 in the high 16 bits, followed by a run-container bitmap),
// a descriptive header of (key, cardinality-1) pairs, an offset header (always with cookie 12346, with 12347 only
// from 4 containers on), then the containers: runs, sorted uint16 arrays (cardinality <= 4096) or 8 KiB bitmaps.
#include "lakerun/format/delta/deletion_vector.h"

#include <algorithm>
#include <cstring>

#include "format/delta/uri.h"
#include "lakerun/base/crc32.h"
#include "lakerun/base/error.h"

namespace lakerun::delta {
namespace {

constexpr uint32_t kMagic = 1681511377;        // portable 64-bit format (the spec)
constexpr uint32_t kNativeMagic = 1681511376;  // "native" framing, as in PROTOCOL.md's inline example
constexpr uint32_t kCookieNoRun = 12346;
constexpr uint32_t kCookieRun = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArray = 4096;

class Cursor {
 public:
  Cursor(std::string_view bytes, const std::string& context) : bytes_(bytes), context_(context) {}
  template <typename T>
  T Little() {
    Need(sizeof(T));
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    return v;
  }
  std::string_view Take(size_t n) {
    Need(n);
    auto out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  void Need(size_t n) {
    LAKERUN_CHECK_AS(CorruptDataError, n <= bytes_.size() - pos_, context_, ": deletion vector bitmap truncated at byte ",
                     pos_, " (needs ", n, " more bytes, ", bytes_.size() - pos_, " left)");
  }
  std::string_view bytes_;
  size_t pos_ = 0;
  const std::string& context_;
};

// Parses one 32-bit RoaringBitmap at the cursor, appending (high << 32 | value) to `out`.
void Parse32(Cursor& in, uint64_t high, std::vector<uint64_t>* out, const std::string& context) {
  const uint32_t cookie = in.Little<uint32_t>();
  uint32_t size = 0;
  std::string_view run_bitmap;
  bool has_offsets = true;
  if ((cookie & 0xffff) == kCookieRun) {
    size = (cookie >> 16) + 1;
    run_bitmap = in.Take((size + 7) / 8);
    has_offsets = size >= kNoOffsetThreshold;
  } else if (cookie == kCookieNoRun) {
    size = in.Little<uint32_t>();
  } else {
    LAKERUN_THROW(CorruptDataError, context, ": bad RoaringBitmap cookie ", cookie, " (expected 12346 or 12347)");
  }
  LAKERUN_CHECK_AS(CorruptDataError, size <= 65536, context, ": RoaringBitmap claims ", size, " containers");
  std::vector<uint16_t> keys(size);
  std::vector<uint32_t> cards(size);
  for (uint32_t i = 0; i < size; ++i) {
    keys[i] = in.Little<uint16_t>();
    cards[i] = static_cast<uint32_t>(in.Little<uint16_t>()) + 1;
  }
  if (has_offsets) in.Take(size_t{4} * size);  // offsets: containers follow in order, so they are not needed
  for (uint32_t i = 0; i < size; ++i) {
    const uint64_t base = (high << 32) | (static_cast<uint64_t>(keys[i]) << 16);
    const bool is_run = !run_bitmap.empty() && (static_cast<unsigned char>(run_bitmap[i / 8]) >> (i % 8)) & 1;
    if (is_run) {
      const uint16_t runs = in.Little<uint16_t>();
      for (uint16_t r = 0; r < runs; ++r) {
        const uint32_t start = in.Little<uint16_t>();
        const uint32_t length = in.Little<uint16_t>();
        LAKERUN_CHECK_AS(CorruptDataError, start + length <= 0xffff, context, ": run container overflows");
        for (uint32_t v = start; v <= start + length; ++v) out->push_back(base | v);
      }
    } else if (cards[i] <= kMaxArray) {
      for (uint32_t j = 0; j < cards[i]; ++j) out->push_back(base | in.Little<uint16_t>());
    } else {
      for (uint32_t word = 0; word < 1024; ++word) {
        uint64_t bits = in.Little<uint64_t>();
        while (bits) {
          const int bit = __builtin_ctzll(bits);
          out->push_back(base | (word * 64 + static_cast<uint32_t>(bit)));
          bits &= bits - 1;
        }
      }
    }
  }
}

template <typename T>
void PutLittle(std::string* out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
}

void PutBig32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

uint32_t Big32(std::string_view b) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[i]);
  return v;
}

// Serializes the low 32 bits of rows[begin, end) (all with the same high 32 bits) as a 32-bit RoaringBitmap.
std::string Serialize32(const std::vector<uint64_t>& rows, size_t begin, size_t end) {
  struct Container {
    uint16_t key;
    size_t begin, end;
  };
  std::vector<Container> containers;
  for (size_t i = begin; i < end;) {
    const uint16_t key = static_cast<uint16_t>((rows[i] >> 16) & 0xffff);
    size_t j = i;
    while (j < end && static_cast<uint16_t>((rows[j] >> 16) & 0xffff) == key) ++j;
    containers.push_back({key, i, j});
    i = j;
  }
  std::string out;
  PutLittle<uint32_t>(&out, kCookieNoRun);
  PutLittle<uint32_t>(&out, static_cast<uint32_t>(containers.size()));
  for (const auto& c : containers) {
    PutLittle<uint16_t>(&out, c.key);
    PutLittle<uint16_t>(&out, static_cast<uint16_t>(c.end - c.begin - 1));
  }
  uint32_t offset = static_cast<uint32_t>(out.size() + 4 * containers.size());
  for (const auto& c : containers) {
    PutLittle<uint32_t>(&out, offset);
    const size_t n = c.end - c.begin;
    offset += static_cast<uint32_t>(n <= kMaxArray ? 2 * n : 8192);
  }
  for (const auto& c : containers) {
    const size_t n = c.end - c.begin;
    if (n <= kMaxArray) {
      for (size_t i = c.begin; i < c.end; ++i) PutLittle<uint16_t>(&out, static_cast<uint16_t>(rows[i] & 0xffff));
    } else {
      std::vector<uint64_t> words(1024, 0);
      for (size_t i = c.begin; i < c.end; ++i) {
        const uint32_t low = rows[i] & 0xffff;
        words[low / 64] |= uint64_t{1} << (low % 64);
      }
      for (uint64_t w : words) PutLittle<uint64_t>(&out, w);
    }
  }
  return out;
}

}  // namespace

std::vector<uint64_t> ParseRoaringBitmapArray(std::string_view bytes, const std::string& context) {
  Cursor in(bytes, context);
  const uint32_t magic = in.Little<uint32_t>();
  const uint32_t magic_be = __builtin_bswap32(magic);
  std::vector<uint64_t> rows;
  if (magic == kMagic) {
    // Portable: uint64 bucket count, then (uint32 key, 32-bit RoaringBitmap) per bucket, all little-endian.
    const uint64_t buckets = in.Little<uint64_t>();
    LAKERUN_CHECK_AS(CorruptDataError, buckets <= in.left() / 8 + 1, context, ": deletion vector claims ", buckets,
                     " buckets in ", in.left(), " bytes");
    int64_t previous_key = -1;
    for (uint64_t b = 0; b < buckets; ++b) {
      const uint32_t key = in.Little<uint32_t>();
      LAKERUN_CHECK_AS(CorruptDataError, static_cast<int64_t>(key) > previous_key && (key >> 31) == 0, context,
                       ": deletion vector bucket keys must ascend and have a zero top bit, got ", key);
      previous_key = key;
      Parse32(in, key, &rows, context);
    }
  } else if (magic == kNativeMagic || magic_be == kNativeMagic) {
    // Native: uint32 bitmap count, then (uint32 length, 32-bit RoaringBitmap) per bitmap; bitmap i holds the rows
    // whose high 32 bits are i. PROTOCOL.md's inline example uses this framing with big-endian integers.
    const bool big = magic_be == kNativeMagic;
    auto next32 = [&] {
      const uint32_t v = in.Little<uint32_t>();
      return big ? __builtin_bswap32(v) : v;
    };
    const uint32_t count = next32();
    LAKERUN_CHECK_AS(CorruptDataError, count <= in.left() / 4 + 1, context, ": deletion vector claims ", count,
                     " bitmaps in ", in.left(), " bytes");
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t length = next32();
      const size_t start = in.pos();
      Parse32(in, i, &rows, context);
      LAKERUN_CHECK_AS(CorruptDataError, in.pos() - start == length, context, ": bitmap ", i, " is ",
                       in.pos() - start, " bytes, its length prefix says ", length);
    }
  } else {
    LAKERUN_THROW(CorruptDataError, context, ": deletion vector has magic number ", magic, ", expected ", kMagic);
  }
  // Containers are sorted by key and their values ascend; keep the contract even for odd writers.
  if (!std::is_sorted(rows.begin(), rows.end())) std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::string SerializeRoaringBitmapArray(const std::vector<uint64_t>& rows) {
  LAKERUN_CHECK(std::is_sorted(rows.begin(), rows.end()) &&
                    std::adjacent_find(rows.begin(), rows.end()) == rows.end(),
                "deletion vector rows must be sorted and unique");
  std::string out;
  PutLittle<uint32_t>(&out, kMagic);
  std::string body;
  uint64_t buckets = 0;
  for (size_t i = 0; i < rows.size();) {
    const uint64_t high = rows[i] >> 32;
    LAKERUN_CHECK((high >> 31) == 0, "deletion vector row index ", rows[i], " is too large");
    size_t j = i;
    while (j < rows.size() && (rows[j] >> 32) == high) ++j;
    PutLittle<uint32_t>(&body, static_cast<uint32_t>(high));
    body += Serialize32(rows, i, j);
    ++buckets;
    i = j;
  }
  PutLittle<uint64_t>(&out, buckets);
  return out + body;
}

std::string DeletionVectorFilePath(const std::string& table_path, const DeletionVectorDescriptor& dv,
                                   const std::string& context) {
  if (dv.storage_type == 'p') {
    return internal::UriToLocalPath(internal::PercentDecode(dv.path_or_inline_dv, context), context);
  }
  LAKERUN_CHECK_AS(CorruptDataError, dv.storage_type == 'u', context, ": deletion vector with storage type '",
                   dv.storage_type, "' has no file");
  const std::string& text = dv.path_or_inline_dv;
  LAKERUN_CHECK_AS(CorruptDataError, text.size() >= 20, context, ": deletion vector pathOrInlineDv '", text,
                   "' is shorter than a Z85 UUID (20 characters)");
  const std::string prefix = text.substr(0, text.size() - 20);
  const std::string uuid = UuidToString(Z85Decode(text.substr(text.size() - 20), context));
  const std::string name = "deletion_vector_" + uuid + ".bin";
  return prefix.empty() ? JoinPath(table_path, name) : JoinPath(JoinPath(table_path, prefix), name);
}

std::vector<uint64_t> LoadDeletionVector(FileSystem& fs, const std::string& table_path,
                                         const DeletionVectorDescriptor& dv, const std::string& context) {
  LAKERUN_CHECK_AS(CorruptDataError, dv.size_in_bytes >= 12, context, ": deletion vector sizeInBytes ",
                   dv.size_in_bytes, " is too small");
  std::string bitmap;
  std::string where;
  if (dv.storage_type == 'i') {
    where = StrCat(context, " inline deletion vector");
    std::string decoded = Z85Decode(dv.path_or_inline_dv, where);
    LAKERUN_CHECK_AS(CorruptDataError, decoded.size() >= static_cast<size_t>(dv.size_in_bytes), where, ": decodes to ",
                     decoded.size(), " bytes, sizeInBytes says ", dv.size_in_bytes);
    bitmap = decoded.substr(0, static_cast<size_t>(dv.size_in_bytes));
  } else {
    const std::string path = DeletionVectorFilePath(table_path, dv, context);
    where = StrCat(context, " deletion vector file ", path);
    std::unique_ptr<RandomAccessFile> file;
    try {
      file = fs.OpenForRead(path);
    } catch (const IoError& e) {
      LAKERUN_THROW(IoError, where, ": cannot open: ", e.what());
    }
    LAKERUN_CHECK_AS(CorruptDataError, dv.offset.value_or(0) >= 0, where, ": negative offset ", *dv.offset);
    const uint64_t offset = static_cast<uint64_t>(dv.offset.value_or(0));
    const uint64_t need = offset + 4 + static_cast<uint64_t>(dv.size_in_bytes) + 4;
    LAKERUN_CHECK_AS(CorruptDataError, file->Size() >= 1 && file->Size() >= need, where, ": file has ", file->Size(),
                     " bytes, the deletion vector at offset ", offset, " with sizeInBytes ", dv.size_in_bytes,
                     " needs ", need);
    const std::string version = file->ReadAt(0, 1);
    LAKERUN_CHECK_AS(CorruptDataError, version[0] == 1, where, ": format version ",
                     static_cast<int>(static_cast<unsigned char>(version[0])), ", expected 1");
    const std::string chunk = file->ReadAt(offset, static_cast<size_t>(dv.size_in_bytes) + 8);
    const uint32_t stored_size = Big32(chunk);
    LAKERUN_CHECK_AS(CorruptDataError, stored_size == static_cast<uint32_t>(dv.size_in_bytes), where,
                     ": stored size ", stored_size, " at offset ", offset, " does not match sizeInBytes ",
                     dv.size_in_bytes);
    bitmap = chunk.substr(4, static_cast<size_t>(dv.size_in_bytes));
    const uint32_t stored_crc = Big32(std::string_view(chunk).substr(4 + dv.size_in_bytes));
    const uint32_t crc = Crc32(bitmap);
    LAKERUN_CHECK_AS(CorruptDataError, crc == stored_crc, where, ": checksum mismatch at offset ", offset,
                     " (stored CRC-32 ", stored_crc, ", computed ", crc, ")");
  }
  std::vector<uint64_t> rows = ParseRoaringBitmapArray(bitmap, where);
  LAKERUN_CHECK_AS(CorruptDataError, static_cast<int64_t>(rows.size()) == dv.cardinality, where, ": holds ",
                   rows.size(), " row indexes, cardinality says ", dv.cardinality);
  return rows;
}

DeletionVectorDescriptor InlineDeletionVector(const std::vector<uint64_t>& rows) {
  const std::string bitmap = SerializeRoaringBitmapArray(rows);
  DeletionVectorDescriptor dv;
  dv.storage_type = 'i';
  dv.path_or_inline_dv = Z85Encode(bitmap);
  dv.size_in_bytes = static_cast<int32_t>(bitmap.size());
  dv.cardinality = static_cast<int64_t>(rows.size());
  return dv;
}

DeletionVectorDescriptor WriteDeletionVectorFile(FileSystem& fs, const std::string& table_path,
                                                 const std::vector<uint64_t>& rows, const std::string& prefix) {
  const std::string bitmap = SerializeRoaringBitmapArray(rows);
  std::string uuid_bytes(16, '\0');
  const std::string uuid = RandomUuid();
  for (size_t i = 0, j = 0; i < uuid.size(); ++i) {
    if (uuid[i] == '-') continue;
    auto hex = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    uuid_bytes[j / 2] = static_cast<char>(uuid_bytes[j / 2] | (hex(uuid[i]) << (j % 2 ? 0 : 4)));
    ++j;
  }
  DeletionVectorDescriptor dv;
  dv.storage_type = 'u';
  dv.path_or_inline_dv = prefix + Z85Encode(uuid_bytes);
  dv.offset = 1;
  dv.size_in_bytes = static_cast<int32_t>(bitmap.size());
  dv.cardinality = static_cast<int64_t>(rows.size());
  std::string contents(1, '\1');
  PutBig32(&contents, static_cast<uint32_t>(bitmap.size()));
  contents += bitmap;
  PutBig32(&contents, Crc32(bitmap));
  const std::string path = DeletionVectorFilePath(table_path, dv, "new deletion vector");
  fs.CreateDirs(DirName(path));
  fs.WriteAtomically(path, contents);
  return dv;
}

}  // namespace lakerun::delta
