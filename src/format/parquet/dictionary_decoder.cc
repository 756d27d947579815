#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "format/parquet/rle_decoder.h"
#include "format/parquet/value_decoders.h"

namespace lakerun::parquet {
namespace {

template <typename T>
void GatherFixed(const uint32_t* idx, int64_t n, const T* dict, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = dict[idx[i]];
}

// Decodes index batches of at most kBatch through `dec`, checking each against the dictionary size.
constexpr int64_t kBatch = 4096;

void DecodeIndexBatch(RleDecoder& dec, uint32_t* idx, int64_t k, int64_t dict_size, const DecodeContext& ctx) {
  dec.Decode<uint32_t>(idx, k);
  uint32_t max_index = 0;
  for (int64_t i = 0; i < k; ++i) max_index = idx[i] > max_index ? idx[i] : max_index;
  if (static_cast<int64_t>(max_index) >= dict_size) {
    ctx.Fail(StrCat("dictionary index ", max_index, " out of range: the dictionary has ", dict_size, " entries"));
  }
}

RleDecoder IndexDecoder(const uint8_t* data, size_t size, const DecodeContext& ctx) {
  if (size < 1) ctx.Fail("dictionary-encoded page without its bit-width byte");
  const int bw = data[0];
  if (bw > 32) ctx.Fail(StrCat("dictionary index bit width ", bw, " > 32"));
  return RleDecoder(data + 1, size - 1, bw, &ctx);
}

}  // namespace

void GatherFromDictionary(const uint32_t* idx, int64_t k, const ColumnData& dictionary, ColumnData* out) {
  if (k <= 0) return;
  const PhysicalType type = out->type();
  if (out->has_views()) {
    // Views of views: 16 bytes per value, whatever the value's length.
    Buffer& views = out->mutable_view_buffer();
    const size_t base = views.size();
    views.Resize(base + static_cast<size_t>(k) * sizeof(std::string_view));
    auto* dst = reinterpret_cast<std::string_view*>(views.data() + base);
    const std::string_view* src = dictionary.views();
    for (int64_t i = 0; i < k; ++i) dst[i] = src[idx[i]];
    out->set_num_values(out->num_values() + k);
    return;
  }
  Buffer& buf = out->mutable_value_buffer();
  if (type == PhysicalType::kByteArray) {
    // Sizes first, then one resize of the bytes and the offsets and a copy per value.
    const int64_t* doff = dictionary.offsets().data();
    const uint8_t* dbytes = dictionary.value_buffer().data();
    auto& offsets = out->mutable_offsets();
    if (offsets.empty()) offsets.push_back(0);
    const size_t first = offsets.size();
    offsets.resize(first + static_cast<size_t>(k));
    int64_t end = offsets[first - 1];
    for (int64_t i = 0; i < k; ++i) {
      end += doff[idx[i] + 1] - doff[idx[i]];
      offsets[first + static_cast<size_t>(i)] = end;
    }
    const size_t start = buf.size();
    if (static_cast<size_t>(end) == start) {  // only empty values: nothing to copy (and buf.data() may be null)
      out->set_num_values(out->num_values() + k);
      return;
    }
    buf.Resize(static_cast<size_t>(end));
    uint8_t* dst = buf.data() + start;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t b = doff[idx[i]];
      const size_t len = static_cast<size_t>(doff[idx[i] + 1] - b);
      std::memcpy(dst, dbytes + b, len);
      dst += len;
    }
    out->set_num_values(out->num_values() + k);
    return;
  }
  const int width = out->value_width();
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
}

size_t DecodeDictionaryIndices(const uint8_t* data, size_t size, int64_t n, const ColumnData& dictionary,
                               ColumnData* out, const DecodeContext& ctx) {
  if (n == 0) return size;
  RleDecoder dec = IndexDecoder(data, size, ctx);
  // Decode in batches so the index scratch stays small for huge pages.
  uint32_t idx[kBatch];
  const int64_t dict_size = dictionary.num_values();
  if (out->type() != PhysicalType::kByteArray && !out->has_views()) {
    out->mutable_value_buffer().Reserve(out->value_buffer().size() + static_cast<size_t>(n) * out->value_width());
  }
  for (int64_t done = 0; done < n;) {
    const int64_t k = std::min(kBatch, n - done);
    DecodeIndexBatch(dec, idx, k, dict_size, ctx);
    GatherFromDictionary(idx, k, dictionary, out);
    done += k;
  }
  return size;
}

size_t DecodeDictionaryIndexValues(const uint8_t* data, size_t size, int64_t n, int64_t dictionary_size,
                                   ColumnData* out, const DecodeContext& ctx) {
  if (n == 0) return size;
  RleDecoder dec = IndexDecoder(data, size, ctx);
  Buffer& indices = out->mutable_index_buffer();
  const size_t base = indices.size();
  indices.Resize(base + static_cast<size_t>(n) * sizeof(uint32_t));
  auto* dst = reinterpret_cast<uint32_t*>(indices.data() + base);
  for (int64_t done = 0; done < n;) {
    const int64_t k = std::min(kBatch, n - done);
    DecodeIndexBatch(dec, dst + done, k, dictionary_size, ctx);
    done += k;
  }
  out->set_num_values(out->num_values() + n);
  return size;
}

}  // namespace lakerun::parquet
