#include "lakerun/data/row_source.h"

#include <algorithm>

#include "lakerun/base/error.h"

namespace lakerun::data {

size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kBool:
    case ElementType::kUInt8:
    case ElementType::kInt8:
      return 1;
    case ElementType::kInt16:
      return 2;
    case ElementType::kInt32:
    case ElementType::kFloat32:
      return 4;
    case ElementType::kInt64:
    case ElementType::kFloat64:
      return 8;
    case ElementType::kBinary:
      return 0;
  }
  return 0;
}

const char* ToString(ElementType type) {
  switch (type) {
    case ElementType::kBool: return "bool";
    case ElementType::kUInt8: return "uint8";
    case ElementType::kInt8: return "int8";
    case ElementType::kInt16: return "int16";
    case ElementType::kInt32: return "int32";
    case ElementType::kInt64: return "int64";
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat64: return "float64";
    case ElementType::kBinary: return "binary";
  }
  return "?";
}

int64_t ColumnInfo::elements_per_row() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t ColumnInfo::values_per_item() const {
  int64_t n = 1;
  for (size_t i = 1; list_levels > 1 && i < shape.size(); ++i) n *= shape[i];
  return n;
}

MemoryRowSource::MemoryRowSource(std::vector<Column> columns, uint64_t unit_rows, std::string name)
    : unit_rows_(unit_rows), name_(std::move(name)) {
  LAKERUN_CHECK(unit_rows > 0, name_, ": unit_rows must be positive");
  bool first = true;
  for (const Column& c : columns) {
    uint64_t rows;
    if (c.info.type == ElementType::kBinary && c.info.is_list) {
      LAKERUN_CHECK(!c.offsets.empty() && static_cast<int64_t>(c.value_offsets.size()) == c.offsets.back() + 1 &&
                        c.value_offsets.back() == static_cast<int64_t>(c.bytes.size()),
                    name_, ": list column '", c.info.name, "' of binary values needs rows + 1 offsets (elements) and "
                    "elements + 1 value_offsets ending at its byte size");
      rows = c.offsets.size() - 1;
    } else if (c.info.type == ElementType::kBinary) {
      LAKERUN_CHECK(!c.offsets.empty() && c.offsets.back() == static_cast<int64_t>(c.bytes.size()), name_,
                    ": binary column '", c.info.name, "' needs rows + 1 offsets ending at its byte size");
      rows = c.offsets.size() - 1;
    } else if (!c.offsets.empty()) {
      LAKERUN_CHECK(c.info.is_list && c.offsets.back() * static_cast<int64_t>(ElementSize(c.info.type)) ==
                                          static_cast<int64_t>(c.bytes.size()),
                    name_, ": column '", c.info.name, "' has offsets, so it must be a list (is_list) whose rows + 1 "
                    "offsets end at its element count");
      rows = c.offsets.size() - 1;
    } else {
      const size_t row_bytes = c.info.row_bytes();
      LAKERUN_CHECK(row_bytes > 0 && c.bytes.size() % row_bytes == 0, name_, ": column '", c.info.name, "' has ",
                    c.bytes.size(), " bytes, not a multiple of its row size ", row_bytes);
      rows = c.bytes.size() / row_bytes;
    }
    LAKERUN_CHECK(first || rows == rows_, name_, ": column '", c.info.name, "' has ", rows, " rows, expected ",
                  rows_);
    LAKERUN_CHECK(c.validity.empty() || c.validity.size() == rows, name_, ": column '", c.info.name, "' has ",
                  c.validity.size(), " validity entries for ", rows, " rows");
    rows_ = rows;
    first = false;
    infos_.push_back(c.info);
  }
  data_ = std::make_shared<const std::vector<Column>>(std::move(columns));
}

uint64_t MemoryRowSource::unit_start(size_t unit) const {
  return std::min<uint64_t>(rows_, unit * unit_rows_);
}

std::string MemoryRowSource::DescribeUnit(size_t unit) const {
  return StrCat(name_, " unit ", unit);
}

uint64_t MemoryRowSource::UnitBytesHint(size_t unit) const {
  uint64_t bytes = 0;
  for (const ColumnInfo& info : infos_) bytes += info.row_bytes();
  return bytes * (unit_start(unit + 1) - unit_start(unit));
}

std::shared_ptr<const UnitData> MemoryRowSource::ReadUnit(size_t unit) const {
  LAKERUN_CHECK(unit < num_units(), name_, ": unit ", unit, " out of range (", num_units(), " units)");
  LAKERUN_CHECK_AS(CorruptDataError, static_cast<int64_t>(unit) != failing_unit_, DescribeUnit(unit),
                   ": corrupt data (injected)");
  const uint64_t begin = unit_start(unit);
  const uint64_t end = unit_start(unit + 1);
  auto out = std::make_shared<UnitData>();
  out->rows = end - begin;
  for (const Column& c : *data_) {
    ColumnChunk chunk;
    chunk.owner = data_;
    if (!c.validity.empty()) chunk.validity = c.validity.data() + begin;
    if (!c.offsets.empty()) {
      // Views into the shared buffer: offsets stay absolute, so point data at the start of the column.
      const size_t element = c.info.type == ElementType::kBinary ? 1 : ElementSize(c.info.type);
      chunk.data = c.bytes.data();
      chunk.offsets = c.offsets.data() + begin;
      chunk.size_bytes = static_cast<size_t>(c.offsets[end] - c.offsets[begin]) * element;
      if (!c.value_offsets.empty()) {
        chunk.value_offsets = c.value_offsets.data();
        chunk.size_bytes = static_cast<size_t>(c.value_offsets[c.offsets[end]] - c.value_offsets[c.offsets[begin]]);
      }
    } else {
      const size_t row_bytes = c.info.row_bytes();
      chunk.data = c.bytes.data() + begin * row_bytes;
      chunk.size_bytes = (end - begin) * row_bytes;
    }
    out->bytes += chunk.size_bytes;
    out->columns.push_back(chunk);
  }
  return out;
}

}  // namespace lakerun::data
