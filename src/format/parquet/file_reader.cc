#include "lakerun/format/parquet/file_reader.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "format/parquet/column_chunk_reader.h"
#include "format/parquet/mapped_file.h"
#include "format/parquet/metadata_thrift.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

constexpr char kMagic[] = "PAR1";

class StringFile final : public RandomAccessFile {
 public:
  StringFile(std::string name, std::string bytes) : RandomAccessFile(std::move(name)), bytes_(std::move(bytes)) {}
  uint64_t Size() const override { return bytes_.size(); }
  void ReadAt(uint64_t offset, size_t n, void* out) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) {
      LAKERUN_THROW(CorruptDataError, path(), ": read of ", n, " bytes at offset ", offset,
                    " goes past the end of the file (", bytes_.size(), " bytes)");
    }
    if (n) std::memcpy(out, bytes_.data() + offset, n);
  }

 private:
  std::string bytes_;
};

}  // namespace

ParquetFile::~ParquetFile() = default;

std::unique_ptr<ParquetFile> ParquetFile::Open(FileSystem& fs, const std::string& path, const ReaderOptions& options,
                                               std::optional<uint64_t> known_size) {
  if (!known_size) return FromFile(fs, path, options, fs.OpenForRead(path));
  try {
    return FromFile(fs, path, options, fs.OpenForReadOfSize(path, *known_size));
  } catch (const Error&) {
    // A size that no longer matches the file reads other bytes as its footer: say so rather than blame the file.
    const std::optional<FileInfo> actual = fs.Stat(path);
    if (actual && !actual->is_directory && actual->size != *known_size) {
      LAKERUN_THROW(IoError, path, ": listed at ", *known_size, " bytes, but it holds ", actual->size,
                    " (it changed after it was listed, or a Delta log records a wrong size)");
    }
    throw;
  }
}

std::unique_ptr<ParquetFile> ParquetFile::FromFile(FileSystem& fs, const std::string& path,
                                                   const ReaderOptions& options, std::unique_ptr<RandomAccessFile> file) {
  std::unique_ptr<ParquetFile> f(new ParquetFile());
  f->path_ = path;
  f->options_ = options;
  f->file_ = std::move(file);
  f->file_size_ = f->file_->Size();
  const uint64_t size = f->file_size_;
  if (size < 12) {
    LAKERUN_THROW(CorruptDataError, path, ": not a Parquet file: ", size, " bytes is shorter than the 12-byte minimum");
  }
  char tail[8];
  f->file_->ReadAt(size - 8, 8, tail);
  LAKERUN_CHECK_AS(NotImplemented, std::memcmp(tail + 4, "PARE", 4) != 0, path,
                   ": encrypted Parquet files (an encrypted footer, PARE magic) are not supported");
  if (std::memcmp(tail + 4, kMagic, 4) != 0) {
    LAKERUN_THROW(CorruptDataError, path, ": not a Parquet file: no PAR1 magic at offset ", size - 4,
                  " (the file may be truncated)");
  }
  const std::optional<std::string> local_path = fs.LocalPath(path);
  if (local_path) f->CheckHeadMagic();  // a remote file's waits for its first chunk read (head_checked_)
  uint32_t footer_len;
  std::memcpy(&footer_len, tail, 4);
  if (footer_len > size - 12 || footer_len > options.max_footer_bytes) {
    LAKERUN_THROW(CorruptDataError, path, ": footer length ", footer_len, " at offset ", size - 8,
                  " is impossible for a file of ", size, " bytes");
  }
  const uint64_t footer_offset = size - 8 - footer_len;
  std::string footer = f->file_->ReadAt(footer_offset, footer_len);
  f->metadata_ = ParseFileMetaData(footer, path, footer_offset, options.max_thrift_depth);
  f->metadata_.footer_length = footer_len;
  if (local_path && options.memory_map) {
    if (auto mapping = MappedFile::Map(*local_path, size)) {
      f->mapped_ = mapping->data();
      f->mapping_ = std::move(mapping);
    }
  }
  return f;
}

