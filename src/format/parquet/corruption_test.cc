// Bad input: every damaged file must raise a lakerun::Error naming the file, row group, column and offset — never
// crash or hang. Files come from ParquetWriter and are then damaged.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "format/parquet/codec.h"
#include "format/parquet/fuzz_entry_points.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/rle_encoder.h"
#include "format/parquet/parquet_test_util.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

MemFile SmallFile(Codec codec = Codec::kSnappy, int page_version = 1, bool dictionary = true) {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      Leaf("v", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()),
                                      ListOf("l", Leaf("element", PhysicalType::kInt32, Repetition::kOptional))});
  std::vector<Value> rows;
  for (int i = 0; i < 40; ++i) {
    rows.push_back(Value::Struct({{"id", Value::Int(i)},
                                  {"v", i % 3 ? Value::String("s" + std::to_string(i % 5)) : Value::Null()},
                                  {"l", Value::List({Value::Int(i), Value::Null()})}}));
  }
  WriterOptions o;
  o.codec = codec;
  o.page_version = page_version;
  o.dictionary = dictionary;
  o.row_group_rows = 20;
  MemFile f;
  f.WriteRows(schema, rows, o);
  return f;
}

TEST(CorruptionTest, TruncatedFileHasNoTrailingMagic) {
  MemFile f = SmallFile();
  std::string bytes = f.Bytes();
  f.SetBytes(bytes.substr(0, bytes.size() - 3));
  EXPECT_THROW_WITH(f.Open(), CorruptDataError, f.path, "PAR1", "truncated");
  f.SetBytes("PAR");
  EXPECT_THROW_WITH(f.Open(), CorruptDataError, f.path, "shorter than");
}

// A file that is not local (here in memory, as in object storage) checks its head magic with its first chunk read,
// whose fetch the 4 bytes join; a local file checks it when opened.
TEST(CorruptionTest, WrongLeadingMagic) {
  MemFile f = SmallFile();
  std::string bytes = f.Bytes();
  bytes[0] = 'X';
  f.SetBytes(bytes);
  const auto file = f.Open();
  EXPECT_THROW_WITH(file->ReadColumnChunk(0, 0), CorruptDataError, f.path, "no PAR1 magic at offset 0");
  EXPECT_THROW_WITH(file->ReadColumnChunk(1, 0), CorruptDataError, f.path, "no PAR1 magic at offset 0");
  lakerun::testing::TempDir dir;
  const std::string local = dir.Join("bad-head.parquet");
  LocalFileSystem().WriteAtomically(local, bytes);
  EXPECT_THROW_WITH(ParquetFile::Open(LocalFileSystem(), local), CorruptDataError, local,
                    "no PAR1 magic at offset 0");
}

TEST(CorruptionTest, AnEncryptedFooterIsNamedAsSuch) {
  MemFile f = SmallFile();
  std::string bytes = f.Bytes();
  bytes.replace(bytes.size() - 4, 4, "PARE");
  bytes.replace(0, 4, "PARE");
  f.SetBytes(bytes);
  EXPECT_THROW_WITH(f.Open(), NotImplemented, f.path, "encrypted Parquet files");
}

TEST(CorruptionTest, ImpossibleFooterLength) {
  MemFile f = SmallFile();
  std::string bytes = f.Bytes();
  const uint32_t huge = 0x7fffffff;
  std::memcpy(bytes.data() + bytes.size() - 8, &huge, 4);
  f.SetBytes(bytes);
  EXPECT_THROW_WITH(f.Open(), CorruptDataError, f.path, "footer length 2147483647", "offset");
}

TEST(CorruptionTest, CorruptThriftInTheFooter) {
  MemFile f = SmallFile();
  std::string bytes = f.Bytes();
  uint32_t len;
  std::memcpy(&len, bytes.data() + bytes.size() - 8, 4);
  const size_t footer = bytes.size() - 8 - len;
  // A field header with the invalid wire type 13 as the very first byte.
  bytes[footer] = 0x1d;
  f.SetBytes(bytes);
  EXPECT_THROW_WITH(f.Open(), CorruptDataError, f.path, "footer", "corrupt Thrift", "offset " + std::to_string(footer));
}

TEST(CorruptionTest, ThriftNestingDepthIsLimited) {
  // 100 nested structs: field 1 of type struct, again and again.
  // Field 15 (unknown, so skipped) of type struct, nested 100 times.
  std::string deep(100, '\xfc');
  EXPECT_THROW_WITH(fuzz::ParseFooter(deep), CorruptDataError, "nesting deeper than 64");
}

