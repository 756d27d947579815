#include "format/parquet/snappy_decoder.h"

#include <cstring>

namespace lakerun::parquet {
namespace {

// While this many input and output bytes remain, a tag's whole-block writes and reads stay inside the buffers:
// a literal of <= 60 bytes is copied as 64 bytes; a copy of <= 64 bytes writes at most 64 + 16 bytes past its
// start (8-byte pattern steps start < 8 bytes in); a tag plus its extra bytes is at most 5 bytes.
constexpr size_t kSnappyFastMargin = 128;

inline void Copy8(uint8_t* dst, const uint8_t* src) {
  uint64_t v;
  std::memcpy(&v, src, 8);
  std::memcpy(dst, &v, 8);
}

inline void Copy16(uint8_t* dst, const uint8_t* src) {
  uint64_t a, b;
  std::memcpy(&a, src, 8);
  std::memcpy(&b, src + 8, 8);
  std::memcpy(dst, &a, 8);
  std::memcpy(dst + 8, &b, 8);
}

inline uint32_t Load16(const uint8_t* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (x86-64, aarch64)
}

// Copies len (<= 64) bytes from op - offset to op, where 1 <= offset <= op - out's start and at least 80 bytes of
// output remain at op. Writes may run up to 16 bytes past op + len.
inline void FastCopy(uint8_t* op, size_t offset, size_t len) {
  const uint8_t* src = op - offset;
  if (offset >= 16) {
    // Each 16-byte block reads only bytes written before it (offset >= 16).
    Copy16(op, src);
    for (size_t i = 16; i < len; i += 16) Copy16(op + i, src + i);
    return;
  }
  if (offset == 1) {
    std::memset(op, src[0], 64);  // a run of one byte (the common short offset: zero runs)
    return;
  }
  // Widen the distance to >= 8 by doubling: after Copy8 at distance d, the first d bytes at op are right and the
  // output is periodic with period `offset`, so any multiple of it is a valid distance.
  uint8_t* d = op;
  while (static_cast<size_t>(d - src) < 8) {
    Copy8(d, src);
    d += d - src;
  }
  uint8_t* const end = op + len;
  while (d < end) {
    Copy8(d, src);
    d += 8;
    src += 8;
  }
}

// Decodes the tag at ip and advances ip and op past it; false on corrupt input. kFast: at least kSnappyFastMargin
// bytes of input (from ip) and of output (from op) remain, so whole-block reads and writes stay inside the buffers
// and a tag's extra bytes need no bounds check; otherwise every access is exact.
template <bool kFast>
inline bool DecodeTag(const uint8_t*& ip, uint8_t*& op, const uint8_t* ip_end, uint8_t* out, uint8_t* op_end) {
  const uint8_t tag = *ip++;
  const uint32_t kind = tag & 3;
  if (kind == 0) {
    size_t len = (tag >> 2) + 1;
    if (kFast && len <= 60) {
      // Whole blocks: 64 bytes read and written, both within the margins.
      Copy16(op, ip);
      Copy16(op + 16, ip + 16);
      Copy16(op + 32, ip + 32);
      Copy16(op + 48, ip + 48);
    } else {
      if (len > 60) {
        const size_t extra = len - 60;  // 1..4 little-endian length bytes
        if (static_cast<size_t>(ip_end - ip) < extra) return false;
        size_t l = 0;
        for (size_t k = 0; k < extra; ++k) l |= static_cast<size_t>(ip[k]) << (8 * k);
        ip += extra;
        len = l + 1;
      }
      if (static_cast<size_t>(ip_end - ip) < len || static_cast<size_t>(op_end - op) < len) return false;
      std::memcpy(op, ip, len);
    }
    ip += len;
    op += len;
    return true;
  }
  size_t len, offset;
  if (kind == 1) {
    if (!kFast && ip >= ip_end) return false;
    len = ((tag >> 2) & 7) + 4;
    offset = (static_cast<size_t>(tag >> 5) << 8) | *ip++;
  } else if (kind == 2) {
    if (!kFast && ip_end - ip < 2) return false;
    len = (tag >> 2) + 1;
    offset = Load16(ip);
    ip += 2;
  } else {
    if (!kFast && ip_end - ip < 4) return false;
    len = (tag >> 2) + 1;
    offset = Load32(ip);
    ip += 4;
  }
  if (offset == 0 || offset > static_cast<size_t>(op - out)) return false;
  if (kFast) {
    FastCopy(op, offset, len);
  } else {
    if (static_cast<size_t>(op_end - op) < len) return false;
    const uint8_t* src = op - offset;
    for (size_t k = 0; k < len; ++k) op[k] = src[k];  // byte by byte: overlapping copies repeat the pattern
  }
  op += len;
  return true;
}

}  // namespace

bool SnappyUncompressedLength(const uint8_t* in, size_t in_size, size_t* length, size_t* header_bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < 5 && i < in_size; ++i) {
    v |= static_cast<uint64_t>(in[i] & 0x7f) << (7 * i);
    if ((in[i] & 0x80) == 0) {
      if (v > 0xffffffffu) return false;
      *length = static_cast<size_t>(v);
      *header_bytes = i + 1;
      return true;
    }
  }
  return false;
}

bool SnappyDecompress(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size) {
  size_t declared = 0, header = 0;
  if (!SnappyUncompressedLength(in, in_size, &declared, &header) || declared != out_size) return false;
  const uint8_t* ip = in + header;
  const uint8_t* const ip_end = in + in_size;
  uint8_t* op = out;
  uint8_t* const op_end = out + out_size;

  if (in_size >= kSnappyFastMargin && out_size >= kSnappyFastMargin) {
    const uint8_t* const ip_limit = ip_end - kSnappyFastMargin;
    uint8_t* const op_limit = op_end - kSnappyFastMargin;
    while (ip < ip_limit && op < op_limit) {
      if (!DecodeTag<true>(ip, op, ip_end, out, op_end)) return false;
    }
  }
  while (ip < ip_end) {
    if (!DecodeTag<false>(ip, op, ip_end, out, op_end)) return false;
  }
  return op == op_end;
}

}  // namespace lakerun::parquet
