// Parsing FileMetaData (parquet.thrift) from the Thrift compact protocol. Unknown fields and union members are
// skipped, so files from newer writers open.
#include <functional>

#include "format/parquet/metadata_thrift.h"
#include "format/parquet/thrift_compact.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

using thrift::CompactReader;
using thrift::Type;

struct RawElement {
  std::optional<int32_t> type;
  int32_t type_length = 0;
  std::optional<int32_t> repetition;
  std::string name;
  std::optional<int32_t> num_children;
  std::optional<int32_t> converted;
  int32_t scale = 0;
  int32_t precision = 0;
  std::optional<int32_t> field_id;
  std::optional<LogicalType> logical;
};

TimeUnit ReadTimeUnit(CompactReader& r) {
  TimeUnit unit = TimeUnit::kMicros;
  bool seen = false;
  r.ReadStruct([&](int16_t id, Type t) {
    if (t == Type::kStruct && id >= 1 && id <= 3) {
      unit = static_cast<TimeUnit>(id - 1);
      seen = true;
    }
    r.Skip(t);
  });
  if (!seen) r.Fail("TimeUnit without a known unit");
  return unit;
}

LogicalType ReadLogicalType(CompactReader& r) {
  LogicalType lt;
  r.ReadStruct([&](int16_t id, Type t) {
    if (t != Type::kStruct) {
      r.Skip(t);
      return;
    }
    using K = LogicalType::Kind;
    switch (id) {
      case 1: lt.kind = K::kString; break;
      case 2: lt.kind = K::kMap; break;
      case 3: lt.kind = K::kList; break;
      case 4: lt.kind = K::kEnum; break;
      case 5:
        lt.kind = K::kDecimal;
        r.ReadStruct([&](int16_t fid, Type ft) {
          if (fid == 1) lt.scale = r.ReadI32(ft);
          else if (fid == 2) lt.precision = r.ReadI32(ft);
          else r.Skip(ft);
        });
        return;
      case 6: lt.kind = K::kDate; break;
      case 7:
      case 8:
        lt.kind = id == 7 ? K::kTime : K::kTimestamp;
        r.ReadStruct([&](int16_t fid, Type ft) {
          if (fid == 1) lt.adjusted_to_utc = r.ReadBool(ft);
          else if (fid == 2 && ft == Type::kStruct) lt.unit = ReadTimeUnit(r);
          else r.Skip(ft);
        });
        return;
      case 10:
        lt.kind = K::kInteger;
        r.ReadStruct([&](int16_t fid, Type ft) {
          if (fid == 1) lt.bit_width = static_cast<int8_t>(r.ReadI32(ft));
          else if (fid == 2) lt.is_signed = r.ReadBool(ft);
          else r.Skip(ft);
        });
        if (lt.bit_width != 8 && lt.bit_width != 16 && lt.bit_width != 32 && lt.bit_width != 64) {
          r.Fail(StrCat("INTEGER logical type with bit width ", static_cast<int>(lt.bit_width)));
        }
        return;
      case 11: lt.kind = K::kUnknown; break;
      case 12: lt.kind = K::kJson; break;
      case 13: lt.kind = K::kBson; break;
      case 14: lt.kind = K::kUuid; break;
      case 15: lt.kind = K::kFloat16; break;
      case 16: lt.kind = K::kVariant; break;
      case 17: lt.kind = K::kGeometry; break;
      case 18: lt.kind = K::kGeography; break;
      default: lt.kind = K::kOther; break;
    }
    r.Skip(t);
  });
  return lt;
}

LogicalType FromConverted(ConvertedType c, int32_t precision, int32_t scale) {
  using C = ConvertedType;
  switch (c) {
    case C::kUtf8: return LogicalType::String();
    case C::kMap: return LogicalType::Map();
    case C::kList: return LogicalType::List();
    case C::kEnum: return LogicalType::Enum();
    case C::kDecimal: return LogicalType::Decimal(precision, scale);
    case C::kDate: return LogicalType::Date();
    case C::kTimeMillis: return LogicalType::Time(TimeUnit::kMillis, true);
    case C::kTimeMicros: return LogicalType::Time(TimeUnit::kMicros, true);
    case C::kTimestampMillis: return LogicalType::Timestamp(TimeUnit::kMillis, true);
    case C::kTimestampMicros: return LogicalType::Timestamp(TimeUnit::kMicros, true);
    case C::kUint8: return LogicalType::Int(8, false);
    case C::kUint16: return LogicalType::Int(16, false);
    case C::kUint32: return LogicalType::Int(32, false);
    case C::kUint64: return LogicalType::Int(64, false);
    case C::kInt8: return LogicalType::Int(8, true);
    case C::kInt16: return LogicalType::Int(16, true);
    case C::kInt32: return LogicalType::Int(32, true);
    case C::kInt64: return LogicalType::Int(64, true);
    case C::kJson: return LogicalType::Json();
    case C::kBson: return LogicalType::Bson();
    case C::kInterval: {
      LogicalType t;
      t.kind = LogicalType::Kind::kInterval;
      return t;
    }
    default: return LogicalType::None();
  }
}

