// The bytes of an uncompressed IDX file (MNIST's format): big-endian magic, dimensions, then the payload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::testing {

inline std::string IdxFile(uint32_t magic, const std::vector<uint32_t>& dims, const std::string& payload) {
  std::string out;
  auto put = [&out](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  };
  put(magic);
  for (uint32_t d : dims) put(d);
  return out + payload;
}

}  // namespace lakerun::testing