std::unique_ptr<ParquetFile> ParquetFile::OpenBuffer(std::string bytes, const std::string& name,
                                                     const ReaderOptions& options) {
  class OneFileSystem final : public FileSystem {
   public:
    OneFileSystem(std::string name, std::string bytes) : name_(std::move(name)), bytes_(std::move(bytes)) {}
    std::unique_ptr<RandomAccessFile> OpenForRead(const std::string&) override {
      return std::make_unique<StringFile>(name_, std::move(bytes_));
    }
    std::unique_ptr<WritableFile> OpenForWrite(const std::string&) override { return nullptr; }
    std::unique_ptr<WritableFile> OpenForAppend(const std::string&) override { return nullptr; }
    bool CreateExclusive(const std::string&, std::string_view) override { return false; }
    bool Exists(const std::string&) override { return true; }
    std::optional<FileInfo> Stat(const std::string&) override { return std::nullopt; }
    std::vector<FileInfo> List(const std::string&) override { return {}; }
    void CreateDirs(const std::string&) override {}
    void Remove(const std::string&) override {}
    void RemoveAll(const std::string&) override {}
    void Rename(const std::string&, const std::string&) override {}

   private:
    std::string name_;
    std::string bytes_;
  };
  OneFileSystem fs(name, std::move(bytes));
  return Open(fs, name, options);
}

void ParquetFile::WillReadRowGroup(int row_group, const std::vector<int>& columns) const {
  WillReadRowGroups({row_group}, columns);
}

void ParquetFile::WillReadRowGroups(const std::vector<int>& row_groups, const std::vector<int>& columns) const {
  if (mapped_ != nullptr) return;
  std::vector<std::pair<uint64_t, size_t>> ranges;
  ranges.reserve(row_groups.size() * columns.size());
  for (const int row_group : row_groups) {
    for (const int column : columns) {
      try {
        const auto range = ChunkRange(row_group, column);
        if (range.second > 0) ranges.push_back(range);
      } catch (const Error&) {
        // Only a hint: the chunk's read reports what is wrong with it (or skips a chunk without values).
      }
    }
  }
  if (!ranges.empty() && !head_checked_.load(std::memory_order_acquire)) ranges.push_back({0, 4});
  if (!ranges.empty()) file_->WillRead(ranges);
}

std::string ParquetFile::ReadColumnChunkBytes(int row_group, int column) const {
  Buffer buf;
  ReadChunk(row_group, column, &buf);
  return std::string(reinterpret_cast<const char*>(buf.data()), buf.size());
}

std::pair<uint64_t, size_t> ParquetFile::ChunkRange(int row_group, int column) const {
  LAKERUN_CHECK(row_group >= 0 && row_group < num_row_groups(), path_, ": row group ", row_group,
                " out of range [0, ", num_row_groups(), ")");
  LAKERUN_CHECK(column >= 0 && column < schema().num_columns(), path_, ": column ", column, " out of range [0, ",
                schema().num_columns(), ")");
  const ColumnChunkMeta& c = metadata_.row_groups[static_cast<size_t>(row_group)].columns[static_cast<size_t>(column)];
  const std::string& name = schema().column(column).dotted_path;
  if (!c.file_path.empty()) {
    LAKERUN_THROW(NotImplemented, path_, ": row group ", row_group, ", column '", name,
                  "' lives in another file (", c.file_path, "), which is not supported");
  }
  const int64_t start = c.start_offset();
  const int64_t length = c.total_compressed_size;
  const uint64_t data_end = file_size_ - 8 - metadata_.footer_length;
  if (start < 4 || length < 0 || static_cast<uint64_t>(start) > data_end ||
      static_cast<uint64_t>(length) > data_end - static_cast<uint64_t>(start)) {
    LAKERUN_THROW(CorruptDataError, path_, ": row group ", row_group, ", column '", name, "': chunk of ", length,
                  " bytes at offset ", start, " lies outside the data section [4, ", data_end, ")");
  }
  if (static_cast<uint64_t>(length) > options_.max_page_bytes * 4 + (1ull << 30)) {
    LAKERUN_THROW(CorruptDataError, path_, ": row group ", row_group, ", column '", name, "': chunk of ", length,
                  " bytes at offset ", start, " exceeds the reader's limit");
  }
  return {static_cast<uint64_t>(start), static_cast<size_t>(length)};
}

