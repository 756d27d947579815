#include "lakerun/format/parquet/writer.h"

#include <algorithm>
#include <cstring>

#include "format/parquet/column_writer.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/page_index_thrift.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

constexpr char kMagic[] = "PAR1";

// Rough in-memory size of a value, for row-group byte limits of WriteRows.
int64_t ApproxBytes(const Value& v) {
  int64_t n = 8 + static_cast<int64_t>(v.as_string().size());
  for (const auto& c : v.children()) n += ApproxBytes(c);
  return n;
}

}  // namespace

class ParquetWriter::Impl {
 public:
  std::unique_ptr<WritableFile> file;
  FileMetaData metadata;
  std::vector<Value> buffered;
  int64_t buffered_bytes = 0;
  /// WriterOptions::page_index: per row group, per column, written by Close.
  std::vector<std::vector<ChunkPageIndex>> page_indexes;

  /// Appends every column index, then every offset index (parquet-mr's layout), and points the chunks at them.
  void WritePageIndexes() {
    for (bool columns : {true, false}) {
      for (size_t g = 0; g < page_indexes.size(); ++g) {
        for (size_t c = 0; c < page_indexes[g].size(); ++c) {
          const ChunkPageIndex& index = page_indexes[g][c];
          if (columns && !index.column_index) continue;
          const std::string bytes =
              columns ? SerializeColumnIndex(*index.column_index) : SerializeOffsetIndex(index.offset_index);
          const IndexLocation where{static_cast<int64_t>(file->Position()), static_cast<int32_t>(bytes.size())};
          file->Append(bytes);
          ColumnChunkMeta& chunk = metadata.row_groups[g].columns[c];
          (columns ? chunk.column_index : chunk.offset_index) = where;
        }
      }
    }
  }
};

ParquetWriter::ParquetWriter(FileSystem& fs, const std::string& path, Schema schema, WriterOptions options)
    : fs_(fs), path_(path), schema_(std::move(schema)), options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  LAKERUN_CHECK(options_.page_version == 1 || options_.page_version == 2, path, ": page_version must be 1 or 2, got ",
                options_.page_version);
  LAKERUN_CHECK(options_.row_group_rows > 0, path, ": row_group_rows must be positive");
  LAKERUN_CHECK(options_.page_bytes > 0, path, ": page_bytes must be positive");
  LAKERUN_CHECK(schema_.num_columns() > 0, path, ": the schema has no columns");
  for (const auto& [column, encoding] : options_.column_encoding) {
    LAKERUN_CHECK(schema_.FindColumn(column).has_value(), path, ": column_encoding names unknown column '", column, "'");
  }
  for (const auto& [column, codec] : options_.column_codec) {
    LAKERUN_CHECK(schema_.FindColumn(column).has_value(), path, ": column_codec names unknown column '", column, "'");
  }
  for (const auto& [column, shape] : options_.tensor_shapes) {
    // A top-level field, whose name may hold '.' (the converter writes struct and map leaves as "a.b" columns).
    const auto& top = schema_.root().children;
    const bool top_level = std::any_of(top.begin(), top.end(), [&](const SchemaNode& n) { return n.name == column; });
    LAKERUN_CHECK(top_level || schema_.FindNode(column) != nullptr, path, ": tensor_shapes names unknown column '",
                  column, "'");
    LAKERUN_CHECK(!shape.empty(), path, ": tensor shape of '", column, "' is empty");
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      LAKERUN_CHECK(shape[i] > 0, path, ": tensor shape of '", column, "' has dimension ", shape[i]);
      text += (i ? "," : "") + std::to_string(shape[i]);
    }
    options_.key_value_metadata.push_back({ShapeMetadataKey(column), text + "]"});
  }
  impl_->metadata.version = 2;
  impl_->metadata.schema = schema_;
  impl_->metadata.created_by = options_.created_by;
  impl_->metadata.key_value_metadata = options_.key_value_metadata;
  impl_->file = fs_.OpenForWrite(path_);
  impl_->file->Append(std::string_view(kMagic, 4));
}

ParquetWriter::~ParquetWriter() = default;

