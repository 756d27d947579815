// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY decoders.
#include <cstring>
#include <string>
#include <vector>

#include "format/parquet/delta_binary_packed.h"
#include "format/parquet/value_decoders.h"

namespace lakerun::parquet {
namespace {

// Decodes `n` lengths (DELTA_BINARY_PACKED) and validates them: non-negative, summing to at most `limit` bytes.
std::vector<int32_t> DecodeLengths(const uint8_t* data, size_t size, int64_t n, const DecodeContext& ctx,
                                   const char* what, size_t* consumed) {
  DeltaBinaryPackedDecoder dec(data, size, &ctx);
  if (n < 0 || n > dec.total_values()) {
    ctx.Fail(StrCat(what, ": page needs ", n, " lengths, the encoding holds ", dec.total_values()));
  }
  std::vector<int32_t> lengths(static_cast<size_t>(n));
  dec.Decode<int32_t>(lengths.data(), n);
  *consumed = dec.position();
  return lengths;
}

// DELTA_LENGTH_BYTE_ARRAY's lengths, checked: none negative, and their sum (*total) fits in the page after them
// (*pos: where the values start).
std::vector<int32_t> CheckedLengths(const uint8_t* data, size_t size, int64_t n, const ColumnData& out,
                                    const DecodeContext& ctx, size_t* pos, uint64_t* total) {
  if (out.type() != PhysicalType::kByteArray) {
    ctx.Fail(StrCat("DELTA_LENGTH_BYTE_ARRAY is not valid for ", ToString(out.type())));
  }
  *pos = 0;
  std::vector<int32_t> lengths = DecodeLengths(data, size, n, ctx, "DELTA_LENGTH_BYTE_ARRAY", pos);
  *total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (lengths[i] < 0) ctx.Fail(StrCat("DELTA_LENGTH_BYTE_ARRAY: value ", i, " has negative length ", lengths[i]));
    *total += static_cast<uint64_t>(lengths[i]);
  }
  if (*total > size - *pos) {
    ctx.Fail(StrCat("DELTA_LENGTH_BYTE_ARRAY: values need ", *total, " bytes, ", size - *pos, " left in the page"));
  }
  return lengths;
}

}  // namespace

size_t DecodeDeltaLengthByteArray(const uint8_t* data, size_t size, int64_t n, ColumnData* out,
                                  const DecodeContext& ctx) {
  size_t pos = 0;
  uint64_t total = 0;
  const std::vector<int32_t> lengths = CheckedLengths(data, size, n, *out, ctx, &pos, &total);
  auto& offsets = out->mutable_offsets();
  if (offsets.empty()) offsets.push_back(0);
  offsets.reserve(offsets.size() + static_cast<size_t>(n));
  Buffer& buf = out->mutable_value_buffer();
  int64_t end = static_cast<int64_t>(buf.size());
  buf.Append(data + pos, static_cast<size_t>(total));
  for (int64_t i = 0; i < n; ++i) {
    end += lengths[i];
    offsets.push_back(end);
  }
  out->set_num_values(out->num_values() + n);
  return pos + static_cast<size_t>(total);
}

size_t DecodeDeltaLengthByteArrayViews(const uint8_t* data, size_t size, int64_t n, ColumnData* out,
                                       const DecodeContext& ctx) {
  size_t pos = 0;
  uint64_t total = 0;
  const std::vector<int32_t> lengths = CheckedLengths(data, size, n, *out, ctx, &pos, &total);
  Buffer& views = out->mutable_view_buffer();
  const size_t base = views.size();
  views.Resize(base + static_cast<size_t>(n) * sizeof(std::string_view));
  auto* dst = reinterpret_cast<std::string_view*>(views.data() + base);
  const char* p = reinterpret_cast<const char*>(data + pos);
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = std::string_view(p, static_cast<size_t>(lengths[i]));
    p += lengths[i];
  }
  out->set_num_values(out->num_values() + n);
  return pos + static_cast<size_t>(total);
}

size_t DecodeDeltaByteArray(const uint8_t* data, size_t size, int64_t n, ColumnData* out, const DecodeContext& ctx) {
  const bool flba = out->type() == PhysicalType::kFixedLenByteArray;
  if (!flba && out->type() != PhysicalType::kByteArray) {
    ctx.Fail(StrCat("DELTA_BYTE_ARRAY is not valid for ", ToString(out->type())));
  }
  size_t pos = 0;
  std::vector<int32_t> prefixes = DecodeLengths(data, size, n, ctx, "DELTA_BYTE_ARRAY prefixes", &pos);
  size_t suffix_pos = 0;
  std::vector<int32_t> suffixes =
      DecodeLengths(data + pos, size - pos, n, ctx, "DELTA_BYTE_ARRAY suffixes", &suffix_pos);
  pos += suffix_pos;
  std::string previous;
  Buffer& buf = out->mutable_value_buffer();
  const size_t width = static_cast<size_t>(out->type_length());
  for (int64_t i = 0; i < n; ++i) {
    const int32_t p = prefixes[i], s = suffixes[i];
    if (p < 0 || static_cast<size_t>(p) > previous.size()) {
      ctx.Fail(StrCat("DELTA_BYTE_ARRAY: value ", i, " has prefix length ", p, " but the previous value has ",
                      previous.size(), " bytes"));
    }
    if (s < 0 || static_cast<size_t>(s) > size - pos) {
      ctx.Fail(StrCat("DELTA_BYTE_ARRAY: value ", i, " suffix of ", s, " bytes overruns the page"));
    }
    previous.resize(static_cast<size_t>(p));
    previous.append(reinterpret_cast<const char*>(data + pos), static_cast<size_t>(s));
    pos += static_cast<size_t>(s);
    if (flba) {
      if (previous.size() != width) {
        ctx.Fail(StrCat("DELTA_BYTE_ARRAY: value ", i, " has ", previous.size(), " bytes, column width is ", width));
      }
      buf.Append(previous.data(), width);
      out->set_num_values(out->num_values() + 1);
    } else {
      AppendByteArray(out, previous.data(), previous.size());
    }
  }
  return pos;
}

}  // namespace lakerun::parquet
