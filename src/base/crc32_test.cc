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

// Crc32Copy, by every kernel this CPU can run: the bytes copied exactly (nothing written outside the destination) and
// the CRC zlib's, at every length up to 300 and then sparser ones, at source and destination alignments of their own.
TEST(Crc32Test, CopyMatchesMemcpyAndZlibAtEveryLengthAndAlignment) {
  std::string bytes(4096 + 64, '\0');
  uint32_t x = 88675123u;
  for (char& c : bytes) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    c = static_cast<char>(x);
  }
  for (const Crc32Kernel kernel : {Crc32Kernel::kZlib, Crc32Kernel::kClmul128, Crc32Kernel::kClmul512}) {
    if (!Crc32KernelAvailable(kernel)) continue;
    for (size_t begin : {0, 1, 7, 16, 33}) {
      for (size_t dst_begin : {0, 3, 64}) {
        for (size_t size = 0; size + begin <= bytes.size(); size += size < 300 ? 1 : 61) {
          std::string dst(size + dst_begin + 32, '\x5a');
          const uint32_t crc = Crc32CopyWith(kernel, &dst[dst_begin], bytes.data() + begin, size, 0x1234);
          ASSERT_EQ(crc, static_cast<uint32_t>(crc32(0x1234, reinterpret_cast<const Bytef*>(bytes.data() + begin),
                                                     static_cast<uInt>(size))))
              << "kernel " << static_cast<int>(kernel) << " begin " << begin << " size " << size;
          ASSERT_EQ(dst.substr(dst_begin, size), bytes.substr(begin, size)) << "kernel " << static_cast<int>(kernel);
          ASSERT_EQ(dst.substr(0, dst_begin), std::string(dst_begin, '\x5a'));
          ASSERT_EQ(dst.substr(dst_begin + size), std::string(32, '\x5a')) << "wrote past the end, size " << size;
        }
      }
    }
  }
  // The chosen kernel, through the public function, continuing over pieces.
  std::string dst(bytes.size(), '\0');
  const uint32_t first = Crc32Copy(&dst[0], bytes.data(), 1000);
  EXPECT_EQ(Crc32Copy(&dst[1000], bytes.data() + 1000, bytes.size() - 1000, first), Crc32(bytes));
  EXPECT_EQ(dst, bytes);
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
