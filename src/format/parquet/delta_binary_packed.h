// Streaming decoder of DELTA_BINARY_PACKED (Encodings.md): header <block size> <miniblocks per block> <total count>
// <first value>, then blocks of <min delta> <bit width per miniblock> <miniblocks>. Arithmetic wraps (two's
// complement) in the width of the output type, as the spec requires.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/parquet/decode_context.h"

namespace lakerun::parquet {

class DeltaBinaryPackedDecoder {
 public:
  /// Parses the header. Throws CorruptDataError for an invalid block layout.
  DeltaBinaryPackedDecoder(const uint8_t* data, size_t size, const DecodeContext* context);

  /// Total values the header announces.
  int64_t total_values() const { return total_; }
  /// Decodes the next `n` values (T = int32_t or int64_t); throws when fewer remain.
  template <typename T>
  void Decode(T* out, int64_t n);
  /// Bytes consumed: after the header and every miniblock touched so far (whole miniblocks, as written).
  size_t position() const { return pos_; }

 private:
  void StartBlock();
  void StartMiniblock();
  uint64_t ReadVarint();

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const DecodeContext* context_;
  uint64_t block_size_ = 0;
  uint64_t miniblocks_ = 0;
  uint64_t values_per_miniblock_ = 0;
  int64_t total_ = 0;
  int64_t produced_ = 0;
  uint64_t last_ = 0;  // last value, as raw bits
  bool first_pending_ = true;
  // Current block / miniblock.
  uint64_t min_delta_ = 0;
  uint8_t widths_[256] = {};
  uint64_t miniblock_index_ = 0;  // within the block; == miniblocks_ when a new block must start
  uint64_t left_in_miniblock_ = 0;
  uint64_t deltas_[8] = {};
  int delta_pos_ = 8;
  const uint8_t* mb_data_ = nullptr;
  size_t mb_left_ = 0;  // bytes of the current miniblock left in the input
  int mb_width_ = 0;
};

}  // namespace lakerun::parquet
