#include <cstring>

#include "format/parquet/rle_decoder.h"
#include "format/parquet/value_decoders.h"

namespace lakerun::parquet {

size_t DecodePlain(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx) {
  if (n < 0) ctx.Fail(StrCat("negative value count ", n));
  Buffer& buf = out->mutable_value_buffer();
  switch (out->type()) {
    case PhysicalType::kBoolean: {
      const uint64_t bytes = (static_cast<uint64_t>(n) + 7) / 8;
      if (bytes > size) ctx.Fail(StrCat("PLAIN BOOLEAN: ", n, " values need ", bytes, " bytes, page has ", size));
      const size_t base = buf.size();
      buf.Resize(base + static_cast<size_t>(n));
      uint8_t* dst = buf.data() + base;
      for (int64_t i = 0; i < n; ++i) dst[i] = (data[i >> 3] >> (i & 7)) & 1;
      out->set_num_values(out->num_values() + n);
      return static_cast<size_t>(bytes);
    }
    case PhysicalType::kByteArray: {
      size_t pos = 0;
      auto& offsets = out->mutable_offsets();
      if (offsets.empty()) offsets.push_back(0);
      // Each value takes at least 4 bytes: bound the count before reserving.
      if (static_cast<uint64_t>(n) > size / 4) {
        ctx.Fail(StrCat("PLAIN BYTE_ARRAY: ", n, " values cannot fit in ", size, " bytes"));
      }
      // Pass 1 validates every length; pass 2 copies into memory reserved once.
      for (int64_t i = 0; i < n; ++i) {
        if (size - pos < 4) ctx.Fail(StrCat("PLAIN BYTE_ARRAY: value ", i, " length at byte ", pos, " is truncated"));
        uint32_t len;
        std::memcpy(&len, data + pos, 4);
        pos += 4;
        if (len > size - pos) {
          ctx.Fail(StrCat("PLAIN BYTE_ARRAY: value ", i, " of ", len, " bytes at byte ", pos, " overruns the page (",
                          size - pos, " bytes left)"));
        }
        pos += len;
      }
      const size_t payload = pos - static_cast<size_t>(n) * 4;
      const size_t old_offsets = offsets.size();
      offsets.resize(old_offsets + static_cast<size_t>(n));
      const size_t old_size = buf.size();
      buf.Resize(old_size + payload);
      uint8_t* dst = buf.data() + old_size;
      int64_t end = static_cast<int64_t>(old_size);
      size_t in = 0;
      for (int64_t i = 0; i < n; ++i) {
        uint32_t len;
        std::memcpy(&len, data + in, 4);
        if (len != 0) std::memcpy(dst, data + in + 4, len);  // dst is null while every value so far is empty
        dst += len;
        in += 4 + len;
        end += len;
        offsets[old_offsets + static_cast<size_t>(i)] = end;
      }
      out->set_num_values(out->num_values() + n);
      return pos;
    }
    default: {
      const uint64_t width = static_cast<uint64_t>(out->value_width());
      if (width == 0) ctx.Fail("zero-width values");
      if (static_cast<uint64_t>(n) > size / width) {
        ctx.Fail(StrCat("PLAIN ", ToString(out->type()), ": ", n, " values need ", n * width, " bytes, page has ",
                        size));
      }
      const size_t bytes = static_cast<size_t>(n) * width;
      buf.Append(data, bytes);
      out->set_num_values(out->num_values() + n);
      return bytes;
    }
  }
}

size_t DecodeRleBooleans(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx) {
  if (size < 4) ctx.Fail("RLE BOOLEAN values without their 4-byte length");
  uint32_t len;
  std::memcpy(&len, data, 4);
  if (len > size - 4) ctx.Fail(StrCat("RLE BOOLEAN length ", len, " overruns the page (", size - 4, " bytes)"));
  RleDecoder dec(data + 4, len, 1, &ctx);
  Buffer& buf = out->mutable_value_buffer();
  const size_t base = buf.size();
  buf.Resize(base + static_cast<size_t>(n));
  dec.Decode<uint8_t>(buf.data() + base, n);
  out->set_num_values(out->num_values() + n);
  return 4 + static_cast<size_t>(len);
}

}  // namespace lakerun::parquet
