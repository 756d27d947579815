// LSB-first bit packing, the layout of the RLE/bit-packed hybrid and DELTA_BINARY_PACKED.
#pragma once

#include <cstdint>
#include <string>

namespace lakerun::parquet {

class BitWriter {
 public:
  explicit BitWriter(std::string* out) : out_(out) {}
  ~BitWriter() { Flush(); }

  /// Appends the low `bits` bits of `v` (bits <= 64).
  void Put(uint64_t v, int bits) {
    if (bits > 32) {
      Put32(static_cast<uint32_t>(v), 32);
      Put32(static_cast<uint32_t>(v >> 32), bits - 32);
    } else {
      Put32(static_cast<uint32_t>(v), bits);
    }
  }
  /// Writes out a partial byte (zero-padded).
  void Flush() {
    while (count_ > 0) {
      out_->push_back(static_cast<char>(acc_ & 0xff));
      acc_ >>= 8;
      count_ = count_ > 8 ? count_ - 8 : 0;
    }
    acc_ = 0;
  }

 private:
  void Put32(uint32_t v, int bits) {
    if (bits == 0) return;
    const uint64_t masked = bits == 32 ? v : (v & ((uint32_t{1} << bits) - 1));
    acc_ |= masked << count_;
    count_ += bits;
    while (count_ >= 8) {
      out_->push_back(static_cast<char>(acc_ & 0xff));
      acc_ >>= 8;
      count_ -= 8;
    }
  }

  std::string* out_;
  uint64_t acc_ = 0;
  int count_ = 0;  // < 8 between calls
};

inline void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline uint64_t ZigZag64(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

}  // namespace lakerun::parquet
