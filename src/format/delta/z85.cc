// Z85 (ZeroMQ RFC 32), the Base85 variant Delta uses for inline deletion vectors and DV file UUIDs.
#include <array>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/deletion_vector.h"

namespace lakerun::delta {
namespace {

constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

const std::array<int, 256>& DecodeTable() {
  static const std::array<int, 256> table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 85; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
    return t;
  }();
  return table;
}

}  // namespace

std::string Z85Decode(std::string_view text, const std::string& context) {
  LAKERUN_CHECK_AS(CorruptDataError, text.size() % 5 == 0, context, ": Z85 text of ", text.size(),
                   " characters is not a multiple of 5");
  const auto& table = DecodeTable();
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    uint64_t value = 0;
    for (size_t j = 0; j < 5; ++j) {
      const int digit = table[static_cast<unsigned char>(text[i + j])];
      LAKERUN_CHECK_AS(CorruptDataError, digit >= 0, context, ": invalid Z85 character '", text[i + j],
                       "' at offset ", i + j);
      value = value * 85 + static_cast<uint64_t>(digit);
    }
    LAKERUN_CHECK_AS(CorruptDataError, value <= 0xffffffffull, context, ": Z85 group at offset ", i,
                     " overflows 32 bits");
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
  return out;
}

std::string Z85Encode(std::string_view bytes) {
  std::string padded(bytes);
  while (padded.size() % 4 != 0) padded.push_back('\0');
  std::string out;
  out.reserve(padded.size() / 4 * 5);
  for (size_t i = 0; i < padded.size(); i += 4) {
    uint64_t value = 0;
    for (size_t j = 0; j < 4; ++j) value = (value << 8) | static_cast<unsigned char>(padded[i + j]);
    char group[5];
    for (int j = 4; j >= 0; --j) {
      group[j] = kAlphabet[value % 85];
      value /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

}  // namespace lakerun::delta
