#include "format/parquet/delta_binary_packed.h"

#include <cstring>

#include "format/parquet/bit_unpack.h"
#include "format/parquet/value_decoders.h"

namespace lakerun::parquet {

uint64_t DeltaBinaryPackedDecoder::ReadVarint() {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    if (pos_ >= size_) context_->Fail("DELTA_BINARY_PACKED: truncated varint");
    if (shift > 63) context_->Fail("DELTA_BINARY_PACKED: varint too long");
    uint8_t b = data_[pos_++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

DeltaBinaryPackedDecoder::DeltaBinaryPackedDecoder(const uint8_t* data, size_t size, const DecodeContext* context)
    : data_(data), size_(size), context_(context) {
  block_size_ = ReadVarint();
  miniblocks_ = ReadVarint();
  uint64_t total = ReadVarint();
  uint64_t zz = ReadVarint();
  last_ = (zz >> 1) ^ (~(zz & 1) + 1);
  if (block_size_ == 0 || block_size_ % 128 != 0 || block_size_ > (1u << 20) || miniblocks_ == 0 ||
      miniblocks_ > 256 || block_size_ % miniblocks_ != 0 || (block_size_ / miniblocks_) % 32 != 0) {
    context_->Fail(StrCat("DELTA_BINARY_PACKED: invalid block size ", block_size_, " with ", miniblocks_,
                          " miniblocks"));
  }
  if (total > (uint64_t{1} << 40)) context_->Fail(StrCat("DELTA_BINARY_PACKED: ", total, " values announced"));
  values_per_miniblock_ = block_size_ / miniblocks_;
  total_ = static_cast<int64_t>(total);
  miniblock_index_ = miniblocks_;
}

void DeltaBinaryPackedDecoder::StartBlock() {
  uint64_t zz = ReadVarint();
  min_delta_ = (zz >> 1) ^ (~(zz & 1) + 1);
  if (miniblocks_ > size_ - pos_) context_->Fail("DELTA_BINARY_PACKED: truncated miniblock bit widths");
  std::memcpy(widths_, data_ + pos_, miniblocks_);
  pos_ += miniblocks_;
  miniblock_index_ = 0;
}

void DeltaBinaryPackedDecoder::StartMiniblock() {
  if (miniblock_index_ >= miniblocks_) StartBlock();
  const int w = widths_[miniblock_index_++];
  if (w > 64) context_->Fail(StrCat("DELTA_BINARY_PACKED: miniblock bit width ", w, " > 64"));
  const size_t bytes = static_cast<size_t>(values_per_miniblock_ * static_cast<uint64_t>(w) / 8);
  mb_data_ = data_ + pos_;
  // The last miniblock of a stream may be cut short; values past the data read as zero bits and are never used.
  mb_left_ = bytes <= size_ - pos_ ? bytes : size_ - pos_;
  pos_ += mb_left_;
  mb_width_ = w;
  left_in_miniblock_ = values_per_miniblock_;
  delta_pos_ = 8;
}

template <typename T>
void DeltaBinaryPackedDecoder::Decode(T* out, int64_t n) {
  using U = std::make_unsigned_t<T>;
  if (n < 0 || n > total_ - produced_) {
    context_->Fail(StrCat("DELTA_BINARY_PACKED: ", n, " values wanted, ", total_ - produced_, " left of ", total_));
  }
  int64_t i = 0;
  if (n > 0 && first_pending_) {
    out[i++] = static_cast<T>(static_cast<U>(last_));
    first_pending_ = false;
  }
  // Miniblocks may be wider than T (up to 64 bits, checked in StartMiniblock): writers that compute INT32 deltas in
  // 64 bits (DuckDB's PARQUET_VERSION V2) emit 33-bit widths. The sum below wraps in T's width, which yields the
  // same values as 32-bit deltas would.
  while (i < n) {
    if (delta_pos_ == 8) {
      if (left_in_miniblock_ == 0) StartMiniblock();
      // Unpack the next 8 deltas through a padded copy when the miniblock data is short.
      const size_t group_bytes = static_cast<size_t>(mb_width_);
      if (mb_left_ >= group_bytes + 16) {
        bits::Unpack8Wide(mb_data_, mb_width_, deltas_);
      } else {
        uint8_t padded[64 + 16] = {};
        std::memcpy(padded, mb_data_, mb_left_ < group_bytes ? mb_left_ : group_bytes);
        bits::Unpack8Wide(padded, mb_width_, deltas_);
      }
      const size_t used = mb_left_ < group_bytes ? mb_left_ : group_bytes;
      mb_data_ += used;
      mb_left_ -= used;
      left_in_miniblock_ -= 8;
      delta_pos_ = 0;
    }
    U v = static_cast<U>(last_) + static_cast<U>(min_delta_) + static_cast<U>(deltas_[delta_pos_++]);
    last_ = v;
    out[i++] = static_cast<T>(v);
  }
  produced_ += n;
}

template void DeltaBinaryPackedDecoder::Decode<int32_t>(int32_t*, int64_t);
template void DeltaBinaryPackedDecoder::Decode<int64_t>(int64_t*, int64_t);

size_t DecodeDeltaBinaryPacked(const uint8_t* data, size_t size, int64_t n, ColumnData* out,
                               const DecodeContext& ctx) {
  DeltaBinaryPackedDecoder dec(data, size, &ctx);
  if (n < 0 || n > dec.total_values()) {
    ctx.Fail(StrCat("DELTA_BINARY_PACKED: page needs ", n, " values, the encoding holds ", dec.total_values()));
  }
  Buffer& buf = out->mutable_value_buffer();
  const size_t base = buf.size();
  if (out->type() == PhysicalType::kInt32) {
    buf.Resize(base + static_cast<size_t>(n) * 4);
    dec.Decode<int32_t>(reinterpret_cast<int32_t*>(buf.data() + base), n);
  } else if (out->type() == PhysicalType::kInt64) {
    buf.Resize(base + static_cast<size_t>(n) * 8);
    dec.Decode<int64_t>(reinterpret_cast<int64_t*>(buf.data() + base), n);
  } else {
    ctx.Fail(StrCat("DELTA_BINARY_PACKED is not valid for ", ToString(out->type())));
  }
  out->set_num_values(out->num_values() + n);
  return dec.position();
}

}  // namespace lakerun::parquet
