// Opening a Parquet file and decoding its column chunks.
//
//   auto file = lakerun::parquet::ParquetFile::Open(lakerun::LocalFileSystem(), "part-0.parquet");
//   const auto& md = file->metadata();                 // schema, row groups, statistics, key-value metadata
//   int col = *md.schema.FindColumn("features.list.element");
//   ColumnData data = file->ReadColumnChunk(/*row_group=*/0, col);
//   if (auto d = data.FixedListLength()) { /* data.values<float>() is [rows, *d] */ }
//
// ParquetFile is immutable after Open; ReadColumnChunk may be called from several threads at once. Every read goes
// through lakerun::FileSystem. Errors on bad input are CorruptDataError (NotImplemented for unsupported features)
// and name the file, row group, column and byte offset.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/metadata.h"

namespace lakerun::parquet {

/// Memory reused across ReadColumnChunk calls (one per thread): the chunk's raw bytes and decompressed pages.
struct ReadScratch {
  Buffer chunk_bytes;
  Buffer page;
  /// Page memory of the views form (ColumnReadOptions::byte_views), reused once no ColumnData holds it any more
  /// (at most 16 blocks are kept; results hold theirs until they are destroyed).
  std::vector<std::shared_ptr<Buffer>> view_buffers;
};

/// How ReadColumnChunk returns BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY and INT96 values ("byte values"; see column_data.h).
/// Other types are unaffected. The default is the copied layout.
struct ColumnReadOptions {
  /// Views form: one std::string_view per value into the decompressed pages (stored-uncompressed pages: into the
  /// chunk's bytes) that the ColumnData keeps alive, instead of a copy of every value. Costs 16 bytes per value,
  /// whatever its length: a large win for blobs and long strings, a wash for strings of a few bytes.
  bool byte_views = false;
  /// Dictionary form for chunks whose data pages are all dictionary-encoded: the indices plus the dictionary
  /// (itself views when byte_views is set), as Arrow's DictionaryArray; a chunk that falls back to another encoding
  /// part-way (or has no dictionary) comes back in the views or copied form.
  bool dictionary = false;
  /// Columns without repetition: decode only the data pages that hold some of the row group's rows
  /// [row_begin, row_end), skipping the others from their headers without decompressing them. The result starts at
  /// ColumnData::first_row() (<= row_begin) and covers at least up to row_end. row_end < 0: the whole chunk. A
  /// column with repetition throws InvalidArgument.
  int64_t row_begin = 0;
  int64_t row_end = -1;
  /// With a row range: read from the file only the chunk's bytes up to the end of the last page the range needs,
  /// found by reading the page headers one at a time (a small read per page passed, the bodies of later pages never
  /// read), instead of one read of the whole chunk. Meant for a few leading rows of a large chunk (`lakerun table
  /// head`); bulk readers are better off with the one large read. A memory-mapped file ignores it (pages that are
  /// not decoded are not touched anyway).
  bool fetch_range_only = false;
};

/// One page of a column chunk as its header describes it (ParquetFile::ReadPageHeaders).
struct PageSummary {
  PageType type = PageType::kDataPage;
  uint64_t offset = 0;             ///< file offset of the page header
  uint32_t header_size = 0;
  int32_t compressed_size = 0;     ///< bytes stored after the header
  int32_t uncompressed_size = 0;
  int32_t num_values = 0;          ///< level slots of a data page, entries of a dictionary page
  std::optional<uint32_t> crc;     ///< the CRC-32 of the stored page, where the writer put one in the header
};

struct ReaderOptions {
  /// Footers larger than this are rejected as corrupt (a real footer of a huge file is a few MB).
  uint64_t max_footer_bytes = 256ull << 20;
  /// Pages whose compressed or uncompressed size exceeds this are rejected (DuckDB writes ~100 MB pages).
  uint64_t max_page_bytes = 1ull << 30;
  /// Thrift nesting depth limit for footer and page headers.
  int max_thrift_depth = 64;
  /// Check the CRC-32 of every page decoded whose header stores one (pages without a CRC are read unchecked). A
  /// mismatch is a CorruptDataError naming the file, row group, column, page and its offset, raised before any of
  /// the page's values are decoded.
  bool verify_crc = true;
  /// Map local files (FileSystem::LocalPath) into memory and decode column chunks straight from the mapping instead of
  /// reading each chunk into a buffer first (one copy of the stored bytes less; in the views form, the values of
  /// UNCOMPRESSED chunks are views into the mapping, which the ColumnData keeps alive). Other file systems, or a
  /// file that cannot be mapped, are read as usual. The file must not shrink while it is open (reading a page past
  /// the new end raises SIGBUS, where reads would throw IoError): meant for immutable files (Delta, datasets).
  bool memory_map = false;
};

class ParquetFile {
 public:
  /// Reads and validates the footer. Throws IoError / CorruptDataError naming `path`. `size`: the file's size when
  /// the caller knows it (a listing's, a Delta log's), which saves an object store a request
  /// (FileSystem::OpenForReadOfSize).
  static std::unique_ptr<ParquetFile> Open(FileSystem& fs, const std::string& path, const ReaderOptions& options = {},
                                           std::optional<uint64_t> size = std::nullopt);
  /// Parses a whole file held in memory (tests, fuzzing). `name` is used in error messages.
  static std::unique_ptr<ParquetFile> OpenBuffer(std::string bytes, const std::string& name = "<buffer>",
                                                 const ReaderOptions& options = {});
  ~ParquetFile();