TEST(CorruptionTest, ChunkOffsetOutsideTheFile) {
  MemFile f = SmallFile();
  RewriteFooter(f, [](FileMetaData& md) {
    md.row_groups[1].columns[1].data_page_offset = 1 << 30;
    md.row_groups[1].columns[1].dictionary_page_offset.reset();
  });
  auto file = f.Open();
  EXPECT_THROW_WITH(file->ReadColumnChunk(1, 1), CorruptDataError, f.path, "row group 1", "column 'v'",
                    "offset 1073741824", "outside the data section");
  EXPECT_NO_THROW(file->ReadColumnChunk(1, 0));
}

TEST(CorruptionTest, CorruptPageHeaderNamesRowGroupColumnAndOffset) {
  MemFile f = SmallFile();
  auto clean = f.Open();
  const auto& chunk = clean->metadata().row_groups[1].columns[0];
  const int64_t at = chunk.start_offset();
  FaultInjectingFileSystem faulty(*f.fs);
  faulty.CorruptByte("data.parquet", static_cast<uint64_t>(at));  // first byte of the first page header
  auto file = ParquetFile::Open(faulty, f.path);
  EXPECT_THROW_WITH(file->ReadColumnChunk(1, 0), CorruptDataError, f.path, "row group 1", "column 'id'",
                    "offset " + std::to_string(at));
}

TEST(CorruptionTest, FailedDecompressionIsCorruptData) {
  for (Codec codec : {Codec::kSnappy, Codec::kZstd, Codec::kGzip, Codec::kLz4Raw, Codec::kBrotli}) {
    MemFile f = SmallFile(codec, 1, /*dictionary=*/false);
    auto clean = f.Open();
    const auto& chunk = clean->metadata().row_groups[0].columns[0];
    // The page body starts right after the page header.
    std::string raw = clean->ReadColumnChunkBytes(0, 0);
    size_t header_size = 0;
    ParsePageHeader(raw, "x", 0, 64, &header_size);
    std::string bytes = f.Bytes();
    const size_t body = static_cast<size_t>(chunk.start_offset()) + header_size;
    for (int k = 0; k < 4; ++k) bytes[body + k] = static_cast<char>(0xff);
    f.SetBytes(bytes);
    ReaderOptions unchecked;  // the page CRC would catch the damage first
    unchecked.verify_crc = false;
    auto file = ParquetFile::Open(*f.fs, f.path, unchecked);
    EXPECT_THROW_WITH(file->ReadColumnChunk(0, 0), CorruptDataError, f.path, "row group 0", "column 'id'",
                      ToString(codec) + " decompression failed", "offset " + std::to_string(chunk.start_offset()));
  }
}

// Fails reads that touch [begin, end) of every file, as a failing disk would.
class RangeFailingFileSystem : public FileSystem {
 public:
  RangeFailingFileSystem(FileSystem& base, uint64_t begin, uint64_t end) : base_(base), begin_(begin), end_(end) {}
  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) override {
    class File : public RandomAccessFile {
     public:
      File(std::unique_ptr<RandomAccessFile> f, uint64_t b, uint64_t e)
          : RandomAccessFile(f->path()), f_(std::move(f)), b_(b), e_(e) {}
      uint64_t Size() const override { return f_->Size(); }
      void ReadAt(uint64_t offset, size_t n, void* out) const override {
        if (offset < e_ && offset + n > b_) LAKERUN_THROW(IoError, path(), ": injected read failure");
        f_->ReadAt(offset, n, out);
      }
     private:
      std::unique_ptr<RandomAccessFile> f_;
      uint64_t b_, e_;
    };
    return std::make_unique<File>(base_.OpenForRead(path), begin_, end_);
  }
  std::unique_ptr<WritableFile> OpenForWrite(const std::string& p) override { return base_.OpenForWrite(p); }
  std::unique_ptr<WritableFile> OpenForAppend(const std::string& p) override { return base_.OpenForAppend(p); }
  bool CreateExclusive(const std::string& p, std::string_view c) override { return base_.CreateExclusive(p, c); }
  bool Exists(const std::string& p) override { return base_.Exists(p); }
  std::optional<FileInfo> Stat(const std::string& p) override { return base_.Stat(p); }
  std::vector<FileInfo> List(const std::string& d) override { return base_.List(d); }
  void CreateDirs(const std::string& p) override { base_.CreateDirs(p); }
  void Remove(const std::string& p) override { base_.Remove(p); }
  void RemoveAll(const std::string& p) override { base_.RemoveAll(p); }
  void Rename(const std::string& a, const std::string& b) override { base_.Rename(a, b); }

 private:
  FileSystem& base_;
  uint64_t begin_, end_;
};

