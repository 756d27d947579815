// Decoder of the RLE/bit-packed hybrid encoding (levels, dictionary indices, RLE booleans).
//
// Input is the run data only (callers strip the 4-byte length prefix of v1 levels and the bit-width byte of
// dictionary indices). Never reads outside [data, data + size); malformed runs throw CorruptDataError through the
// DecodeContext.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/parquet/decode_context.h"

namespace lakerun::parquet {

class RleDecoder {
 public:
  /// `bit_width` must be in [0, 32]; throws CorruptDataError otherwise.
  RleDecoder(const uint8_t* data, size_t size, int bit_width, const DecodeContext* context);

  /// Decodes exactly `n` values into `out`; throws CorruptDataError when the data ends first.
  template <typename T>
  void Decode(T* out, int64_t n);

  /// Bytes consumed so far (up to the end of the current run's header and data).
  size_t position() const { return pos_; }

 private:
  bool NextRun();  // false at the end of the data

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  int bit_width_;
  const DecodeContext* context_;
  // Current run.
  bool rle_ = false;
  int64_t remaining_ = 0;      // values left in the run
  uint32_t rle_value_ = 0;
  const uint8_t* packed_ = nullptr;  // bit-packed: next group
  int64_t packed_bytes_left_ = 0;    // bytes of the run from packed_ on
  uint32_t group_[8] = {};           // a partly consumed bit-packed group
  int group_pos_ = 8;
};

/// Bit width needed for values in [0, max_value].
inline int BitWidthFor(uint64_t max_value) {
  int w = 0;
  while (max_value) {
    ++w;
    max_value >>= 1;
  }
  return w;
}

}  // namespace lakerun::parquet
