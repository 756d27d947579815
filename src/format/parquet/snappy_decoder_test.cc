// lakerun's Snappy decoder (snappy_decoder.h) against libsnappy: the same output for every block libsnappy writes
// and for hand-built tag streams (every copy offset and length, near the output's end and far from it), and the
// same verdict on corrupt blocks but one (a literal of 2^32 bytes, see RejectsWhatLibSnappyRejects).
#include "format/parquet/snappy_decoder.h"

#include <snappy.h>

#include <random>
#include <string>
#include <vector>

#include "format/parquet/codec.h"
#include "format/parquet/parquet_test_util.h"
#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

// libsnappy's verdict and output for `block`.
bool LibSnappy(const std::string& block, std::string* out) {
  size_t n = 0;
  if (!snappy::GetUncompressedLength(block.data(), block.size(), &n) || n > (64u << 20)) return false;
  out->assign(n, '\0');
  return snappy::RawUncompress(block.data(), block.size(), out->data());
}

// Ours, sized by the block's header (as Decompress sizes it by the page header).
bool Ours(const std::string& block, std::string* out) {
  size_t n = 0, header = 0;
  const auto* in = reinterpret_cast<const uint8_t*>(block.data());
  if (!SnappyUncompressedLength(in, block.size(), &n, &header) || n > (64u << 20)) return false;
  // Exactly n bytes, so that a write past the end shows under ASan.
  std::vector<uint8_t> buf(n);
  const bool ok = SnappyDecompress(in, block.size(), buf.data(), n);
  out->assign(buf.begin(), buf.end());
  return ok;
}

void ExpectSameAsLibSnappy(const std::string& block, const std::string& what) {
  std::string want, got;
  const bool lib_ok = LibSnappy(block, &want);
  const bool ok = Ours(block, &got);
  ASSERT_EQ(ok, lib_ok) << what;
  if (ok) {
    ASSERT_EQ(got, want) << what;
  }
}

std::string Compressed(const std::string& raw) {
  std::string block;
  snappy::Compress(raw.data(), raw.size(), &block);
  return block;
}

void ExpectRoundTrip(const std::string& raw, const std::string& what) {
  std::string got;
  ASSERT_TRUE(Ours(Compressed(raw), &got)) << what;
  ASSERT_EQ(got, raw) << what;
}

std::string Varint(size_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}

std::string Literal(const std::string& bytes) {
  std::string s;
  const size_t n = bytes.size() - 1;
  if (n < 60) {
    s += static_cast<char>(n << 2);
  } else {
    int extra = n < (1u << 8) ? 1 : n < (1u << 16) ? 2 : n < (1u << 24) ? 3 : 4;
    s += static_cast<char>((59 + extra) << 2);
    for (int k = 0; k < extra; ++k) s += static_cast<char>(n >> (8 * k));
  }
  return s + bytes;
}

// A copy tag of the given kind (1: 1-byte offset, 2: 2-byte, 3: 4-byte).
std::string Copy(int kind, size_t offset, size_t len) {
  std::string s;
  if (kind == 1) {
    s += static_cast<char>(1 | ((len - 4) << 2) | ((offset >> 8) << 5));
    s += static_cast<char>(offset & 0xff);
  } else {
    s += static_cast<char>(kind | ((len - 1) << 2));
    for (int k = 0; k < (kind == 2 ? 2 : 4); ++k) s += static_cast<char>(offset >> (8 * k));
  }
  return s;
}

std::string RandomBytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(SnappyDecoderTest, RoundTripsEveryShapeLibSnappyWrites) {
  std::mt19937 rng(7);
  ExpectRoundTrip("", "empty");
  for (size_t n = 1; n <= 300; ++n) {
    ExpectRoundTrip(RandomBytes(rng, n), "random " + std::to_string(n));
    ExpectRoundTrip(std::string(n, '\0'), "zeros " + std::to_string(n));
    for (size_t period : {2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65}) {
      std::string p = RandomBytes(rng, period), s;
      while (s.size() < n) s += p;
      s.resize(n);
      ExpectRoundTrip(s, "period " + std::to_string(period) + " length " + std::to_string(n));
    }
  }
  // Blob rows as the scan benchmark's: zeros, 160 random bytes, zeros; and a mix of text and runs, > 64 KiB so
  // that the compressor's fragments and 2-byte offsets appear.
  std::string blobs, mixed;
  for (int r = 0; r < 2000; ++r) {
    blobs += std::string(4, '\x10') + std::string(312, '\0') + RandomBytes(rng, 160) + std::string(312, '\0');
    mixed += "category_" + std::to_string(r % 97) + std::string(rng() % 70, 'x') + RandomBytes(rng, rng() % 40);
  }
  ExpectRoundTrip(blobs, "blobs");
  ExpectRoundTrip(mixed, "mixed");
  ExpectRoundTrip(RandomBytes(rng, 300000), "incompressible");
}

