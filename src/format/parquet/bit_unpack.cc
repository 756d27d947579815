#include "format/parquet/bit_unpack.h"

#include <utility>

namespace lakerun::parquet::bits {
namespace {

template <int BW, typename T>
void UnpackGroupsFixed(const uint8_t* in, int64_t groups, T* out) {
  for (int64_t g = 0; g < groups; ++g) {
    Unpack8<BW>(in, out);
    in += BW;
    out += 8;
  }
}

template <typename T, int... BWs>
void Dispatch(std::integer_sequence<int, BWs...>, const uint8_t* in, int bw, int64_t groups, T* out) {
  using Fn = void (*)(const uint8_t*, int64_t, T*);
  static constexpr Fn kTable[] = {&UnpackGroupsFixed<BWs, T>...};
  kTable[bw](in, groups, out);
}

}  // namespace

template <typename T>
void UnpackGroups(const uint8_t* in, int bw, int64_t groups, T* out) {
  Dispatch<T>(std::make_integer_sequence<int, 33>{}, in, bw, groups, out);
}

template void UnpackGroups<uint32_t>(const uint8_t*, int, int64_t, uint32_t*);
template void UnpackGroups<int16_t>(const uint8_t*, int, int64_t, int16_t*);
template void UnpackGroups<uint8_t>(const uint8_t*, int, int64_t, uint8_t*);

}  // namespace lakerun::parquet::bits
