// Writing Parquet files.
//
//   WriterOptions opts;
//   opts.codec = Codec::kZstd;
//   ParquetWriter writer(lakerun::LocalFileSystem(), "out.parquet", schema, opts);
//   writer.WriteRowGroup({ColumnData::Int64s(ids), ColumnData::Floats(pixels).set_rep_levels(reps, 1)...});
//   writer.WriteRows(rows);   // or assembled Values, shredded into levels (buffered into row groups)
//   writer.Close();           // flushes buffered rows, writes the footer
//
// The file appears at `path` as it is written; a writer destroyed without Close() leaves an incomplete file (no
// footer), which readers reject. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/column_data.h"
#include "lakerun/format/parquet/metadata.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

struct WriterOptions {
  Codec codec = Codec::kSnappy;
  /// Codec level; 0 = the codec's default. Used by gzip (1-9), zstd (1-22), brotli (0-11).
  int compression_level = 0;
  /// 1: DATA_PAGE; 2: DATA_PAGE_V2 (levels uncompressed, lengths in the header).
  int page_version = 1;
  /// WriteRows flushes a row group when either limit is reached.
  int64_t row_group_rows = 1 << 20;
  int64_t row_group_bytes = 128ll << 20;
  /// Target uncompressed size of a data page (values + levels). Pages end on row boundaries.
  int64_t page_bytes = 1 << 20;
  /// Dictionary-encode columns (except BOOLEAN) until the dictionary grows past dictionary_page_bytes, or its first
  /// 4096 values prove mostly distinct; the rest of the chunk then falls back to the column's encoding. The pages
  /// already encoded keep their dictionary only when it made them smaller than PLAIN (as parquet-mr decides):
  /// columns of distinct values, such as images, are written PLAIN throughout.
  bool dictionary = true;
  int64_t dictionary_page_bytes = 1 << 20;
  /// Value encoding per dotted column path (PLAIN, RLE for BOOLEAN, DELTA_BINARY_PACKED for INT32/INT64,
  /// DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY for BYTE_ARRAY (DELTA_BYTE_ARRAY also FLBA), BYTE_STREAM_SPLIT for
  /// fixed-width types). A column named here is not dictionary-encoded. Others use PLAIN (after the dictionary).
  std::map<std::string, Encoding> column_encoding;
  /// Codec per dotted column path, overriding `codec`.
  std::map<std::string, Codec> column_codec;
  /// Column-chunk statistics (min/max/null_count).
  bool statistics = true;
  /// The page index (page_index.h) of every column chunk, stored after the row groups as parquet-mr and Arrow do:
  /// an OffsetIndex always, a ColumnIndex where `statistics` is on and every page has min/max. Lets readers skip
  /// pages by row range and by filter (PagesMayMatch).
  bool page_index = true;
  /// Store the CRC-32 of every page (dictionary and data pages, as stored: compressed, a v2 page's levels included)
  /// in its header's `crc` field, as parquet.thrift defines it; readers check it (ReaderOptions::verify_crc). Costs
  /// one pass over the stored bytes at several GB/s.
  bool page_checksums = true;
  std::vector<KeyValue> key_value_metadata;
  /// Element shapes of fixed-size list columns: top-level field (or list node path) -> shape, stored as the
  /// key-value entry ShapeMetadataKey(path) = "[d0,d1,...]".
  std::map<std::string, std::vector<int64_t>> tensor_shapes;
  std::string created_by = "lakerun version 0.1.0";
};

class ParquetWriter {
 public:
  /// Creates (truncates) `path` and writes the leading magic. Throws InvalidArgument for unusable options.
  ParquetWriter(FileSystem& fs, const std::string& path, Schema schema, WriterOptions options = {});
  ~ParquetWriter();
  ParquetWriter(const ParquetWriter&) = delete;
  ParquetWriter& operator=(const ParquetWriter&) = delete;

  const Schema& schema() const { return schema_; }

  /// Writes one row group: one ColumnData per schema column, each with the levels its column needs (def levels
  /// when max_def_level > 0, rep levels when max_rep_level > 0) describing the same number of rows. Throws
  /// InvalidArgument naming the column when the input is inconsistent. Buffered rows are flushed first.
  void WriteRowGroup(const std::vector<ColumnData>& columns);
  /// Shreds struct Values (one per row, fields by schema name; missing fields are null) and buffers them; full
  /// row groups are written as they fill up.
  void WriteRows(const std::vector<Value>& rows);
  /// Flushes buffered rows, writes the footer and closes the file. Idempotent.
  void Close();

  int64_t rows_written() const { return rows_written_; }

 private:
  class Impl;
  FileSystem& fs_;
  std::string path_;
  Schema schema_;
  WriterOptions options_;
  std::unique_ptr<Impl> impl_;
  int64_t rows_written_ = 0;
  bool closed_ = false;
};

/// Dremel shredding: turns rows (struct Values of the schema's top-level fields) into one ColumnData per leaf.
/// Throws InvalidArgument when a value does not fit the schema (naming the row and field).
std::vector<ColumnData> ShredRecords(const Schema& schema, const std::vector<Value>& rows);

}  // namespace lakerun::parquet