  const std::string& path() const { return path_; }
  const FileMetaData& metadata() const { return metadata_; }
  const Schema& schema() const { return metadata_.schema; }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }
  int64_t num_rows() const { return metadata_.num_rows; }
  uint64_t file_size() const { return file_size_; }

  /// Decodes one column chunk completely: every page, levels and values. Thread-safe.
  ColumnData ReadColumnChunk(int row_group, int column) const;
  /// Same, into `out`, reusing the capacity of its buffers (and of `scratch` when given): a loop that reads chunk
  /// after chunk this way stops allocating fresh memory, which otherwise dominates decoding time for large chunks.
  void ReadColumnChunk(int row_group, int column, ColumnData* out, ReadScratch* scratch = nullptr) const;
  /// Same, with byte values in the form `options` asks for. With views, reusing `out` and `scratch` also reuses the
  /// page memory of out's previous contents (unless a copy of it still holds that memory).
  void ReadColumnChunk(int row_group, int column, ColumnData* out, ReadScratch* scratch,
                       const ColumnReadOptions& options) const;
  ColumnData ReadColumnChunk(int row_group, int column, const ColumnReadOptions& options) const;

  /// Tells the file that these columns of `row_group` are read next, so that a remote file fetches their chunks
  /// together (coalesced, several requests in flight) instead of one request per chunk. Does nothing for local and
  /// memory-mapped files, and never throws: a chunk whose metadata is wrong is left to the read that reports it.
  /// Thread-safe.
  void WillReadRowGroup(int row_group, const std::vector<int>& columns) const;
  /// WillReadRowGroup for several row groups at once: neighbouring chunks of different row groups coalesce too.
  void WillReadRowGroups(const std::vector<int>& row_groups, const std::vector<int>& columns) const;

  /// The raw bytes of a column chunk as stored (page headers included).
  std::string ReadColumnChunkBytes(int row_group, int column) const;
  /// The chunk's page headers in file order, read with one small read per page (no page body is read or checked).
  /// A header that does not parse, or a page that overruns the chunk, is a CorruptDataError naming the file, row
  /// group, column and offset. Thread-safe.
  std::vector<PageSummary> ReadPageHeaders(int row_group, int column) const;

  /// The chunk's page index (page_index.h); std::nullopt when the file has none for it. Checked against the file,
  /// the chunk and the row group: a malformed or inconsistent index is a CorruptDataError naming the file, row group
  /// and column (a ColumnIndex whose page count differs from the OffsetIndex's included). Thread-safe.
  std::optional<ColumnIndex> ReadColumnIndex(int row_group, int column) const;
  std::optional<OffsetIndex> ReadOffsetIndex(int row_group, int column) const;

 private:
  ParquetFile() = default;
  /// Open's work on an opened file.
  static std::unique_ptr<ParquetFile> FromFile(FileSystem& fs, const std::string& path, const ReaderOptions& options,
                                               std::unique_ptr<RandomAccessFile> file);
  /// Reads the chunk's bytes (bounds-checked against the file) into `out`, without zero-filling; only the first
  /// `max_length` bytes when given.
  void ReadChunk(int row_group, int column, Buffer* out, std::optional<size_t> max_length = std::nullopt) const;
  /// The file offset and length of a chunk, checked against the file and the reader's limits.
  std::pair<uint64_t, size_t> ChunkRange(int row_group, int column) const;
  /// ColumnReadOptions::fetch_range_only: how many of the chunk's leading bytes hold every page up to the data page
  /// that completes row `row_end - 1` (the whole length when the pages run out first), from the page headers.
  size_t RangePrefixLength(int row_group, int column, int64_t row_end) const;
  /// Reads the chunk's page headers in order (ReadPageHeaders), calling `visit` with each page and the chunk offset
  /// just past its body, until it returns false or the chunk ends.
  void WalkPageHeaders(int row_group, int column,
                       const std::function<bool(const PageSummary& page, size_t end)>& visit) const;
  /// The bytes of an index of the chunk (ReadColumnIndex / ReadOffsetIndex), checked to lie in the data section.
  std::string ReadIndexBytes(int row_group, int column, const IndexLocation& where, const char* what) const;
  /// Reads `length` bytes at `offset` of the file; errors name the row group and column. The first such read of a
  /// file whose head magic is unchecked checks it first.
  void ReadChunkBytes(int row_group, int column, uint64_t offset, size_t length, void* out) const;
  /// Throws CorruptDataError unless the file starts with PAR1.
  void CheckHeadMagic() const;
  std::string path_;
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t file_size_ = 0;
  FileMetaData metadata_;
  ReaderOptions options_;
  std::shared_ptr<const void> mapping_;  ///< owns mapped_ (ReaderOptions::memory_map)
  const uint8_t* mapped_ = nullptr;      ///< the whole file, when mapped
  /// Whether the PAR1 at offset 0 was checked. A local file checks it when opened. A remote one checks it with its
  /// first chunk read: WillReadRowGroups adds the 4 bytes to the first GET, instead of opening with a request of
  /// its own beside the footer's (which took a round trip as long as the footer's on s3rver).
  mutable std::atomic<bool> head_checked_{false};
};

}  // namespace lakerun::parquet
