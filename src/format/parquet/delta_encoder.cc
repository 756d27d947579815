// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY encoders (one family: the byte-array
// encodings store their lengths with DELTA_BINARY_PACKED).
#include <algorithm>
#include <cstring>
#include <vector>

#include "format/parquet/bit_writer.h"
#include "format/parquet/value_encoders.h"

namespace lakerun::parquet {
namespace {

constexpr int kBlockSize = 128;
constexpr int kMiniblocks = 4;
constexpr int kPerMiniblock = kBlockSize / kMiniblocks;

int BitsFor(uint64_t v) {
  int w = 0;
  while (v) {
    ++w;
    v >>= 1;
  }
  return w;
}

}  // namespace

void EncodeDeltaBinaryPackedInts(const int64_t* values, int64_t n, bool is32, std::string* out) {
  AppendVarint(out, kBlockSize);
  AppendVarint(out, kMiniblocks);
  AppendVarint(out, static_cast<uint64_t>(n));
  AppendVarint(out, ZigZag64(n > 0 ? values[0] : 0));
  int64_t deltas[kBlockSize];
  for (int64_t start = 1; start < n; start += kBlockSize) {
    const int64_t count = std::min<int64_t>(kBlockSize, n - start);
    int64_t min_delta = 0;
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t d = static_cast<uint64_t>(values[start + i]) - static_cast<uint64_t>(values[start + i - 1]);
      deltas[i] = is32 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(d))) : static_cast<int64_t>(d);
      min_delta = i == 0 ? deltas[i] : std::min(min_delta, deltas[i]);
    }
    AppendVarint(out, ZigZag64(min_delta));
    uint64_t adjusted[kBlockSize] = {};
    int widths[kMiniblocks] = {};
    for (int64_t i = 0; i < count; ++i) {
      uint64_t a = static_cast<uint64_t>(deltas[i]) - static_cast<uint64_t>(min_delta);
      if (is32) a &= 0xffffffffu;
      adjusted[i] = a;
      widths[i / kPerMiniblock] = std::max(widths[i / kPerMiniblock], BitsFor(a));
    }
    for (int m = 0; m < kMiniblocks; ++m) out->push_back(static_cast<char>(widths[m]));
    const int used = static_cast<int>((count + kPerMiniblock - 1) / kPerMiniblock);
    for (int m = 0; m < used; ++m) {
      BitWriter w(out);
      for (int i = 0; i < kPerMiniblock; ++i) w.Put(adjusted[m * kPerMiniblock + i], widths[m]);
      w.Flush();
    }
  }
}

void EncodeDeltaBinaryPacked(const ColumnData& values, int64_t begin, int64_t end, std::string* out) {
  std::vector<int64_t> v(static_cast<size_t>(end - begin));
  const bool is32 = values.type() == PhysicalType::kInt32;
  for (int64_t i = begin; i < end; ++i) {
    v[i - begin] = is32 ? values.values<int32_t>()[i] : values.values<int64_t>()[i];
  }
  EncodeDeltaBinaryPackedInts(v.data(), end - begin, is32, out);
}

void EncodeDeltaLengthByteArray(const ColumnData& values, int64_t begin, int64_t end, std::string* out) {
  std::vector<int64_t> lengths(static_cast<size_t>(end - begin));
  const auto& offsets = values.offsets();
  for (int64_t i = begin; i < end; ++i) lengths[i - begin] = offsets[i + 1] - offsets[i];
  EncodeDeltaBinaryPackedInts(lengths.data(), end - begin, true, out);
  if (end > begin) {
    out->append(reinterpret_cast<const char*>(values.value_buffer().data() + offsets[begin]),
                static_cast<size_t>(offsets[end] - offsets[begin]));
  }
}

void EncodeDeltaByteArray(const ColumnData& values, int64_t begin, int64_t end, std::string* out) {
  const int64_t n = end - begin;
  std::vector<int64_t> prefixes(static_cast<size_t>(n)), suffixes(static_cast<size_t>(n));
  std::string_view previous;
  for (int64_t i = 0; i < n; ++i) {
    std::string_view v = values.bytes_at(begin + i);
    size_t p = 0;
    const size_t limit = std::min(previous.size(), v.size());
    while (p < limit && previous[p] == v[p]) ++p;
    prefixes[i] = static_cast<int64_t>(p);
    suffixes[i] = static_cast<int64_t>(v.size() - p);
    previous = v;
  }
  EncodeDeltaBinaryPackedInts(prefixes.data(), n, true, out);
  EncodeDeltaBinaryPackedInts(suffixes.data(), n, true, out);
  for (int64_t i = 0; i < n; ++i) {
    std::string_view v = values.bytes_at(begin + i);
    out->append(v.substr(static_cast<size_t>(prefixes[i])));
  }
}

}  // namespace lakerun::parquet