void ParquetFile::CheckHeadMagic() const {
  char head[4];
  file_->ReadAt(0, 4, head);
  if (std::memcmp(head, kMagic, 4) != 0) {
    LAKERUN_THROW(CorruptDataError, path_, ": not a Parquet file: no PAR1 magic at offset 0");
  }
  head_checked_.store(true, std::memory_order_release);
}

void ParquetFile::ReadChunkBytes(int row_group, int column, uint64_t offset, size_t length, void* out) const {
  if (!head_checked_.load(std::memory_order_acquire)) CheckHeadMagic();
  try {
    file_->ReadAt(offset, length, out);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, path_, ": row group ", row_group, ", column '", schema().column(column).dotted_path,
                  "': reading ", length, " bytes at offset ", offset, " failed: ", e.what());
  }
}

void ParquetFile::ReadChunk(int row_group, int column, Buffer* out, std::optional<size_t> max_length) const {
  const auto [start, chunk_length] = ChunkRange(row_group, column);
  const size_t length = std::min(chunk_length, max_length.value_or(chunk_length));
  Buffer& bytes = *out;
  bytes.Clear();  // nothing to keep: growing does not copy
  try {
    bytes.Resize(length);
  } catch (const std::bad_alloc&) {
    ThrowAllocationFailure(
        StrCat(path_, ": row group ", row_group, ", column '", schema().column(column).dotted_path, "'"), length,
        "the column chunk");
  }
  ReadChunkBytes(row_group, column, start, length, bytes.data());
}

ColumnData ParquetFile::ReadColumnChunk(int row_group, int column) const {
  ColumnData out;
  ReadColumnChunk(row_group, column, &out, nullptr);
  return out;
}

ColumnData ParquetFile::ReadColumnChunk(int row_group, int column, const ColumnReadOptions& options) const {
  ColumnData out;
  ReadColumnChunk(row_group, column, &out, nullptr, options);
  return out;
}

void ParquetFile::ReadColumnChunk(int row_group, int column, ColumnData* out, ReadScratch* scratch) const {
  ReadColumnChunk(row_group, column, out, scratch, ColumnReadOptions{});
}