void ParquetWriter::WriteRowGroup(const std::vector<ColumnData>& columns) {
  LAKERUN_CHECK(!closed_, path_, ": WriteRowGroup after Close");
  if (!impl_->buffered.empty()) {
    std::vector<Value> rows = std::move(impl_->buffered);
    impl_->buffered.clear();
    impl_->buffered_bytes = 0;
    WriteRowGroup(ShredRecords(schema_, rows));
  }
  LAKERUN_CHECK(columns.size() == static_cast<size_t>(schema_.num_columns()), path_, ": WriteRowGroup got ",
                columns.size(), " columns, the schema has ", schema_.num_columns());
  int64_t rows = -1;
  for (int i = 0; i < schema_.num_columns(); ++i) {
    const ColumnDescriptor& c = schema_.column(i);
    const int64_t r = ValidateColumnData(c, columns[static_cast<size_t>(i)]);
    LAKERUN_CHECK(rows < 0 || r == rows, path_, ": column '", c.dotted_path, "' holds ", r, " rows, column '",
                  schema_.column(0).dotted_path, "' holds ", rows);
    rows = r;
  }
  RowGroupMeta g;
  g.ordinal = static_cast<int>(impl_->metadata.row_groups.size());
  g.num_rows = rows;
  g.file_offset = static_cast<int64_t>(impl_->file->Position());
  int64_t total = 0, compressed = 0;
  std::vector<ChunkPageIndex> page_indexes(options_.page_index ? static_cast<size_t>(schema_.num_columns()) : 0);
  for (int i = 0; i < schema_.num_columns(); ++i) {
    const ColumnDescriptor& c = schema_.column(i);
    ColumnWriteOptions o;
    auto codec = options_.column_codec.find(c.dotted_path);
    o.codec = codec != options_.column_codec.end() ? codec->second : options_.codec;
    o.compression_level = options_.compression_level;
    o.page_version = options_.page_version;
    o.page_bytes = options_.page_bytes;
    o.dictionary = options_.dictionary;
    o.dictionary_page_bytes = options_.dictionary_page_bytes;
    auto enc = options_.column_encoding.find(c.dotted_path);
    if (enc != options_.column_encoding.end()) o.encoding = enc->second;
    o.statistics = options_.statistics;
    o.page_checksums = options_.page_checksums;
    ColumnChunkMeta meta = WriteColumnChunk(*impl_->file, c, columns[static_cast<size_t>(i)], o,
                                            options_.page_index ? &page_indexes[static_cast<size_t>(i)] : nullptr);
    total += meta.total_uncompressed_size;
    compressed += meta.total_compressed_size;
    g.columns.push_back(std::move(meta));
  }
  g.total_byte_size = total;
  g.total_compressed_size = compressed;
  impl_->metadata.num_rows += rows;
  impl_->metadata.row_groups.push_back(std::move(g));
  if (options_.page_index) impl_->page_indexes.push_back(std::move(page_indexes));
  rows_written_ += rows;
}

void ParquetWriter::WriteRows(const std::vector<Value>& rows) {
  LAKERUN_CHECK(!closed_, path_, ": WriteRows after Close");
  for (const Value& row : rows) {
    impl_->buffered.push_back(row);
    impl_->buffered_bytes += ApproxBytes(row);
    if (static_cast<int64_t>(impl_->buffered.size()) >= options_.row_group_rows ||
        impl_->buffered_bytes >= options_.row_group_bytes) {
      std::vector<Value> batch = std::move(impl_->buffered);
      impl_->buffered.clear();
      impl_->buffered_bytes = 0;
      WriteRowGroup(ShredRecords(schema_, batch));
    }
  }
}

void ParquetWriter::Close() {
  if (closed_) return;
  if (!impl_->buffered.empty()) {
    std::vector<Value> batch = std::move(impl_->buffered);
    impl_->buffered.clear();
    WriteRowGroup(ShredRecords(schema_, batch));
  }
  closed_ = true;
  impl_->WritePageIndexes();
  const std::string footer = SerializeFileMetaData(impl_->metadata);
  impl_->file->Append(footer);
  const uint32_t len = static_cast<uint32_t>(footer.size());
  char tail[8];
  std::memcpy(tail, &len, 4);
  std::memcpy(tail + 4, kMagic, 4);
  impl_->file->Append(std::string_view(tail, 8));
  impl_->file->Close();
}

}  // namespace lakerun::parquet