TEST(CorruptionTest, ReadFailuresNameTheColumnChunk) {
  MemFile f = SmallFile();
  auto clean = f.Open();
  const auto& chunk = clean->metadata().row_groups[1].columns[2];
  // The footer lies past the failing range; a read of the whole file fails at open.
  FaultInjectingFileSystem faulty(*f.fs);
  faulty.FailReadsOf("data.parquet", static_cast<uint64_t>(chunk.start_offset()));
  EXPECT_THROW_WITH(ParquetFile::Open(faulty, f.path), IoError, f.path);
  RangeFailingFileSystem failing(*f.fs, static_cast<uint64_t>(chunk.start_offset()),
                                 static_cast<uint64_t>(chunk.start_offset() + 1));
  auto file = ParquetFile::Open(failing, f.path);
  EXPECT_NO_THROW(file->ReadColumnChunk(0, 0));
  EXPECT_THROW_WITH(file->ReadColumnChunk(1, 2), IoError, f.path, "row group 1", "column 'l.list.element'",
                    "offset " + std::to_string(chunk.start_offset()), "injected read failure");
}

// Builds a chunk: an optional dictionary page of INT32 values, then one v1 data page with the given body.
std::string Chunk(const std::vector<int32_t>& dictionary, int32_t num_values, Encoding encoding,
                  const std::string& body) {
  std::string out;
  if (!dictionary.empty()) {
    PageHeader d;
    d.type = static_cast<int32_t>(PageType::kDictionaryPage);
    d.uncompressed_page_size = d.compressed_page_size = static_cast<int32_t>(dictionary.size() * 4);
    d.num_values = static_cast<int32_t>(dictionary.size());
    d.encoding = static_cast<int32_t>(Encoding::kPlain);
    SerializePageHeader(d, &out);
    out.append(reinterpret_cast<const char*>(dictionary.data()), dictionary.size() * 4);
  }
  PageHeader h;
  h.type = static_cast<int32_t>(PageType::kDataPage);
  h.uncompressed_page_size = h.compressed_page_size = static_cast<int32_t>(body.size());
  h.num_values = num_values;
  h.encoding = static_cast<int32_t>(encoding);
  SerializePageHeader(h, &out);
  return out + body;
}

TEST(CorruptionTest, DictionaryIndexOutOfRange) {
  std::vector<uint32_t> indices = {0, 1, 2, 3};
  std::string body(1, '\x02');  // bit width 2: index 3 fits the bits but not the 2-entry dictionary
  EncodeRleHybrid(indices.data(), 4, 2, &body);
  const std::string chunk = Chunk({10, 20}, 4, Encoding::kRleDictionary, body);
  EXPECT_THROW_WITH(fuzz::DecodeColumnChunk(chunk, PhysicalType::kInt32, 0, 0, 0, Codec::kUncompressed),
                    CorruptDataError, "row group 0", "column 'c'", "dictionary index 3 out of range",
                    "2 entries");
}

TEST(CorruptionTest, DictionaryBitWidthOverflow) {
  std::string body(1, '\x28');  // bit width 40
  body += std::string(16, '\x01');
  const std::string chunk = Chunk({10, 20}, 4, Encoding::kRleDictionary, body);
  EXPECT_THROW_WITH(fuzz::DecodeColumnChunk(chunk, PhysicalType::kInt32, 0, 0, 0, Codec::kUncompressed),
                    CorruptDataError, "bit width 40 > 32");
}

TEST(CorruptionTest, DictionaryEncodedPageWithoutDictionary) {
  std::string body(1, '\x01');
  body += std::string(4, '\x00');
  const std::string chunk = Chunk({}, 4, Encoding::kPlainDictionary, body);
  EXPECT_THROW_WITH(fuzz::DecodeColumnChunk(chunk, PhysicalType::kInt32, 0, 0, 0, Codec::kUncompressed),
                    CorruptDataError, "without a dictionary page");
}

TEST(CorruptionTest, DefinitionLevelAboveTheMaximum) {
  // max_def 2 needs 2 bits, which can also hold 3.
  std::vector<int16_t> levels = {2, 3, 1, 0};
  std::string body;
  EncodeRleHybridWithLength(levels.data(), 4, 2, &body);
  const int32_t v = 7;
  body.append(reinterpret_cast<const char*>(&v), 4);
  const std::string chunk = Chunk({}, 4, Encoding::kPlain, body);
  EXPECT_THROW_WITH(fuzz::DecodeColumnChunk(chunk, PhysicalType::kInt32, 0, 2, 0, Codec::kUncompressed),
                    CorruptDataError, "definition level 3 exceeds the column's maximum 2", "offset 0");
}

TEST(CorruptionTest, LevelLengthOverrunsThePage) {
  std::string body;
  const uint32_t len = 1000;
  body.append(reinterpret_cast<const char*>(&len), 4);
  body += "\x02\x01";
  const std::string chunk = Chunk({}, 2, Encoding::kPlain, body);
  EXPECT_THROW_WITH(fuzz::DecodeColumnChunk(chunk, PhysicalType::kInt32, 0, 1, 0, Codec::kUncompressed),
                    CorruptDataError, "definition levels: length 1000 overruns the page");
}