TEST(SnappyDecoderTest, EveryCopyOffsetAndLengthNearAndFarFromTheEnd) {
  std::mt19937 rng(11);
  const std::string prefix = RandomBytes(rng, 100);
  for (size_t offset = 1; offset <= 100; ++offset) {
    for (size_t len = 1; len <= 64; ++len) {
      for (int kind = 1; kind <= 3; ++kind) {
        if (kind == 1 && (len < 4 || len > 11 || offset > 2047)) continue;
        const std::string copy = Copy(kind, offset, len);
        // Near the end: the copy is the block's last tag. Far: 200 literal bytes follow it.
        const std::string tail = RandomBytes(rng, 200);
        for (bool far : {false, true}) {
          const size_t total = prefix.size() + len + (far ? tail.size() : 0);
          std::string block = Varint(total) + Literal(prefix) + copy + (far ? Literal(tail) : "");
          ExpectSameAsLibSnappy(block, "offset " + std::to_string(offset) + " length " + std::to_string(len) +
                                           " kind " + std::to_string(kind) + (far ? " far" : " near"));
        }
      }
    }
  }
}

TEST(SnappyDecoderTest, LiteralsOfEveryLengthEncoding) {
  std::mt19937 rng(3);
  for (size_t n : {1, 59, 60, 61, 64, 65, 200, 256, 257, 65536, 65537, 1 << 24, (1 << 24) + 3}) {
    const std::string bytes = RandomBytes(rng, n);
    ExpectSameAsLibSnappy(Varint(n) + Literal(bytes), "literal " + std::to_string(n));
    // Followed by enough bytes that the literal takes the fast path.
    const std::string more = RandomBytes(rng, 300);
    ExpectSameAsLibSnappy(Varint(n + 300) + Literal(bytes) + Literal(more), "literal then more " + std::to_string(n));
  }
}

TEST(SnappyDecoderTest, RejectsWhatLibSnappyRejects) {
  const std::string ok = Varint(8) + Literal("abcd") + Copy(1, 4, 4);
  ExpectSameAsLibSnappy(ok, "valid");
  std::string got;
  EXPECT_FALSE(Ours(Varint(8) + Literal("abcd") + Copy(2, 0, 4), &got)) << "offset 0";
  EXPECT_FALSE(Ours(Varint(9) + Literal("abcd") + Copy(2, 5, 5), &got)) << "offset before the start";
  EXPECT_FALSE(Ours(Varint(9) + Literal("abcd") + Copy(1, 4, 4), &got)) << "short of the declared size";
  EXPECT_FALSE(Ours(Varint(7) + Literal("abcd") + Copy(1, 4, 4), &got)) << "past the declared size";
  EXPECT_FALSE(Ours(Varint(8) + Literal("abcd") + Copy(1, 4, 4).substr(0, 1), &got)) << "truncated tag";
  EXPECT_FALSE(Ours(Varint(4) + Literal("abcd").substr(0, 3), &got)) << "truncated literal";
  EXPECT_FALSE(Ours("\xff\xff\xff\xff\x7f", &got)) << "length over 32 bits";
  EXPECT_FALSE(Ours("\x80\x80", &got)) << "unterminated length";
  // The one known difference: libsnappy 1.1.9 computes a literal's length in 32 bits, so 4 length bytes 0xffffffff
  // (2^32 bytes) wrap to an empty literal that it accepts; no block of at most 2^32 - 1 bytes can hold that literal.
  const std::string wrapped = Varint(1) + std::string("\xfc\xff\xff\xff\xff", 5) + Literal("a");
  std::string lib;
  EXPECT_TRUE(LibSnappy(wrapped, &lib));
  EXPECT_FALSE(Ours(wrapped, &got)) << "literal of 2^32 bytes";

  // Random damage to real blocks: the same verdict (and output) as libsnappy's, and no access outside the buffers.
  std::mt19937 rng(5);
  std::string raw;
  for (int r = 0; r < 300; ++r) raw += std::string(rng() % 90, '\0') + RandomBytes(rng, rng() % 30) + "abcabcabc";
  const std::string block = Compressed(raw);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = block;
    switch (trial % 3) {
      case 0: bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255); break;
      case 1: bad.resize(rng() % bad.size()); break;
      default:
        for (int k = 0; k < 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    }
    ExpectSameAsLibSnappy(bad, "trial " + std::to_string(trial));
  }
}