RawElement ReadSchemaElement(CompactReader& r) {
  RawElement e;
  bool has_name = false;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: e.type = r.ReadI32(t); break;
      case 2: e.type_length = r.ReadI32(t); break;
      case 3: e.repetition = r.ReadI32(t); break;
      case 4: e.name = r.ReadBinary(t); has_name = true; break;
      case 5: e.num_children = r.ReadI32(t); break;
      case 6: e.converted = r.ReadI32(t); break;
      case 7: e.scale = r.ReadI32(t); break;
      case 8: e.precision = r.ReadI32(t); break;
      case 9: e.field_id = r.ReadI32(t); break;
      case 10:
        if (t == Type::kStruct) {
          e.logical = ReadLogicalType(r);
        } else {
          r.Skip(t);
        }
        break;
      default: r.Skip(t);
    }
  });
  if (!has_name) r.Fail("SchemaElement without a name");
  return e;
}

// Builds the node for elements[*index] and its descendants (depth-first order, as stored).
SchemaNode BuildNode(const std::vector<RawElement>& elements, size_t* index, int depth, CompactReader& r) {
  if (*index >= elements.size()) r.Fail("schema list ends inside a group (num_children too large)");
  if (depth > 100) r.Fail("schema nesting deeper than 100");
  const RawElement& e = elements[(*index)++];
  SchemaNode n;
  n.name = e.name;
  if (e.repetition) {
    if (*e.repetition < 0 || *e.repetition > 2) r.Fail(StrCat("schema element '", e.name, "' has repetition ", *e.repetition));
    n.repetition = static_cast<Repetition>(*e.repetition);
  } else {
    n.repetition = Repetition::kRequired;  // the root, usually
  }
  n.field_id = e.field_id;
  if (e.converted) {
    if (*e.converted < 0 || *e.converted > 21) {
      r.Fail(StrCat("schema element '", e.name, "' has unknown converted type ", *e.converted));
    }
    n.converted_type = static_cast<ConvertedType>(*e.converted);
  }
  n.logical_type = e.logical ? *e.logical : FromConverted(n.converted_type, e.precision, e.scale);
  if (n.logical_type.kind == LogicalType::Kind::kDecimal && e.logical && n.logical_type.precision == 0) {
    n.logical_type.precision = e.precision;
    n.logical_type.scale = e.scale;
  }
  bool group = (e.num_children && *e.num_children > 0) || !e.type;
  if (group) {
    n.is_group = true;
    int32_t count = e.num_children.value_or(0);
    if (count < 0 || static_cast<size_t>(count) > elements.size() - *index) {
      r.Fail(StrCat("schema element '", e.name, "' claims ", count, " children but only ", elements.size() - *index,
                    " elements follow"));
    }
    n.children.reserve(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i) n.children.push_back(BuildNode(elements, index, depth + 1, r));
  } else {
    if (*e.type < 0 || *e.type > 7) r.Fail(StrCat("column '", e.name, "' has unknown physical type ", *e.type));
    n.physical_type = static_cast<PhysicalType>(*e.type);
    n.type_length = e.type_length;
    if (n.physical_type == PhysicalType::kFixedLenByteArray && (e.type_length <= 0 || e.type_length > (1 << 24))) {
      r.Fail(StrCat("FIXED_LEN_BYTE_ARRAY column '", e.name, "' has type_length ", e.type_length));
    }
  }
  return n;
}

Statistics ReadStatistics(CompactReader& r) {
  Statistics s;
  std::optional<std::string> legacy_min, legacy_max;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: legacy_max = r.ReadBinary(t); break;
      case 2: legacy_min = r.ReadBinary(t); break;
      case 3: s.null_count = r.ReadI64(t); break;
      case 4: s.distinct_count = r.ReadI64(t); break;
      case 5: s.max = r.ReadBinary(t); break;
      case 6: s.min = r.ReadBinary(t); break;
      case 7: s.max_is_exact = r.ReadBool(t); break;
      case 8: s.min_is_exact = r.ReadBool(t); break;
      default: r.Skip(t);
    }
  });
  if (!s.min && !s.max && (legacy_min || legacy_max)) {
    s.min = legacy_min;
    s.max = legacy_max;
    s.from_legacy_fields = true;
  }
  return s;
}

