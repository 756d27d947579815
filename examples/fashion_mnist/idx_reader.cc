#include "idx_reader.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>

#include "lakerun/base/error.h"

namespace lakerun::examples {
namespace {

// Bounds that reject a corrupt header before it makes the reader allocate gigabytes.
constexpr uint32_t kMaxCount = 10'000'000;
constexpr uint32_t kMaxSide = 1024;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

GzFile Open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    LAKERUN_THROW(IoError, "cannot open IDX file ", path, ": ", std::strerror(err),
                  err == ENOENT ? " (Fashion-MNIST is in Debian's dataset-fashion-mnist package: "
                                  "`apt-get install dataset-fashion-mnist` or scripts/setup.sh; "
                                  "or point --data-dir at a directory holding the four *-ubyte.gz files)"
                                : "");
  }
  LAKERUN_CHECK_AS(IoError, S_ISREG(st.st_mode), "cannot open IDX file ", path, ": not a regular file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    LAKERUN_THROW(IoError, "cannot open IDX file ", path, ": ", std::strerror(err));
  }
  gzbuffer(f, 1 << 17);
  return GzFile(f);
}

// Reads up to n bytes; returns how many were read (fewer only at the end of the stream). Throws on a broken stream.
size_t ReadSome(gzFile f, const std::string& path, uint64_t offset, void* out, size_t n) {
  char* dst = static_cast<char*>(out);
  size_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
    const int got = gzread(f, dst + done, chunk);
    if (got < 0) {
      int err = 0;
      const char* message = gzerror(f, &err);
      LAKERUN_THROW(CorruptDataError, path, ": cannot decompress at uncompressed offset ", offset + done, ": ",
                    message);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  // A stream cut short reads as a short count plus Z_BUF_ERROR ("unexpected end of file").
  int err = Z_OK;
  const char* message = gzerror(f, &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    LAKERUN_THROW(CorruptDataError, path, ": gzip stream broken at uncompressed offset ", offset + done, ": ",
                  message);
  }
  return done;
}

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Reads the header words: magic plus `ndims` dimensions. Checks the magic.
std::vector<uint32_t> ReadHeader(gzFile f, const std::string& path, uint32_t want_magic, int ndims) {
  std::vector<uint8_t> raw(4 * (1 + ndims));
  const size_t got = ReadSome(f, path, 0, raw.data(), raw.size());
  LAKERUN_CHECK_AS(CorruptDataError, got == raw.size(), path, ": truncated IDX header: ", got, " bytes, expected ",
                   raw.size());
  const uint32_t magic = BigEndian32(raw.data());
  if (magic != want_magic) {
    LAKERUN_THROW(CorruptDataError, path, ": bad IDX magic number 0x", std::hex, magic, ", expected 0x", want_magic,
                  std::dec, want_magic == kIdxImagesMagic ? " (unsigned-byte images, 3 dimensions)"
                                                          : " (unsigned-byte labels, 1 dimension)");
  }
  std::vector<uint32_t> dims;
  for (int i = 0; i < ndims; ++i) dims.push_back(BigEndian32(raw.data() + 4 * (i + 1)));
  return dims;
}

// Reads exactly the payload and checks nothing follows it.
void ReadPayload(gzFile f, const std::string& path, uint64_t header_bytes, std::vector<uint8_t>& out,
                 const std::string& what) {
  const size_t got = ReadSome(f, path, header_bytes, out.data(), out.size());
  if (got != out.size()) {
    LAKERUN_THROW(CorruptDataError, path, ": truncated: the header declares ", what, " (", out.size(),
                  " bytes of data) but the file holds only ", got, " bytes after the ", header_bytes,
                  "-byte header");
  }
  uint8_t extra = 0;
  const size_t trailing = ReadSome(f, path, header_bytes + got, &extra, 1);
  LAKERUN_CHECK_AS(CorruptDataError, trailing == 0, path, ": unexpected bytes after the ", out.size(),
                   " bytes of data the header declares (", what, ")");
}

}  // namespace

IdxImages ReadIdxImages(const std::string& path) {
  GzFile file = Open(path);
  const std::vector<uint32_t> dims = ReadHeader(file.get(), path, kIdxImagesMagic, 3);
  LAKERUN_CHECK_AS(CorruptDataError, dims[0] <= kMaxCount && dims[1] >= 1 && dims[1] <= kMaxSide && dims[2] >= 1 &&
                                         dims[2] <= kMaxSide,
                   path, ": implausible IDX image dimensions ", dims[0], " x ", dims[1], " x ", dims[2],
                   " (expected at most ", kMaxCount, " images of at most ", kMaxSide, " x ", kMaxSide, ")");
  IdxImages images;
  images.count = dims[0];
  images.rows = dims[1];
  images.cols = dims[2];
  images.pixels.resize(static_cast<size_t>(images.count * images.rows * images.cols));
  ReadPayload(file.get(), path, 16, images.pixels,
              StrCat(images.count, " images of ", images.rows, "x", images.cols));
  return images;
}

IdxLabels ReadIdxLabels(const std::string& path) {
  GzFile file = Open(path);
  const std::vector<uint32_t> dims = ReadHeader(file.get(), path, kIdxLabelsMagic, 1);
  LAKERUN_CHECK_AS(CorruptDataError, dims[0] <= kMaxCount, path, ": implausible IDX label count ", dims[0],
                   " (expected at most ", kMaxCount, ")");
  IdxLabels labels;
  labels.labels.resize(dims[0]);
  ReadPayload(file.get(), path, 8, labels.labels, StrCat(dims[0], " labels"));
  return labels;
}

}  // namespace lakerun::examples
