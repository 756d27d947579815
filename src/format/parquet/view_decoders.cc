// Byte values decoded as std::string_views into page memory (ColumnData's views form) instead of copies.
#include <cstring>
#include <string_view>

#include "format/parquet/value_decoders.h"

namespace lakerun::parquet {
namespace {

constexpr size_t kPrefetchValues = 32;

std::string_view* GrowViews(ColumnData* out, int64_t n) {
  Buffer& views = out->mutable_view_buffer();
  const size_t base = views.size();
  views.Resize(base + static_cast<size_t>(n) * sizeof(std::string_view));
  return reinterpret_cast<std::string_view*>(views.data() + base);
}

}  // namespace

size_t DecodePlainViews(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx) {
  if (n < 0) ctx.Fail(StrCat("negative value count ", n));
  const char* chars = reinterpret_cast<const char*>(data);
  if (out->type() == PhysicalType::kByteArray) {
    // Each value takes at least 4 bytes: bound the count before growing the views.
    if (static_cast<uint64_t>(n) > size / 4) {
      ctx.Fail(StrCat("PLAIN BYTE_ARRAY: ", n, " values cannot fit in ", size, " bytes"));
    }
    std::string_view* dst = GrowViews(out, n);
    size_t pos = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (size - pos < 4) ctx.Fail(StrCat("PLAIN BYTE_ARRAY: value ", i, " length at byte ", pos, " is truncated"));
      uint32_t len;
      std::memcpy(&len, data + pos, 4);
      // Each length's address depends on the previous one, so big values (blobs: one cache miss each in a page
      // larger than the cache) would wait on memory one by one. Guess that the values ahead are as long as this
      // one and prefetch their lengths; a wrong guess costs a useless prefetch.
      const size_t ahead = pos + kPrefetchValues * (static_cast<size_t>(len) + 4);
      if (ahead < size) __builtin_prefetch(data + ahead);
      pos += 4;
      if (len > size - pos) {
        ctx.Fail(StrCat("PLAIN BYTE_ARRAY: value ", i, " of ", len, " bytes at byte ", pos, " overruns the page (",
                        size - pos, " bytes left)"));
      }
      dst[i] = std::string_view(chars + pos, len);
      pos += len;
    }
    out->set_num_values(out->num_values() + n);
    return pos;
  }
  const uint64_t width = static_cast<uint64_t>(out->value_width());
  if (width == 0) ctx.Fail("zero-width values");
  if (static_cast<uint64_t>(n) > size / width) {
    ctx.Fail(StrCat("PLAIN ", ToString(out->type()), ": ", n, " values need ", n * width, " bytes, page has ", size));
  }
  std::string_view* dst = GrowViews(out, n);
  for (int64_t i = 0; i < n; ++i) dst[i] = std::string_view(chars + static_cast<size_t>(i) * width, width);
  out->set_num_values(out->num_values() + n);
  return static_cast<size_t>(n) * width;
}

void AppendViewsOfCopy(const ColumnData& copied, const uint8_t* bytes, ColumnData* out) {
  const int64_t n = copied.num_values();
  std::string_view* dst = GrowViews(out, n);
  const char* chars = reinterpret_cast<const char*>(bytes);
  if (copied.type() == PhysicalType::kByteArray) {
    const int64_t* off = copied.offsets().data();
    for (int64_t i = 0; i < n; ++i) dst[i] = std::string_view(chars + off[i], static_cast<size_t>(off[i + 1] - off[i]));
  } else {
    const size_t w = static_cast<size_t>(copied.value_width());
    for (int64_t i = 0; i < n; ++i) dst[i] = std::string_view(chars + static_cast<size_t>(i) * w, w);
  }
  out->set_num_values(out->num_values() + n);
}

}  // namespace lakerun::parquet