// The deprecated min/max fields were written with a signed comparison; they are only trustworthy where signed
// order is the type's order.
bool LegacyStatsUsable(const ColumnDescriptor& c) {
  switch (c.physical_type) {
    case PhysicalType::kBoolean:
    case PhysicalType::kFloat:
    case PhysicalType::kDouble: return true;
    case PhysicalType::kInt32:
    case PhysicalType::kInt64:
      return !(c.logical_type.kind == LogicalType::Kind::kInteger && !c.logical_type.is_signed) &&
             c.logical_type.kind != LogicalType::Kind::kDecimal;
    default: return false;
  }
}

ColumnChunkMeta ReadColumnChunk(CompactReader& r) {
  ColumnChunkMeta c;
  bool has_meta = false;
  IndexLocation offset_index, column_index;
  int has_offset_index = 0, has_column_index = 0;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: c.file_path = r.ReadBinary(t); break;
      case 3:
        if (t != Type::kStruct) r.Fail("ColumnChunk.meta_data is not a struct");
        has_meta = true;
        r.ReadStruct([&](int16_t fid, Type ft) {
          switch (fid) {
            case 1: c.physical_type = static_cast<PhysicalType>(r.ReadI32(ft)); break;
            case 2: r.ReadI32List(ft, [&](int32_t e) { c.encodings.push_back(static_cast<Encoding>(e)); }); break;
            case 3: r.Skip(ft); break;  // path_in_schema: chunks are matched to columns by position
            case 4: c.codec = static_cast<Codec>(r.ReadI32(ft)); break;
            case 5: c.num_values = r.ReadI64(ft); break;
            case 6: c.total_uncompressed_size = r.ReadI64(ft); break;
            case 7: c.total_compressed_size = r.ReadI64(ft); break;
            case 9: c.data_page_offset = r.ReadI64(ft); break;
            case 10: c.index_page_offset = r.ReadI64(ft); break;
            case 11: c.dictionary_page_offset = r.ReadI64(ft); break;
            case 12:
              if (ft == Type::kStruct) c.statistics = ReadStatistics(r);
              else r.Skip(ft);
              break;
            default: r.Skip(ft);
          }
        });
        break;
      case 4: offset_index.offset = r.ReadI64(t); has_offset_index |= 1; break;
      case 5: offset_index.length = r.ReadI32(t); has_offset_index |= 2; break;
      case 6: column_index.offset = r.ReadI64(t); has_column_index |= 1; break;
      case 7: column_index.length = r.ReadI32(t); has_column_index |= 2; break;
      default: r.Skip(t);
    }
  });
  // An index needs both its offset and its length; ParquetFile::Read*Index checks them against the file.
  if (has_offset_index == 3) c.offset_index = offset_index;
  if (has_column_index == 3) c.column_index = column_index;
  if (!has_meta) r.Fail("ColumnChunk without meta_data (encrypted or external column chunks are not supported)");
  return c;
}

RowGroupMeta ReadRowGroup(CompactReader& r) {
  RowGroupMeta g;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: r.ReadStructList(t, [&](uint32_t) { g.columns.push_back(ReadColumnChunk(r)); }); break;
      case 2: g.total_byte_size = r.ReadI64(t); break;
      case 3: g.num_rows = r.ReadI64(t); break;
      case 5: g.file_offset = r.ReadI64(t); break;
      case 6: g.total_compressed_size = r.ReadI64(t); break;
      case 7: g.ordinal = r.ReadI16(t); break;
      default: r.Skip(t);
    }
  });
  return g;
}

}  // namespace

