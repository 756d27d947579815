// File metadata as read from (or written to) a Parquet footer: row groups, column chunks, statistics, key-value
// metadata. Plain structs; no Thrift types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/parquet/page_index.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/types.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::parquet {

/// Column-chunk statistics. min/max are the PLAIN encoding of one value (BYTE_ARRAY: the bytes without a length
/// prefix). The reader fills min/max from min_value/max_value, or from the deprecated min/max fields only where
/// their (signed, bytewise-undefined) sort order is known to be right: BOOLEAN/INT32/INT64/FLOAT/DOUBLE columns
/// without an unsigned, decimal or float16 annotation.
struct Statistics {
  std::optional<std::string> min;
  std::optional<std::string> max;
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  bool min_is_exact = true;  ///< is_min_value_exact (true when absent)
  bool max_is_exact = true;
  bool from_legacy_fields = false;  ///< min/max came from the deprecated min/max fields

  /// min/max decoded as a Value of the column's physical type (see Value); std::nullopt when absent or when the
  /// raw bytes do not have the type's width.
  std::optional<Value> MinValue(const ColumnDescriptor& column) const;
  std::optional<Value> MaxValue(const ColumnDescriptor& column) const;
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;
};

struct ColumnChunkMeta {
  int column = 0;  ///< index into Schema::columns()
  PhysicalType physical_type = PhysicalType::kInt32;
  Codec codec = Codec::kUncompressed;
  std::vector<Encoding> encodings;
  int64_t num_values = 0;  ///< level entries (includes nulls and empty lists)
  int64_t total_uncompressed_size = 0;  ///< page headers included
  int64_t total_compressed_size = 0;    ///< page headers included; the chunk's byte length in the file
  int64_t data_page_offset = 0;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<int64_t> index_page_offset;
  std::optional<Statistics> statistics;
  std::string file_path;  ///< normally empty (the chunk lives in this file)
  /// The chunk's page index (page_index.h), when the writer stored one.
  std::optional<IndexLocation> column_index;
  std::optional<IndexLocation> offset_index;
  /// Where the chunk starts: min(dictionary_page_offset, data_page_offset), ignoring an invalid dictionary offset
  /// (some writers stored 0).
  int64_t start_offset() const;
};

struct RowGroupMeta {
  int ordinal = 0;
  int64_t num_rows = 0;
  int64_t total_byte_size = 0;  ///< uncompressed
  std::optional<int64_t> total_compressed_size;
  std::optional<int64_t> file_offset;
  std::vector<ColumnChunkMeta> columns;  ///< one per schema column, in column order
};

struct FileMetaData {
  int32_t version = 1;
  Schema schema;
  int64_t num_rows = 0;
  std::vector<RowGroupMeta> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::string created_by;
  uint32_t footer_length = 0;  ///< bytes of the Thrift FileMetaData (reader only)

  /// The value of the first key-value entry with this key.
  std::optional<std::string> FindKeyValue(const std::string& key) const;
};

/// The key-value metadata key that records the element shape of a fixed-size list column:
/// "lakerun.shape.<dotted path of the list node>" = "[28,28]" (JSON array of positive integers; the product is
/// the list length). Writers set it through WriterOptions::tensor_shapes; readers expose it through TensorShape().
std::string ShapeMetadataKey(const std::string& column_path);
/// Parses the shape recorded for the top-level field or list node `column_path`; std::nullopt when absent.
/// Throws CorruptDataError when the value is not a JSON array of positive integers.
std::optional<std::vector<int64_t>> TensorShape(const FileMetaData& metadata, const std::string& column_path);

}  // namespace lakerun::parquet