TEST(SnappyDecoderTest, DecompressNamesTheFailure) {
  std::vector<uint8_t> out(9);
  const std::string bad = Varint(9) + Literal("abcd") + Copy(2, 5, 5);
  EXPECT_THROW_WITH(Decompress(Codec::kSnappy, bad, out.data(), out.size(), "ctx"), CorruptDataError,
                    "ctx: SNAPPY decompression failed: corrupt input");
  const std::string short_header = Varint(8) + Literal("abcd") + Copy(1, 4, 4);
  EXPECT_THROW_WITH(Decompress(Codec::kSnappy, short_header, out.data(), out.size(), "ctx"), CorruptDataError,
                    "page header says 9");
}

// Through the reader: blob pages like the scan benchmark's (long zero runs around random bytes, so offset-1 and
// 64-byte copies and long literals), BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY, required and with nulls (whole pages of
// nulls among them), small and one large page, v1 and v2: every form reads the snappy file as it reads the same file
// stored uncompressed.
TEST(SnappyDecoderTest, BlobPagesReadAsTheUncompressedFile) {
  std::mt19937 rng(9);
  std::vector<std::string> blobs;
  std::vector<int16_t> def;
  for (int r = 0; r < 3000; ++r) {
    const bool null = (r / 500) % 3 == 1 && r % 7 != 0;  // runs of mostly-null rows, some pages entirely null
    def.push_back(null ? 0 : 1);
    if (!null) blobs.push_back(std::string(312, '\0') + RandomBytes(rng, 160) + std::string(312, '\0'));
  }
  ColumnReadOptions views;
  views.byte_views = true;
  ColumnReadOptions dictionary = views;
  dictionary.dictionary = true;
  for (PhysicalType type : {PhysicalType::kByteArray, PhysicalType::kFixedLenByteArray}) {
    for (bool nullable : {false, true}) {
      for (int page_version : {1, 2}) {
        for (int64_t page_bytes : {int64_t{4096}, int64_t{64} << 20}) {
          const std::string what = ToString(type) + (nullable ? " nullable" : " required") + " v" +
                                   std::to_string(page_version) + " pages of " + std::to_string(page_bytes);
          SCOPED_TRACE(what);
          ColumnData data = type == PhysicalType::kByteArray ? ColumnData::ByteArrays(blobs)
                                                             : ColumnData::FixedBytes(type, 784, blobs);
          if (nullable) data.set_def_levels(def, 1);
          const Repetition rep = nullable ? Repetition::kOptional : Repetition::kRequired;
          const Schema schema = Schema::FromFields({type == PhysicalType::kByteArray
                                                        ? Leaf("b", type, rep)
                                                        : Leaf("b", type, rep, LogicalType(), 784)});
          testing::MemFile stored, snappy;
          WriterOptions options;
          options.dictionary = false;
          options.page_version = page_version;
          options.page_bytes = page_bytes;
          options.codec = Codec::kUncompressed;
          stored.Write(schema, {data}, options);
          options.codec = Codec::kSnappy;
          snappy.Write(schema, {data}, options);
          auto want = stored.Open();
          auto got = snappy.Open();
          ASSERT_EQ(got->metadata().row_groups[0].columns[0].codec, Codec::kSnappy);
          for (const ColumnReadOptions& form : {ColumnReadOptions{}, views, dictionary}) {
            const ColumnData a = want->ReadColumnChunk(0, 0, form);
            const ColumnData b = got->ReadColumnChunk(0, 0, form);
            ASSERT_EQ(b.num_values(), a.num_values());
            ASSERT_EQ(a.num_values(), static_cast<int64_t>(blobs.size()));
            EXPECT_EQ(b.def_levels(), a.def_levels());
            for (int64_t i = 0; i < a.num_values(); ++i) {
              ASSERT_EQ(b.bytes_at(i), a.bytes_at(i)) << "value " << i;
              ASSERT_EQ(b.bytes_at(i), blobs[static_cast<size_t>(i)]) << "value " << i;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace lakerun::parquet