void ParquetFile::ReadColumnChunk(int row_group, int column, ColumnData* out, ReadScratch* scratch,
                                  const ColumnReadOptions& options) const {
  ReadScratch local;
  if (scratch == nullptr) scratch = &local;
  LAKERUN_CHECK(row_group >= 0 && row_group < num_row_groups(), path_, ": row group ", row_group,
                " out of range [0, ", num_row_groups(), ")");
  LAKERUN_CHECK(column >= 0 && column < schema().num_columns(), path_, ": column ", column, " out of range [0, ",
                schema().num_columns(), ")");
  const ColumnDescriptor& d = schema().column(column);
  const bool ranged = options.row_end >= 0;
  LAKERUN_CHECK(!ranged || d.max_rep_level == 0, path_, ": column ", d.dotted_path,
                " has repetition levels: rows of a row group can only be read whole");
  LAKERUN_CHECK(!ranged || (options.row_begin >= 0 && options.row_begin <= options.row_end), path_,
                ": bad row range [", options.row_begin, ", ", options.row_end, ")");
  const bool byte_type = d.physical_type == PhysicalType::kByteArray ||
                         d.physical_type == PhysicalType::kFixedLenByteArray ||
                         d.physical_type == PhysicalType::kInt96;
  const bool views = options.byte_views && byte_type;
  ChunkMemory memory;
  memory.page_scratch = &scratch->page;
  memory.view_pool = &scratch->view_buffers;
  const Buffer* chunk = &scratch->chunk_bytes;
  std::string_view chunk_view;
  const ColumnChunkMeta& meta =
      metadata_.row_groups[static_cast<size_t>(row_group)].columns[static_cast<size_t>(column)];
  // A chunk without values has nothing to read: writers of empty files may not even give it a valid offset.
  const bool empty = meta.num_values == 0;
  // The chunk's leading bytes that a fetch_range_only read needs; nullopt: all of them.
  std::optional<size_t> prefix;
  if (ranged && options.fetch_range_only && mapped_ == nullptr && !empty) {
    prefix = RangePrefixLength(row_group, column, options.row_end);
  }
  if (empty) {
    chunk_view = std::string_view();
  } else if (mapped_ != nullptr) {
    // Decode from the mapping; in the views form, views of uncompressed pages point into it.
    const auto [start, length] = ChunkRange(row_group, column);
    chunk_view = std::string_view(reinterpret_cast<const char*>(mapped_) + start, length);
    if (views && meta.codec == Codec::kUncompressed) memory.chunk = mapping_;
  } else if (views && meta.codec == Codec::kUncompressed) {
    // Views point straight into the stored pages: the chunk's bytes are shared with the result. Drop out's page
    // memory first so that it can be reused for these bytes. (Compressed chunks decompress into page memory; their
    // occasional stored-uncompressed v2 page is copied there.)
    out->ClearForms();
    // The size is only a capacity hint here (ReadChunk validates it): bounded by the file so a lying footer
    // cannot ask for more.
    const uint64_t hint = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(0, meta.total_compressed_size)),
                                             file_size_);
    std::shared_ptr<Buffer> shared;
    try {
      shared = AcquireBuffer(&scratch->view_buffers, static_cast<size_t>(hint));
    } catch (const std::bad_alloc&) {
      ThrowAllocationFailure(StrCat(path_, ": row group ", row_group, ", column '", d.dotted_path, "'"), hint,
                             "the column chunk");
    }
    ReadChunk(row_group, column, shared.get(), prefix);
    chunk = shared.get();
    memory.chunk = std::move(shared);
  } else {
    ReadChunk(row_group, column, &scratch->chunk_bytes, prefix);
  }
  if (mapped_ == nullptr && !empty) chunk_view = std::string_view(reinterpret_cast<const char*>(chunk->data()), chunk->size());
  const RowGroupMeta& g = metadata_.row_groups[static_cast<size_t>(row_group)];
  const ColumnChunkMeta& c = g.columns[static_cast<size_t>(column)];
  ChunkSpec spec;
  spec.type = d.physical_type;
  spec.type_length = d.type_length;
  spec.max_def_level = d.max_def_level;
  spec.max_rep_level = d.max_rep_level;
  spec.codec = c.codec;
  spec.num_values = c.num_values;
  spec.max_page_bytes = options_.max_page_bytes;
  spec.max_thrift_depth = options_.max_thrift_depth;
  spec.verify_crc = options_.verify_crc;
  spec.byte_views = views;
  spec.keep_dictionary = options.dictionary && byte_type;
  // One block for every page when the metadata is right; a lying size only changes how memory is split in blocks.
  // Capped at 32x the stored size (typical codecs compress 2-10x; pages past the block get further blocks).
  spec.view_block_bytes = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(0, c.total_uncompressed_size)),
                                             32 * static_cast<uint64_t>(std::max<int64_t>(0, c.total_compressed_size)));
  DecodeContext ctx;
  ctx.file = path_;
  ctx.row_group = row_group;
  ctx.column = d.dotted_path;
  spec.row_begin = options.row_begin;
  spec.row_end = options.row_end;
  DecodeColumnChunkInto(chunk_view, static_cast<uint64_t>(c.start_offset()), spec, ctx, out, memory);
  if (d.max_rep_level == 0 && !ranged && out->num_slots() != g.num_rows) {
    ctx.page_offset = static_cast<uint64_t>(c.start_offset());
    ctx.Fail(StrCat("column chunk holds ", out->num_slots(), " rows, the row group has ", g.num_rows));
  }
  if (ranged) {
    // The pages read must cover the part of the range inside the row group.
    const int64_t end = std::min(options.row_end, g.num_rows);
    const int64_t begin = std::min(options.row_begin, end);
    if (out->first_row() > begin || out->first_row() + out->num_slots() < end) {
      ctx.page_offset = static_cast<uint64_t>(c.start_offset());
      ctx.Fail(StrCat("pages read hold rows ", out->first_row(), "-", out->first_row() + out->num_slots(),
                      ", not the rows ", begin, "-", end, " asked for (the row group has ", g.num_rows, ")"));
    }
  }
}

}  // namespace lakerun::parquet
