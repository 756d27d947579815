// Page CRCs: lakerun's writer stores the CRC-32 of every page (parquet.thrift's PageHeader.crc) by default, and the
// reader checks every one it decodes. Files come from ParquetWriter and are then damaged byte by byte.
#include <string>
#include <vector>

#include "format/parquet/parquet_test_util.h"
#include "lakerun/base/crc32.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

// Every codec the writer can write.
const Codec kCodecs[] = {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kBrotli,
                         Codec::kLz4,          Codec::kZstd,   Codec::kLz4Raw};

// Column 0, "s": optional strings from a few distinct values (a dictionary page, then dictionary-encoded data pages
// with definition levels); column 1, "x": required int64s (PLAIN data pages). Several pages per chunk.
void WriteTable(MemFile& f, Codec codec, int page_version, bool page_checksums = true) {
  Schema schema = Schema::FromFields({Leaf("s", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()),
                                      Leaf("x", PhysicalType::kInt64)});
  std::vector<Value> rows;
  for (int i = 0; i < 3000; ++i) {
    rows.push_back(Value::Struct({{"s", i % 7 == 0 ? Value::Null() : Value::String("value-" + std::to_string(i % 13))},
                                  {"x", Value::Int(int64_t{i} * 7919 % 100003)}}));
  }
  WriterOptions o;
  o.codec = codec;
  o.page_version = page_version;
  o.page_bytes = 4096;
  o.page_checksums = page_checksums;
  o.column_encoding["x"] = Encoding::kPlain;
  f.WriteRows(schema, rows, o);
}

ReaderOptions Unchecked() {
  ReaderOptions o;
  o.verify_crc = false;
  return o;
}

// The first page of `type` in row group 0's chunk of `column`.
PageSummary FirstPage(const ParquetFile& file, int column, PageType type) {
  for (const PageSummary& page : file.ReadPageHeaders(0, column)) {
    if (page.type == type) return page;
  }
  ADD_FAILURE() << "no " << ToString(type) << " in column " << column;
  return {};
}

// The index of `page` among its chunk's pages.
int64_t PageIndex(const ParquetFile& file, int column, const PageSummary& page) {
  const auto pages = file.ReadPageHeaders(0, column);
  for (size_t i = 0; i < pages.size(); ++i) {
    if (pages[i].offset == page.offset) return static_cast<int64_t>(i);
  }
  return -1;
}

// Calls check(file, page_version) on a table written by WriteTable under every codec and both page versions.
template <typename Check>
void ForEveryCodecAndPageVersion(Check check) {
  for (Codec codec : kCodecs) {
    for (int version : {1, 2}) {
      SCOPED_TRACE(ToString(codec) + " v" + std::to_string(version));
      MemFile f;
      WriteTable(f, codec, version);
      check(f, version);
    }
  }
}

TEST(PageChecksumTest, EveryPageStoresTheCrcOfItsStoredBytesByDefault) {
  ForEveryCodecAndPageVersion([](MemFile& f, int version) {
    auto file = f.Open();
    const std::string bytes = f.Bytes();
    for (int column = 0; column < 2; ++column) {
      const auto pages = file->ReadPageHeaders(0, column);
      ASSERT_GT(pages.size(), 2u);
      for (const PageSummary& page : pages) {
        ASSERT_TRUE(page.crc.has_value()) << ToString(page.type) << " at " << page.offset;
        const std::string_view stored =
            std::string_view(bytes).substr(page.offset + page.header_size, static_cast<size_t>(page.compressed_size));
        EXPECT_EQ(*page.crc, Crc32(stored)) << ToString(page.type) << " at " << page.offset;
      }
    }
    EXPECT_EQ(FirstPage(*file, 0, PageType::kDictionaryPage).type, PageType::kDictionaryPage);
    const PageType data = version == 1 ? PageType::kDataPage : PageType::kDataPageV2;
    EXPECT_EQ(FirstPage(*file, 1, data).type, data);
  });
}

// One flipped byte in a page's stored bytes: the header's offset is named along with the file, row group, column and
// the page's index, and no value of the chunk comes back, in any form of the values.
void ExpectCaught(MemFile& f, int column, const PageSummary& page, size_t at_in_page, const std::string& kind) {
  const int64_t index = PageIndex(*f.Open(), column, page);
  std::string bytes = f.Bytes();
  bytes[page.offset + page.header_size + at_in_page] ^= 0x10;
  f.SetBytes(bytes);
  auto file = f.Open();
  const std::string name = column == 0 ? "column 's'" : "column 'x'";
  const std::string where = "page " + std::to_string(index) + " at offset " + std::to_string(page.offset);
  EXPECT_THROW_WITH(file->ReadColumnChunk(0, column), CorruptDataError, f.path, "row group 0", name, where,
                    "page CRC mismatch", kind);
  ColumnReadOptions views;
  views.byte_views = views.dictionary = true;
  EXPECT_THROW_WITH(file->ReadColumnChunk(0, column, views), CorruptDataError, where, "page CRC mismatch");
  EXPECT_THROW_WITH(TableReader(*file, {}).ReadRows(INT64_MAX), CorruptDataError, where, "page CRC mismatch");
}

TEST(PageChecksumTest, AFlippedByteInADictionaryPageIsCaughtUnderEveryCodec) {
  ForEveryCodecAndPageVersion([](MemFile& f, int) {
    const PageSummary page = FirstPage(*f.Open(), 0, PageType::kDictionaryPage);
    ExpectCaught(f, 0, page, static_cast<size_t>(page.compressed_size) / 2, "DICTIONARY_PAGE");
  });
}