FileMetaData ParseFileMetaData(std::string_view bytes, const std::string& context, uint64_t base_offset,
                               int max_depth) {
  CompactReader r(bytes, context + ": footer", base_offset, max_depth);
  FileMetaData md;
  std::vector<RawElement> elements;
  bool has_schema = false;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: md.version = r.ReadI32(t); break;
      case 2:
        has_schema = true;
        r.ReadStructList(t, [&](uint32_t) { elements.push_back(ReadSchemaElement(r)); });
        break;
      case 3: md.num_rows = r.ReadI64(t); break;
      case 4:
        r.ReadStructList(t, [&](uint32_t i) {
          md.row_groups.push_back(ReadRowGroup(r));
          md.row_groups.back().ordinal = static_cast<int>(i);
        });
        break;
      case 5:
        r.ReadStructList(t, [&](uint32_t) {
          KeyValue kv;
          r.ReadStruct([&](int16_t fid, Type ft) {
            if (fid == 1) kv.key = r.ReadBinary(ft);
            else if (fid == 2) kv.value = r.ReadBinary(ft);
            else r.Skip(ft);
          });
          md.key_value_metadata.push_back(std::move(kv));
        });
        break;
      case 6: md.created_by = r.ReadBinary(t); break;
      case 8:
      case 9: r.Fail("encrypted Parquet files are not supported");
      default: r.Skip(t);
    }
  });
  if (!has_schema || elements.empty()) r.Fail("FileMetaData without a schema");
  size_t index = 0;
  SchemaNode root = BuildNode(elements, &index, 0, r);
  if (index != elements.size()) {
    r.Fail(StrCat("schema has ", elements.size() - index, " elements after the root's last child"));
  }
  if (!root.is_group) r.Fail("schema root is not a group");
  try {
    md.schema = Schema::FromRoot(std::move(root));
  } catch (const InvalidArgument& e) {
    LAKERUN_THROW(CorruptDataError, context, ": invalid schema: ", e.what());
  }
  if (md.num_rows < 0) r.Fail(StrCat("negative num_rows ", md.num_rows));
  const Schema& schema = md.schema;
  for (auto& g : md.row_groups) {
    if (g.columns.size() != static_cast<size_t>(schema.num_columns())) {
      LAKERUN_THROW(CorruptDataError, context, ": row group ", g.ordinal, " has ", g.columns.size(),
                    " column chunks, the schema has ", schema.num_columns(), " columns");
    }
    if (g.num_rows < 0) {
      LAKERUN_THROW(CorruptDataError, context, ": row group ", g.ordinal, " has negative num_rows ", g.num_rows);
    }
    for (size_t i = 0; i < g.columns.size(); ++i) {
      auto& c = g.columns[i];
      c.column = static_cast<int>(i);
      const ColumnDescriptor& d = schema.column(static_cast<int>(i));
      if (c.physical_type != d.physical_type) {
        LAKERUN_THROW(CorruptDataError, context, ": row group ", g.ordinal, " column '", d.dotted_path,
                      "': chunk type ", ToString(c.physical_type), " differs from schema type ",
                      ToString(d.physical_type));
      }
      if (c.statistics && c.statistics->from_legacy_fields && !LegacyStatsUsable(d)) {
        c.statistics->min.reset();
        c.statistics->max.reset();
      }
    }
  }
  return md;
}

PageHeader ParsePageHeader(std::string_view bytes, const std::string& context, uint64_t base_offset, int max_depth,
                           size_t* header_size) {
  CompactReader r(bytes, context, base_offset, max_depth);
  PageHeader h;
  bool has_type = false, has_sizes = false;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: h.type = r.ReadI32(t); has_type = true; break;
      case 2: h.uncompressed_page_size = r.ReadI32(t); break;
      case 3: h.compressed_page_size = r.ReadI32(t); has_sizes = true; break;
      case 4: h.crc = r.ReadI32(t); break;
      case 5:
        if (t != Type::kStruct) { r.Skip(t); break; }
        if (h.type == static_cast<int32_t>(PageType::kDataPage)) h.has_data_header = true;
        r.ReadStruct([&](int16_t fid, Type ft) {
          switch (fid) {
            case 1: h.num_values = r.ReadI32(ft); break;
            case 2: h.encoding = r.ReadI32(ft); break;
            case 3: h.definition_level_encoding = r.ReadI32(ft); break;
            case 4: h.repetition_level_encoding = r.ReadI32(ft); break;
            default: r.Skip(ft);
          }
        });
        break;
      case 7:
        if (t != Type::kStruct) { r.Skip(t); break; }
        if (h.type == static_cast<int32_t>(PageType::kDictionaryPage)) h.has_data_header = true;
        r.ReadStruct([&](int16_t fid, Type ft) {
          switch (fid) {
            case 1: h.num_values = r.ReadI32(ft); break;
            case 2: h.encoding = r.ReadI32(ft); break;
            case 3: h.is_sorted = r.ReadBool(ft); break;
            default: r.Skip(ft);
          }
        });
        break;
      case 8:
        if (t != Type::kStruct) { r.Skip(t); break; }
        if (h.type == static_cast<int32_t>(PageType::kDataPageV2)) h.has_data_header = true;
        r.ReadStruct([&](int16_t fid, Type ft) {
          switch (fid) {
            case 1: h.num_values = r.ReadI32(ft); break;
            case 2: h.num_nulls = r.ReadI32(ft); break;
            case 3: h.num_rows = r.ReadI32(ft); break;
            case 4: h.encoding = r.ReadI32(ft); break;
            case 5: h.definition_levels_byte_length = r.ReadI32(ft); break;
            case 6: h.repetition_levels_byte_length = r.ReadI32(ft); break;
            case 7: h.is_compressed = r.ReadBool(ft); break;
            default: r.Skip(ft);
          }
        });
        break;
      default: r.Skip(t);
    }
  });
  if (!has_type || !has_sizes) r.Fail("page header without type or compressed_page_size");
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) {
    r.Fail(StrCat("negative page size (compressed ", h.compressed_page_size, ", uncompressed ",
                  h.uncompressed_page_size, ")"));
  }
  *header_size = r.position();
  return h;
}

}  // namespace lakerun::parquet
