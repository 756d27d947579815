#include "fuzz_targets.h"

#include <cstdint>

#include "format/parquet/fuzz_entry_points.h"

namespace lakerun::parquet::fuzz {
namespace {

/// Consumes little-endian parameter bytes from the front of the input; missing bytes read as zero.
class Params {
 public:
  explicit Params(std::string_view data) : data_(data) {}
  uint32_t U8() { return Take(1); }
  uint32_t U16() { return Take(2); }
  uint32_t U24() { return Take(3); }
  std::string_view rest() const { return data_; }

 private:
  uint32_t Take(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (!data_.empty()) {
        v |= static_cast<uint32_t>(static_cast<uint8_t>(data_[0])) << (8 * i);
        data_.remove_prefix(1);
      }
    }
    return v;
  }
  std::string_view data_;
};

// Inputs: raw bytes.
void File(std::string_view d) { ParseFile(d); }
void Footer(std::string_view d) { ParseFooter(d); }
void PageHeader(std::string_view d) { ParsePageHeader(d); }
// [kind u8: odd = OffsetIndex, even = ColumnIndex] Thrift bytes
void PageIndex(std::string_view d) {
  Params p(d);
  const bool offset_index = (p.U8() & 1) != 0;
  ParsePageIndex(p.rest(), offset_index);
}

// [type u8][type_length u8][max_def u8][max_rep u8][codec u8] chunk bytes. Type and codec numbers are passed as
// they come (unknown ones must be rejected cleanly); levels are capped at 8 to keep the schema plausible.
void ColumnChunk(std::string_view d) {
  Params p(d);
  const auto type = static_cast<PhysicalType>(p.U8() % 9);
  const auto type_length = static_cast<int32_t>(p.U8());
  const auto max_def = static_cast<int16_t>(p.U8() % 9);
  const auto max_rep = static_cast<int16_t>(p.U8() % 9);
  const auto codec = static_cast<Codec>(p.U8() % 9);
  DecodeColumnChunk(p.rest(), type, type_length, max_def, max_rep, codec);
}

// [bit_width u8][count u16] runs
void RleHybrid(std::string_view d) {
  Params p(d);
  const int bit_width = static_cast<int>(p.U8() % 40);  // up to 39: widths above 32 must be rejected
  const int64_t count = p.U16();
  DecodeRleHybrid(p.rest(), bit_width, count);
}

// [count u16][dictionary_size u16] bit width + runs
void DictIndices(std::string_view d) {
  Params p(d);
  const int64_t count = p.U16();
  const int64_t dict = p.U16();
  DecodeDictionaryIndices(p.rest(), count, dict);
}

// [count u16] (FLBA: [type_length u8]) values
template <PhysicalType kType>
void Plain(std::string_view d) {
  Params p(d);
  const int64_t count = p.U16();
  const int32_t type_length = kType == PhysicalType::kFixedLenByteArray ? static_cast<int32_t>(p.U8())
                              : kType == PhysicalType::kInt96         ? 12
                                                                      : 0;
  DecodePlain(p.rest(), kType, type_length, count);
}

template <PhysicalType kType>
void ByteStreamSplit(std::string_view d) {
  Params p(d);
  const int64_t count = p.U16();
  const int32_t type_length = kType == PhysicalType::kFixedLenByteArray ? static_cast<int32_t>(p.U8()) : 0;
  DecodeByteStreamSplit(p.rest(), kType, type_length, count);
}

// [count u16] values
template <PhysicalType kType>
void DeltaBinaryPacked(std::string_view d) {
  Params p(d);
  const int64_t count = p.U16();
  DecodeDeltaBinaryPacked(p.rest(), kType, count);
}
void DeltaLengthByteArray(std::string_view d) {
  Params p(d);
  const int64_t count = p.U16();
  DecodeDeltaLengthByteArray(p.rest(), count);
}
void DeltaByteArray(std::string_view d) {
  Params p(d);
  const int64_t count = p.U16();
  DecodeDeltaByteArray(p.rest(), count);
}

// [uncompressed_size u24, low 18 bits used: up to 256 KiB] compressed bytes. Larger sizes would make every
// execution allocate megabytes and fuzz at tens of inputs per second; the seeds' pages are far smaller.
template <Codec kCodec>
void Decompress(std::string_view d) {
  Params p(d);
  const size_t size = p.U24() & ((1u << 18) - 1);
  ::lakerun::parquet::fuzz::Decompress(p.rest(), kCodec, size);
}

using T = PhysicalType;

}  // namespace

const std::vector<FuzzTarget>& AllTargets() {
  static const std::vector<FuzzTarget> targets = {
      {"file", File},
      {"footer", Footer},
      {"page_header", PageHeader},
      {"page_index", PageIndex},
      {"column_chunk", ColumnChunk},
      {"rle_hybrid", RleHybrid},
      {"dict_indices", DictIndices},
      {"plain_boolean", Plain<T::kBoolean>},
      {"plain_int32", Plain<T::kInt32>},
      {"plain_int64", Plain<T::kInt64>},
      {"plain_int96", Plain<T::kInt96>},
      {"plain_float", Plain<T::kFloat>},
      {"plain_double", Plain<T::kDouble>},
      {"plain_byte_array", Plain<T::kByteArray>},
      {"plain_flba", Plain<T::kFixedLenByteArray>},
      {"delta_binary_packed_int32", DeltaBinaryPacked<T::kInt32>},
      {"delta_binary_packed_int64", DeltaBinaryPacked<T::kInt64>},
      {"delta_length_byte_array", DeltaLengthByteArray},
      {"delta_byte_array", DeltaByteArray},
      {"byte_stream_split_float", ByteStreamSplit<T::kFloat>},
      {"byte_stream_split_double", ByteStreamSplit<T::kDouble>},
      {"byte_stream_split_int32", ByteStreamSplit<T::kInt32>},
      {"byte_stream_split_int64", ByteStreamSplit<T::kInt64>},
      {"byte_stream_split_flba", ByteStreamSplit<T::kFixedLenByteArray>},
      {"decompress_snappy", Decompress<Codec::kSnappy>},
      {"decompress_gzip", Decompress<Codec::kGzip>},
      {"decompress_brotli", Decompress<Codec::kBrotli>},
      {"decompress_lz4", Decompress<Codec::kLz4>},
      {"decompress_zstd", Decompress<Codec::kZstd>},
      {"decompress_lz4_raw", Decompress<Codec::kLz4Raw>},
  };
  return targets;
}

const FuzzTarget* FindTarget(std::string_view name) {
  for (const FuzzTarget& t : AllTargets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace lakerun::parquet::fuzz
