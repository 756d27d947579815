// Conversion between FileMetaData / PageHeader and their Thrift-compact encodings (parquet.thrift).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lakerun/format/parquet/metadata.h"

namespace lakerun::parquet {

/// Parses a Thrift FileMetaData. `context` names the file in errors; `base_offset` is the footer's file offset.
/// Throws CorruptDataError for malformed Thrift or an inconsistent schema / column-chunk list.
FileMetaData ParseFileMetaData(std::string_view bytes, const std::string& context, uint64_t base_offset,
                               int max_depth);
/// Serializes `metadata` (schema, row groups, key-value metadata, created_by; TYPE_ORDER column orders).
std::string SerializeFileMetaData(const FileMetaData& metadata);

struct PageHeader {
  int32_t type = 0;  ///< a PageType, or a newer number to skip
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;
  // DATA_PAGE and DATA_PAGE_V2
  int32_t num_values = 0;
  int32_t encoding = 0;
  // DATA_PAGE only
  int32_t definition_level_encoding = 3;
  int32_t repetition_level_encoding = 3;
  // DATA_PAGE_V2 only
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  // DICTIONARY_PAGE
  bool is_sorted = false;
  bool has_data_header = false;  ///< the sub-header matching `type` was present
};

/// Parses one PageHeader at the start of `bytes`; returns the header and sets `*header_size` to its length.
PageHeader ParsePageHeader(std::string_view bytes, const std::string& context, uint64_t base_offset, int max_depth,
                           size_t* header_size);
/// Appends the Thrift encoding of `header` to `out`.
void SerializePageHeader(const PageHeader& header, std::string* out);

/// Decodes a PLAIN-encoded single value (statistics) into a Value; std::nullopt if the width is wrong.
std::optional<Value> DecodeStatValue(const ColumnDescriptor& column, std::string_view raw);

}  // namespace lakerun::parquet
