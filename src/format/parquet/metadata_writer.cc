// Serializing FileMetaData and PageHeader with the Thrift compact protocol.
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/thrift_compact.h"

namespace lakerun::parquet {
namespace {

using thrift::CompactWriter;
using thrift::Type;

void WriteTimeUnit(CompactWriter& w, TimeUnit unit) {
  w.StructBegin();
  w.FieldBegin(static_cast<int16_t>(static_cast<int>(unit) + 1), Type::kStruct);
  w.StructBegin();
  w.StructEnd();
  w.StructEnd();
}

// Writes the LogicalType union; returns false (writing nothing) when there is none to write.
void WriteLogicalType(CompactWriter& w, const LogicalType& t) {
  using K = LogicalType::Kind;
  int16_t id = 0;
  switch (t.kind) {
    case K::kString: id = 1; break;
    case K::kMap: id = 2; break;
    case K::kList: id = 3; break;
    case K::kEnum: id = 4; break;
    case K::kDecimal: id = 5; break;
    case K::kDate: id = 6; break;
    case K::kTime: id = 7; break;
    case K::kTimestamp: id = 8; break;
    case K::kInteger: id = 10; break;
    case K::kUnknown: id = 11; break;
    case K::kJson: id = 12; break;
    case K::kBson: id = 13; break;
    case K::kUuid: id = 14; break;
    case K::kFloat16: id = 15; break;
    default: return;
  }
  w.FieldBegin(10, Type::kStruct);
  w.StructBegin();
  w.FieldBegin(id, Type::kStruct);
  w.StructBegin();
  if (t.kind == K::kDecimal) {
    w.WriteI32Field(1, t.scale);
    w.WriteI32Field(2, t.precision);
  } else if (t.kind == K::kTime || t.kind == K::kTimestamp) {
    w.WriteBoolField(1, t.adjusted_to_utc);
    w.FieldBegin(2, Type::kStruct);
    WriteTimeUnit(w, t.unit);
  } else if (t.kind == K::kInteger) {
    w.FieldBegin(1, Type::kByte);
    w.WriteByte(t.bit_width);
    w.WriteBoolField(2, t.is_signed);
  }
  w.StructEnd();
  w.StructEnd();
}

void CountNodes(const SchemaNode& n, uint32_t* count) {
  ++*count;
  for (const auto& c : n.children) CountNodes(c, count);
}

void WriteSchemaElement(CompactWriter& w, const SchemaNode& n, bool is_root) {
  w.StructBegin();
  if (!n.is_group) {
    w.WriteI32Field(1, static_cast<int32_t>(n.physical_type));
    if (n.physical_type == PhysicalType::kFixedLenByteArray) w.WriteI32Field(2, n.type_length);
  }
  if (!is_root) w.WriteI32Field(3, static_cast<int32_t>(n.repetition));
  w.WriteBinaryField(4, n.name);
  if (n.is_group) w.WriteI32Field(5, static_cast<int32_t>(n.children.size()));
  if (n.converted_type != ConvertedType::kNone) w.WriteI32Field(6, static_cast<int32_t>(n.converted_type));
  if (n.logical_type.kind == LogicalType::Kind::kDecimal) {
    w.WriteI32Field(7, n.logical_type.scale);
    w.WriteI32Field(8, n.logical_type.precision);
  }
  if (n.field_id) w.WriteI32Field(9, *n.field_id);
  WriteLogicalType(w, n.logical_type);
  w.StructEnd();
  for (const auto& c : n.children) WriteSchemaElement(w, c, false);
}

void WriteStatistics(CompactWriter& w, const Statistics& s, bool legacy_ok) {
  w.StructBegin();
  if (legacy_ok && s.max) w.WriteBinaryField(1, *s.max);
  if (legacy_ok && s.min) w.WriteBinaryField(2, *s.min);
  if (s.null_count) w.WriteI64Field(3, *s.null_count);
  if (s.distinct_count) w.WriteI64Field(4, *s.distinct_count);
  if (s.max) w.WriteBinaryField(5, *s.max);
  if (s.min) w.WriteBinaryField(6, *s.min);
  w.StructEnd();
}

}  // namespace

std::string SerializeFileMetaData(const FileMetaData& md) {
  std::string out;
  CompactWriter w(&out);
  const Schema& schema = md.schema;
  w.StructBegin();
  w.WriteI32Field(1, md.version);
  uint32_t count = 0;
  CountNodes(schema.root(), &count);
  w.FieldBegin(2, Type::kList);
  w.ListBegin(Type::kStruct, count);
  WriteSchemaElement(w, schema.root(), true);
  w.WriteI64Field(3, md.num_rows);
  w.FieldBegin(4, Type::kList);
  w.ListBegin(Type::kStruct, static_cast<uint32_t>(md.row_groups.size()));
  for (const auto& g : md.row_groups) {
    w.StructBegin();
    w.FieldBegin(1, Type::kList);
    w.ListBegin(Type::kStruct, static_cast<uint32_t>(g.columns.size()));
    for (const auto& c : g.columns) {
      const ColumnDescriptor& d = schema.column(c.column);
      w.StructBegin();
      w.WriteI64Field(2, c.start_offset());  // file_offset: deprecated; writers put the chunk start here
      w.FieldBegin(3, Type::kStruct);
      w.StructBegin();
      w.WriteI32Field(1, static_cast<int32_t>(c.physical_type));
      w.FieldBegin(2, Type::kList);
      w.ListBegin(Type::kI32, static_cast<uint32_t>(c.encodings.size()));
      for (Encoding e : c.encodings) w.WriteI32(static_cast<int32_t>(e));
      w.FieldBegin(3, Type::kList);
      w.ListBegin(Type::kBinary, static_cast<uint32_t>(d.path.size()));
      for (const auto& p : d.path) w.WriteBinary(p);
      w.WriteI32Field(4, static_cast<int32_t>(c.codec));
      w.WriteI64Field(5, c.num_values);
      w.WriteI64Field(6, c.total_uncompressed_size);
      w.WriteI64Field(7, c.total_compressed_size);
      w.WriteI64Field(9, c.data_page_offset);
      if (c.dictionary_page_offset) w.WriteI64Field(11, *c.dictionary_page_offset);
      if (c.statistics) {
        // The deprecated fields are written only where their signed order equals the type's order.
        using K = LogicalType::Kind;
        bool legacy_ok = (d.physical_type == PhysicalType::kInt32 || d.physical_type == PhysicalType::kInt64 ||
                          d.physical_type == PhysicalType::kFloat || d.physical_type == PhysicalType::kDouble ||
                          d.physical_type == PhysicalType::kBoolean) &&
                         !(d.logical_type.kind == K::kInteger && !d.logical_type.is_signed) &&
                         d.logical_type.kind != K::kDecimal;
        w.FieldBegin(12, Type::kStruct);
        WriteStatistics(w, *c.statistics, legacy_ok);
      }
      w.StructEnd();
      if (c.offset_index) {
        w.WriteI64Field(4, c.offset_index->offset);
        w.WriteI32Field(5, c.offset_index->length);
      }
      if (c.column_index) {
        w.WriteI64Field(6, c.column_index->offset);
        w.WriteI32Field(7, c.column_index->length);
      }
      w.StructEnd();
    }
    w.WriteI64Field(2, g.total_byte_size);
    w.WriteI64Field(3, g.num_rows);
    if (g.file_offset) w.WriteI64Field(5, *g.file_offset);
    if (g.total_compressed_size) w.WriteI64Field(6, *g.total_compressed_size);
    w.FieldBegin(7, Type::kI16);
    w.WriteI32(g.ordinal);
    w.StructEnd();
  }
  if (!md.key_value_metadata.empty()) {
    w.FieldBegin(5, Type::kList);
    w.ListBegin(Type::kStruct, static_cast<uint32_t>(md.key_value_metadata.size()));
    for (const auto& kv : md.key_value_metadata) {
      w.StructBegin();
      w.WriteBinaryField(1, kv.key);
      if (kv.value) w.WriteBinaryField(2, *kv.value);
      w.StructEnd();
    }
  }
  if (!md.created_by.empty()) w.WriteBinaryField(6, md.created_by);
  // column_orders: TYPE_ORDER for every column, so readers trust min_value/max_value.
  w.FieldBegin(7, Type::kList);
  w.ListBegin(Type::kStruct, static_cast<uint32_t>(schema.num_columns()));
  for (int i = 0; i < schema.num_columns(); ++i) {
    w.StructBegin();
    w.FieldBegin(1, Type::kStruct);
    w.StructBegin();
    w.StructEnd();
    w.StructEnd();
  }
  w.StructEnd();
  return out;
}

void SerializePageHeader(const PageHeader& h, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.WriteI32Field(1, h.type);
  w.WriteI32Field(2, h.uncompressed_page_size);
  w.WriteI32Field(3, h.compressed_page_size);
  if (h.crc) w.WriteI32Field(4, *h.crc);
  switch (static_cast<PageType>(h.type)) {
    case PageType::kDataPage:
      w.FieldBegin(5, Type::kStruct);
      w.StructBegin();
      w.WriteI32Field(1, h.num_values);
      w.WriteI32Field(2, h.encoding);
      w.WriteI32Field(3, h.definition_level_encoding);
      w.WriteI32Field(4, h.repetition_level_encoding);
      w.StructEnd();
      break;
    case PageType::kDictionaryPage:
      w.FieldBegin(7, Type::kStruct);
      w.StructBegin();
      w.WriteI32Field(1, h.num_values);
      w.WriteI32Field(2, h.encoding);
      w.StructEnd();
      break;
    case PageType::kDataPageV2:
      w.FieldBegin(8, Type::kStruct);
      w.StructBegin();
      w.WriteI32Field(1, h.num_values);
      w.WriteI32Field(2, h.num_nulls);
      w.WriteI32Field(3, h.num_rows);
      w.WriteI32Field(4, h.encoding);
      w.WriteI32Field(5, h.definition_levels_byte_length);
      w.WriteI32Field(6, h.repetition_levels_byte_length);
      w.WriteBoolField(7, h.is_compressed);
      w.StructEnd();
      break;
    default: break;
  }
  w.StructEnd();
}

}  // namespace lakerun::parquet
