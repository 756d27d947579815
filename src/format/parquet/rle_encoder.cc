#include "format/parquet/rle_encoder.h"

#include <cstring>

#include "format/parquet/bit_writer.h"

namespace lakerun::parquet {
namespace {

template <typename T>
void FlushPacked(const T* values, int64_t begin, int64_t end, int bit_width, std::string* out) {
  if (end <= begin) return;
  const int64_t groups = (end - begin + 7) / 8;
  AppendVarint(out, (static_cast<uint64_t>(groups) << 1) | 1);
  BitWriter w(out);
  for (int64_t i = begin; i < begin + groups * 8; ++i) {
    w.Put(i < end ? static_cast<uint64_t>(values[i]) : 0, bit_width);
  }
  w.Flush();
}

}  // namespace

template <typename T>
void EncodeRleHybrid(const T* values, int64_t n, int bit_width, std::string* out) {
  const int value_bytes = (bit_width + 7) / 8;
  int64_t packed_begin = 0;  // start of values not yet written
  int64_t i = 0;
  while (i < n) {
    int64_t run = 1;
    while (i + run < n && values[i + run] == values[i]) ++run;
    if (run >= 8) {
      // Bit-packed groups must hold multiples of 8 values: lend the run's first values to the pending ones.
      int64_t pending = i - packed_begin;
      int64_t lend = (8 - pending % 8) % 8;
      FlushPacked(values, packed_begin, i + lend, bit_width, out);
      const int64_t rle_count = run - lend;
      AppendVarint(out, static_cast<uint64_t>(rle_count) << 1);
      uint64_t v = static_cast<uint64_t>(values[i]);
      for (int b = 0; b < value_bytes; ++b) out->push_back(static_cast<char>((v >> (8 * b)) & 0xff));
      i += run;
      packed_begin = i;
    } else {
      i += run;
    }
  }
  FlushPacked(values, packed_begin, n, bit_width, out);
}

template <typename T>
void EncodeRleHybridWithLength(const T* values, int64_t n, int bit_width, std::string* out) {
  const size_t at = out->size();
  out->append(4, '\0');
  EncodeRleHybrid(values, n, bit_width, out);
  const uint32_t len = static_cast<uint32_t>(out->size() - at - 4);
  std::memcpy(out->data() + at, &len, 4);
}

template void EncodeRleHybrid<int16_t>(const int16_t*, int64_t, int, std::string*);
template void EncodeRleHybrid<uint32_t>(const uint32_t*, int64_t, int, std::string*);
template void EncodeRleHybrid<uint8_t>(const uint8_t*, int64_t, int, std::string*);
template void EncodeRleHybridWithLength<int16_t>(const int16_t*, int64_t, int, std::string*);
template void EncodeRleHybridWithLength<uint8_t>(const uint8_t*, int64_t, int, std::string*);

}  // namespace lakerun::parquet
