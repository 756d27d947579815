#include <cstring>
#include <vector>

#include "format/parquet/rle_decoder.h"
#include "format/parquet/value_decoders.h"

namespace lakerun::parquet {
namespace {

template <typename T>
void GatherFixed(const uint32_t* idx, int64_t n, const T* dict, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = dict[idx[i]];
}

}  // namespace

size_t DecodeDictionaryIndices(const uint8_t* data, size_t size, int64_t n, const ColumnData& dictionary,
                               ColumnData* out, const DecodeContext& ctx) {
  if (n == 0) return size;
  if (size < 1) ctx.Fail("dictionary-encoded page without its bit-width byte");
  const int bw = data[0];
  if (bw > 32) ctx.Fail(StrCat("dictionary index bit width ", bw, " > 32"));
  const int64_t dict_size = dictionary.num_values();
  RleDecoder dec(data + 1, size - 1, bw, &ctx);
  // Decode in batches so the index scratch stays small for huge pages.
  constexpr int64_t kBatch = 4096;
  uint32_t idx[kBatch];
  Buffer& buf = out->mutable_value_buffer();
  const PhysicalType type = out->type();
  const int width = out->value_width();
  if (type != PhysicalType::kByteArray) buf.Reserve(buf.size() + static_cast<size_t>(n) * width);
  for (int64_t done = 0; done < n;) {
    const int64_t k = std::min(kBatch, n - done);
    dec.Decode<uint32_t>(idx, k);
    uint32_t max_index = 0;
    for (int64_t i = 0; i < k; ++i) max_index = idx[i] > max_index ? idx[i] : max_index;
    if (static_cast<int64_t>(max_index) >= dict_size) {
      ctx.Fail(StrCat("dictionary index ", max_index, " out of range: the dictionary has ", dict_size, " entries"));
    }
    if (type == PhysicalType::kByteArray) {
      const auto& offsets = dictionary.offsets();
      const uint8_t* bytes = dictionary.value_buffer().data();
      for (int64_t i = 0; i < k; ++i) {
        const int64_t b = offsets[idx[i]], e = offsets[idx[i] + 1];
        AppendByteArray(out, bytes + b, static_cast<size_t>(e - b));
      }
      done += k;
      continue;
    }
    const size_t base = buf.size();
    buf.Resize(base + static_cast<size_t>(k) * width);
    uint8_t* dst = buf.data() + base;
    const uint8_t* src = dictionary.value_buffer().data();
    switch (width) {
      case 1: GatherFixed(idx, k, src, dst); break;
      case 4:
        GatherFixed(idx, k, reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst));
        break;
      case 8:
        GatherFixed(idx, k, reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst));
        break;
      default:
        for (int64_t i = 0; i < k; ++i) std::memcpy(dst + i * width, src + static_cast<size_t>(idx[i]) * width, width);
    }
    out->set_num_values(out->num_values() + k);
    done += k;
  }
  return size;
}

}  // namespace lakerun::parquet
