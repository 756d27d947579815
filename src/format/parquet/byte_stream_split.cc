// BYTE_STREAM_SPLIT decoder and encoder.
#include <cstring>

#include "format/parquet/value_decoders.h"
#include "format/parquet/value_encoders.h"

namespace lakerun::parquet {
namespace {

template <int W>
void Gather(const uint8_t* in, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
#pragma GCC unroll 8
    for (int k = 0; k < W; ++k) out[i * W + k] = in[k * n + i];
  }
}

}  // namespace

size_t DecodeByteStreamSplit(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx) {
  const uint64_t width = static_cast<uint64_t>(out->value_width());
  if (out->type() == PhysicalType::kByteArray || out->type() == PhysicalType::kBoolean || width == 0) {
    ctx.Fail(StrCat("BYTE_STREAM_SPLIT is not valid for ", ToString(out->type())));
  }
  if (n < 0 || static_cast<uint64_t>(n) > size / width) {
    ctx.Fail(StrCat("BYTE_STREAM_SPLIT: ", n, " values of ", width, " bytes need more than the ", size,
                    " bytes in the page"));
  }
  // The streams span the whole value section, whose length fixes the stream stride.
  if (static_cast<uint64_t>(n) * width != size) {
    ctx.Fail(StrCat("BYTE_STREAM_SPLIT: value section of ", size, " bytes is not ", n, " values of ", width,
                    " bytes"));
  }
  Buffer& buf = out->mutable_value_buffer();
  const size_t base = buf.size();
  buf.Resize(base + static_cast<size_t>(n * static_cast<int64_t>(width)));
  uint8_t* dst = buf.data() + base;
  switch (width) {
    case 2: Gather<2>(data, n, dst); break;
    case 4: Gather<4>(data, n, dst); break;
    case 8: Gather<8>(data, n, dst); break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        for (uint64_t k = 0; k < width; ++k) dst[i * width + k] = data[k * n + i];
      }
  }
  out->set_num_values(out->num_values() + n);
  return size;
}

void EncodeByteStreamSplit(const ColumnData& values, int64_t begin, int64_t end, std::string* out) {
  const int64_t n = end - begin;
  const int64_t w = values.value_width();
  const uint8_t* src = values.value_buffer().data() + begin * w;
  const size_t at = out->size();
  out->resize(at + static_cast<size_t>(n * w));
  char* dst = out->data() + at;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < w; ++k) dst[k * n + i] = static_cast<char>(src[i * w + k]);
  }
}

}  // namespace lakerun::parquet