TEST(PageChecksumTest, AFlippedByteInAV1DataPageIsCaughtUnderEveryCodec) {
  for (Codec codec : kCodecs) {
    SCOPED_TRACE(ToString(codec));
    for (int column : {0, 1}) {  // dictionary indices with levels; PLAIN values
      MemFile f;
      WriteTable(f, codec, 1);
      const PageSummary page = FirstPage(*f.Open(), column, PageType::kDataPage);
      ExpectCaught(f, column, page, static_cast<size_t>(page.compressed_size) - 1, "DATA_PAGE");
    }
  }
}

// A v2 page's CRC covers its levels, which are stored uncompressed ahead of the (compressed) values.
TEST(PageChecksumTest, AFlippedByteInAV2DataPageIsCaughtInItsLevelsAndItsValuesUnderEveryCodec) {
  for (Codec codec : kCodecs) {
    SCOPED_TRACE(ToString(codec));
    for (bool in_levels : {true, false}) {
      MemFile f;
      WriteTable(f, codec, 2);
      const PageSummary page = FirstPage(*f.Open(), 0, PageType::kDataPageV2);
      ExpectCaught(f, 0, page, in_levels ? 1 : static_cast<size_t>(page.compressed_size) - 1, "DATA_PAGE_V2");
    }
  }
}

// Uncompressed PLAIN pages of a required fixed-width column are checked while they are copied into the values
// (Crc32Copy): a flipped first, middle or last byte of a v1 or v2 page, its first or a later one, is caught all the
// same, and a reused output that a damaged page failed reads the undamaged file right afterwards.
TEST(PageChecksumTest, AFlippedByteInAnUncompressedPageCheckedDuringItsCopyIsCaught) {
  for (int version : {1, 2}) {
    const PageType data = version == 1 ? PageType::kDataPage : PageType::kDataPageV2;
    for (int which : {0, 2}) {
      MemFile clean;
      WriteTable(clean, Codec::kUncompressed, version);
      std::vector<PageSummary> pages;
      for (const PageSummary& page : clean.Open()->ReadPageHeaders(0, 1)) {
        if (page.type == data) pages.push_back(page);
      }
      ASSERT_GT(pages.size(), 2u);
      const PageSummary page = pages[static_cast<size_t>(which)];
      for (size_t at : {size_t{0}, static_cast<size_t>(page.compressed_size) / 2,
                        static_cast<size_t>(page.compressed_size) - 1}) {
        SCOPED_TRACE("v" + std::to_string(version) + " data page " + std::to_string(which) + " byte " +
                     std::to_string(at));
        MemFile f;
        WriteTable(f, Codec::kUncompressed, version);
        ExpectCaught(f, 1, page, at, ToString(data));
        ColumnData out;
        ReadScratch scratch;
        EXPECT_THROW(f.Open()->ReadColumnChunk(0, 1, &out, &scratch), CorruptDataError);
        clean.Open()->ReadColumnChunk(0, 1, &out, &scratch);
        EXPECT_EQ(out.num_values(), 3000);
        EXPECT_EQ(out.values<int64_t>()[2999], int64_t{2999} * 7919 % 100003);
      }
    }
  }
}

TEST(PageChecksumTest, FilesWithoutChecksumsReadAsBefore) {
  for (int version : {1, 2}) {
    MemFile f, checked;
    WriteTable(f, Codec::kZstd, version, /*page_checksums=*/false);
    WriteTable(checked, Codec::kZstd, version);
    auto file = f.Open();
    for (const PageSummary& page : file->ReadPageHeaders(0, 0)) EXPECT_FALSE(page.crc.has_value());
    EXPECT_EQ(f.ReadAll(), checked.ReadAll());
  }
}

TEST(PageChecksumTest, VerificationOffReadsDamagedPagesUnchecked) {
  MemFile f;
  WriteTable(f, Codec::kUncompressed, 1);
  const PageSummary page = FirstPage(*f.Open(), 1, PageType::kDataPage);
  const int64_t first = f.Open()->ReadColumnChunk(0, 1).values<int64_t>()[0];
  std::string bytes = f.Bytes();
  bytes[page.offset + page.header_size] ^= 1;  // the low byte of the first PLAIN int64
  f.SetBytes(bytes);
  auto unchecked = ParquetFile::Open(*f.fs, f.path, Unchecked());
  EXPECT_EQ(unchecked->ReadColumnChunk(0, 1).values<int64_t>()[0], first ^ 1);
  EXPECT_THROW_WITH(f.Open()->ReadColumnChunk(0, 1), CorruptDataError, "page CRC mismatch");
}

TEST(PageChecksumTest, PageHeadersOfADamagedChunkNameTheOffset) {
  MemFile f;
  WriteTable(f, Codec::kSnappy, 1);
  auto clean = f.Open();
  const auto pages = clean->ReadPageHeaders(0, 1);
  ASSERT_GE(pages.size(), 2u);
  std::string bytes = f.Bytes();
  // The second page's header rewritten to claim far more bytes than the chunk holds.
  const PageSummary& second = pages[1];
  size_t header_size = 0;
  PageHeader h = ParsePageHeader(std::string_view(bytes).substr(second.offset), "x", 0, 64, &header_size);
  h.compressed_page_size = 1 << 30;
  std::string header;
  SerializePageHeader(h, &header);
  bytes.replace(second.offset, header_size, header);
  f.SetBytes(bytes);
  EXPECT_THROW_WITH(f.Open()->ReadPageHeaders(0, 1), CorruptDataError, f.path, "row group 0", "column 'x'",
                    "offset " + std::to_string(second.offset));
}

}  // namespace
}  // namespace lakerun::parquet
