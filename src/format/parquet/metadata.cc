#include "lakerun/format/parquet/metadata.h"

#include <cctype>

#include "format/parquet/leaf_value.h"
#include "format/parquet/metadata_thrift.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {

std::optional<Value> DecodeStatValue(const ColumnDescriptor& column, std::string_view raw) {
  int width = FixedWidth(column.physical_type, column.type_length);
  if (column.physical_type == PhysicalType::kBoolean) {
    if (raw.size() != 1) return std::nullopt;
  } else if (width > 0 && raw.size() != static_cast<size_t>(width)) {
    return std::nullopt;
  }
  return LeafToValue(column.physical_type, column.logical_type, column.converted_type, raw);
}

std::optional<Value> Statistics::MinValue(const ColumnDescriptor& column) const {
  if (!min) return std::nullopt;
  return DecodeStatValue(column, *min);
}

std::optional<Value> Statistics::MaxValue(const ColumnDescriptor& column) const {
  if (!max) return std::nullopt;
  return DecodeStatValue(column, *max);
}

int64_t ColumnChunkMeta::start_offset() const {
  if (dictionary_page_offset && *dictionary_page_offset > 0 && *dictionary_page_offset < data_page_offset) {
    return *dictionary_page_offset;
  }
  return data_page_offset;
}

std::optional<std::string> FileMetaData::FindKeyValue(const std::string& key) const {
  for (const auto& kv : key_value_metadata) {
    if (kv.key == key) return kv.value.value_or("");
  }
  return std::nullopt;
}

std::string ShapeMetadataKey(const std::string& column_path) { return "lakerun.shape." + column_path; }

std::optional<std::vector<int64_t>> TensorShape(const FileMetaData& metadata, const std::string& column_path) {
  const std::string key = ShapeMetadataKey(column_path);
  auto text = metadata.FindKeyValue(key);
  if (!text) return std::nullopt;
  std::vector<int64_t> shape;
  const std::string& s = *text;
  size_t i = 0;
  auto fail = [&]() {
    LAKERUN_THROW(CorruptDataError, "key-value metadata '", key, "' = '", s,
                  "' is not a JSON array of positive integers");
  };
  auto skip_ws = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  skip_ws();
  if (i >= s.size() || s[i] != '[') fail();
  ++i;
  skip_ws();
  if (i < s.size() && s[i] == ']') fail();
  while (true) {
    skip_ws();
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) fail();
    int64_t v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (v > (int64_t{1} << 40)) fail();
      v = v * 10 + (s[i++] - '0');
    }
    if (v <= 0) fail();
    shape.push_back(v);
    skip_ws();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == ']') {
      ++i;
      break;
    }
    fail();
  }
  skip_ws();
  if (i != s.size()) fail();
  return shape;
}

}  // namespace lakerun::parquet
