#include "lakerun/base/crc32.h"

#include "crc32_kernels.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace lakerun {
namespace {

uint32_t Zlib(const std::string& s, size_t begin, size_t size) {
  return static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data() + begin), static_cast<uInt>(size)));
}

TEST(Crc32Test, KnownValues) {
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(Crc32(std::string(1000, 'a')), Zlib(std::string(1000, 'a'), 0, 1000));
}

// The folded path (64 bytes and up) must agree with zlib at every length, alignment and starting value.
TEST(Crc32Test, MatchesZlibAtEveryLengthAndAlignment) {
  std::string bytes(4096 + 64, '\0');
  uint32_t x = 2463534242u;
  for (char& c : bytes) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x);
  }
  for (size_t begin = 0; begin < 17; ++begin) {
    for (size_t size = 0; size + begin <= bytes.size(); size += size < 300 ? 1 : 97) {
      ASSERT_EQ(Crc32(bytes.data() + begin, size), Zlib(bytes, begin, size)) << begin << " " << size;
    }
  }
  // Every kernel this CPU can run, not only the one Crc32 picks.
  for (const Crc32Kernel kernel : {Crc32Kernel::kZlib, Crc32Kernel::kClmul128, Crc32Kernel::kClmul512}) {
    if (!Crc32KernelAvailable(kernel)) continue;
    for (size_t size = 0; size + 5 <= bytes.size(); size += size < 300 ? 1 : 61) {
      ASSERT_EQ(Crc32With(kernel, bytes.data() + 5, size, 0x1234), static_cast<uint32_t>(crc32(
                    0x1234, reinterpret_cast<const Bytef*>(bytes.data() + 5), static_cast<uInt>(size))))
          << "kernel " << static_cast<int>(kernel) << " size " << size;
    }
  }
}

TEST(Crc32Test, ContinuesOverConcatenatedPieces) {
  std::string bytes(1000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  for (size_t cut : {0, 1, 63, 64, 65, 500, 999, 1000}) {
    const std::string_view all(bytes);
    EXPECT_EQ(Crc32(all.substr(cut), Crc32(all.substr(0, cut))), Crc32(all)) << cut;
  }
}

}  // namespace
}  // namespace lakerun