TEST(CorruptionTest, DeltaBitWidthOverflow) {
  std::string enc;
  // block 128, 4 miniblocks, 10 values, first value 0; min delta 0; widths 70,0,0,0
  enc += std::string("\x80\x01\x04\x0a\x00\x00", 6);
  enc += std::string("\x46\x00\x00\x00", 4);
  enc += std::string(64, '\x00');
  EXPECT_THROW_WITH(fuzz::DecodeDeltaBinaryPacked(enc, PhysicalType::kInt64, 10), CorruptDataError,
                    "bit width 70 > 64");
  EXPECT_THROW_WITH(fuzz::DecodeDeltaBinaryPacked(enc, PhysicalType::kInt32, 20), CorruptDataError,
                    "20 values", "holds 10");
}

TEST(CorruptionTest, PlainValuesOverrunThePage) {
  EXPECT_THROW_WITH(fuzz::DecodePlain(std::string("\xff\xff\xff\x7f", 4) + "abc", PhysicalType::kByteArray, 0, 1),
                    CorruptDataError, "overruns the page");
  EXPECT_THROW_WITH(fuzz::DecodePlain("abcdefg", PhysicalType::kInt64, 0, 1), CorruptDataError, "need 8 bytes");
}

TEST(CorruptionTest, ValueCountDisagreesWithMetadata) {
  MemFile f = SmallFile(Codec::kUncompressed);
  RewriteFooter(f, [](FileMetaData& md) { md.row_groups[0].columns[0].num_values = 25; });
  EXPECT_THROW_WITH(f.Open()->ReadColumnChunk(0, 0), CorruptDataError, "row group 0", "column 'id'",
                    "holds 20 values", "says 25");
}

// Flips every byte of small files, one at a time: each damaged file either reads or raises a lakerun::Error.
TEST(CorruptionTest, EverySingleByteCorruptionIsCaughtOrHarmless) {
  for (int version : {1, 2}) {
    for (Codec codec : {Codec::kUncompressed, Codec::kSnappy}) {
      const std::string bytes = SmallFile(codec, version).Bytes();
      int errors = 0;
      for (size_t i = 0; i < bytes.size(); ++i) {
        std::string damaged = bytes;
        damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
        try {
          fuzz::ParseFile(damaged);
        } catch (const Error&) {
          ++errors;
        }
      }
      EXPECT_GT(errors, static_cast<int>(bytes.size() / 4)) << ToString(codec) << " v" << version;
    }
  }
}

TEST(CorruptionTest, UnknownCodecIsNotImplemented) {
  std::vector<uint8_t> out(4);
  EXPECT_THROW_WITH(Decompress(Codec::kLzo, "abcd", out.data(), 4, "ctx"), NotImplemented, "LZO");
}

// An allocation refused while a page is decoded (here the 64 MiB a tiny snappy page decompresses to, under an
// address-space limit of 32 MiB more than the process has) is a ResourceError naming the file, row group, column,
// page and the bytes asked for, not a bare std::bad_alloc. Run in a forked child, which alone gets the limit.
TEST(CorruptionTest, AnAllocationRefusedWhileDecodingAPageIsAResourceErrorNamingIt) {
  MemFile f;
  Schema schema = Schema::FromFields({Leaf("s", PhysicalType::kByteArray)});
  WriterOptions o;
  o.codec = Codec::kSnappy;
  o.dictionary = false;
  f.WriteRows(schema, {Value::Struct({{"s", Value::Bytes(std::string(64 << 20, 'a'))}})}, o);
  const PageSummary page = f.Open()->ReadPageHeaders(0, 0).front();
  ASSERT_LT(page.compressed_size, 8 << 20);
  const std::string expected = "column 's', page 0 at offset " + std::to_string(page.offset) + ": cannot allocate " +
                               std::to_string(page.uncompressed_size) + " bytes for decoding the page";
  auto file = f.Open();
  // In the child: set the limit, read, and exit 0 on a ResourceError (its message on stderr for the matcher).
  auto read_limited = [&] {
    std::ifstream status("/proc/self/status");
    std::string line;
    uint64_t vm_kib = 0;
    while (std::getline(status, line)) {
      if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoull(line.substr(7));
    }
    rlimit limit{};
    limit.rlim_cur = (vm_kib + (32 << 10)) << 10;
    limit.rlim_max = RLIM_INFINITY;
    if (vm_kib == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    try {
      file->ReadColumnChunk(0, 0);
    } catch (const ResourceError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      _exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "other: %s\n", e.what());
    }
    _exit(1);
  };
  EXPECT_EXIT(read_limited(), ::testing::ExitedWithCode(0), expected);
}

}  // namespace
}  // namespace lakerun::parquet
