#include "format/parquet/rle_decoder.h"

#include <algorithm>
#include <cstring>

#include "format/parquet/bit_unpack.h"

namespace lakerun::parquet {

RleDecoder::RleDecoder(const uint8_t* data, size_t size, int bit_width, const DecodeContext* context)
    : data_(data), size_(size), bit_width_(bit_width), context_(context) {
  if (bit_width < 0 || bit_width > 32) context_->Fail(StrCat("RLE/bit-packed bit width ", bit_width, " > 32"));
}

bool RleDecoder::NextRun() {
  if (pos_ >= size_) return false;
  uint64_t header = 0;
  for (int shift = 0;; shift += 7) {
    if (pos_ >= size_) context_->Fail("truncated RLE run header");
    if (shift > 63) context_->Fail("RLE run header varint too long");
    uint8_t b = data_[pos_++];
    header |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (header & 1) {
    const uint64_t groups = header >> 1;
    if (groups > (uint64_t{1} << 40)) context_->Fail(StrCat("bit-packed run of ", groups, " groups"));
    uint64_t bytes = groups * static_cast<uint64_t>(bit_width_);
    uint64_t values = groups * 8;
    if (bytes > size_ - pos_) {
      // Some writers end the last bit-packed run early; accept the whole values that are there.
      bytes = size_ - pos_;
      values = bytes * 8 / static_cast<uint64_t>(bit_width_);
      if (values == 0) context_->Fail(StrCat("bit-packed run at byte ", pos_, " overruns the data"));
    }
    rle_ = false;
    remaining_ = static_cast<int64_t>(values);
    packed_ = data_ + pos_;
    packed_bytes_left_ = static_cast<int64_t>(bytes);
    pos_ += bytes;
    group_pos_ = 8;
  } else {
    uint64_t count = header >> 1;
    if (count > (uint64_t{1} << 40)) context_->Fail(StrCat("RLE run of ", count, " values"));
    size_t value_bytes = static_cast<size_t>((bit_width_ + 7) / 8);
    if (value_bytes > size_ - pos_) context_->Fail("truncated RLE run value");
    uint32_t v = 0;
    for (size_t i = 0; i < value_bytes; ++i) v |= static_cast<uint32_t>(data_[pos_ + i]) << (8 * i);
    pos_ += value_bytes;
    if (bit_width_ < 32 && (v >> bit_width_) != 0) {
      context_->Fail(StrCat("RLE run value ", v, " does not fit bit width ", bit_width_));
    }
    rle_ = true;
    rle_value_ = v;
    remaining_ = static_cast<int64_t>(count);
  }
  return true;
}

template <typename T>
void RleDecoder::Decode(T* out, int64_t n) {
  while (n > 0) {
    if (remaining_ == 0) {
      if (!NextRun()) context_->Fail(StrCat("RLE/bit-packed data ends ", n, " values early"));
      continue;
    }
    if (rle_) {
      int64_t k = std::min(n, remaining_);
      std::fill(out, out + k, static_cast<T>(rle_value_));
      out += k;
      n -= k;
      remaining_ -= k;
      continue;
    }
    // Bit-packed: drain a partly used group first.
    if (group_pos_ < 8) {
      while (group_pos_ < 8 && n > 0 && remaining_ > 0) {
        *out++ = static_cast<T>(group_[group_pos_++]);
        --n;
        --remaining_;
      }
      continue;
    }
    const int64_t bw = bit_width_;
    // Whole groups straight into the output, as long as 8 bytes of slack follow them in the input.
    int64_t whole = std::min(n, remaining_) / 8;
    if (bw > 0) whole = std::min<int64_t>(whole, std::max<int64_t>(0, (packed_bytes_left_ - 8) / bw));
    if (whole > 0) {
      bits::UnpackGroups<T>(packed_, static_cast<int>(bw), whole, out);
      packed_ += whole * bw;
      packed_bytes_left_ -= whole * bw;
      out += whole * 8;
      n -= whole * 8;
      remaining_ -= whole * 8;
      continue;
    }
    // One group through a padded copy (a short run near the end of the input, or fewer than 8 values wanted).
    uint8_t padded[48] = {};
    const int64_t take = std::min<int64_t>(bw, packed_bytes_left_);
    std::memcpy(padded, packed_, static_cast<size_t>(take));
    packed_ += take;
    packed_bytes_left_ -= take;
    if (n >= 8 && remaining_ >= 8) {
      bits::UnpackGroups<T>(padded, static_cast<int>(bw), 1, out);  // straight to the output
      out += 8;
      n -= 8;
      remaining_ -= 8;
      continue;
    }
    bits::UnpackGroups<uint32_t>(padded, static_cast<int>(bw), 1, group_);
    group_pos_ = 0;
  }
}

template void RleDecoder::Decode<uint32_t>(uint32_t*, int64_t);
template void RleDecoder::Decode<int16_t>(int16_t*, int64_t);
template void RleDecoder::Decode<uint8_t>(uint8_t*, int64_t);

}  // namespace lakerun::parquet
