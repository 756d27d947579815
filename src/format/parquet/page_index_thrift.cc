// ColumnIndex and OffsetIndex in the Thrift compact protocol. Unknown fields (level histograms, unencoded byte
// counts) are skipped when read and not written.
#include "format/parquet/page_index_thrift.h"

#include "format/parquet/thrift_compact.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::Type;

PageLocation ReadPageLocation(CompactReader& r) {
  PageLocation p;
  int seen = 0;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: p.offset = r.ReadI64(t); seen |= 1; break;
      case 2: p.compressed_page_size = r.ReadI32(t); seen |= 2; break;
      case 3: p.first_row_index = r.ReadI64(t); seen |= 4; break;
      default: r.Skip(t);
    }
  });
  if (seen != 7) r.Fail("PageLocation without offset, compressed_page_size or first_row_index");
  return p;
}

}  // namespace

ColumnIndex ParseColumnIndex(std::string_view bytes, const std::string& context, uint64_t base_offset,
                             int max_depth) {
  CompactReader r(bytes, context, base_offset, max_depth);
  ColumnIndex index;
  int seen = 0;
  r.ReadStruct([&](int16_t id, Type t) {
    switch (id) {
      case 1: r.ReadBoolList(t, [&](bool b) { index.null_pages.push_back(b); }); seen |= 1; break;
      case 2: r.ReadBinaryList(t, [&](std::string v) { index.min_values.push_back(std::move(v)); }); seen |= 2; break;
      case 3: r.ReadBinaryList(t, [&](std::string v) { index.max_values.push_back(std::move(v)); }); seen |= 4; break;
      case 4: {
        const int32_t order = r.ReadI32(t);
        if (order < 0 || order > 2) r.Fail(StrCat("unknown boundary_order ", order));
        index.boundary_order = static_cast<BoundaryOrder>(order);
        seen |= 8;
        break;
      }
      case 5:
        index.null_counts.emplace();
        r.ReadI64List(t, [&](int64_t n) {
          if (n < 0) r.Fail(StrCat("negative null count ", n));
          index.null_counts->push_back(n);
        });
        break;
      default: r.Skip(t);
    }
  });
  if (seen != 15) r.Fail("ColumnIndex without null_pages, min_values, max_values or boundary_order");
  const size_t n = index.null_pages.size();
  if (index.min_values.size() != n || index.max_values.size() != n ||
      (index.null_counts && index.null_counts->size() != n)) {
    r.Fail(StrCat("ColumnIndex lists differ in length: ", n, " null_pages, ", index.min_values.size(),
                  " min_values, ", index.max_values.size(), " max_values",
                  index.null_counts ? StrCat(", ", index.null_counts->size(), " null_counts") : std::string()));
  }
  return index;
}

OffsetIndex ParseOffsetIndex(std::string_view bytes, const std::string& context, uint64_t base_offset,
                             int max_depth) {
  CompactReader r(bytes, context, base_offset, max_depth);
  OffsetIndex index;
  bool has_locations = false;
  r.ReadStruct([&](int16_t id, Type t) {
    if (id != 1) return r.Skip(t);
    has_locations = true;
    r.ReadStructList(t, [&](uint32_t) { index.page_locations.push_back(ReadPageLocation(r)); });
  });
  if (!has_locations) r.Fail("OffsetIndex without page_locations");
  return index;
}

std::string SerializeColumnIndex(const ColumnIndex& index) {
  std::string out;
  CompactWriter w(&out);
  const auto n = static_cast<uint32_t>(index.null_pages.size());
  w.StructBegin();
  w.FieldBegin(1, Type::kList);
  w.ListBegin(Type::kTrue, n);
  for (bool b : index.null_pages) w.WriteBoolElement(b);
  for (int16_t id : {2, 3}) {
    const auto& values = id == 2 ? index.min_values : index.max_values;
    w.FieldBegin(id, Type::kList);
    w.ListBegin(Type::kBinary, static_cast<uint32_t>(values.size()));
    for (const auto& v : values) w.WriteBinary(v);
  }
  w.WriteI32Field(4, static_cast<int32_t>(index.boundary_order));
  if (index.null_counts) {
    w.FieldBegin(5, Type::kList);
    w.ListBegin(Type::kI64, static_cast<uint32_t>(index.null_counts->size()));
    for (int64_t c : *index.null_counts) w.WriteI64(c);
  }
  w.StructEnd();
  return out;
}

std::string SerializeOffsetIndex(const OffsetIndex& index) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldBegin(1, Type::kList);
  w.ListBegin(Type::kStruct, static_cast<uint32_t>(index.page_locations.size()));
  for (const PageLocation& p : index.page_locations) {
    w.StructBegin();
    w.WriteI64Field(1, p.offset);
    w.WriteI32Field(2, p.compressed_page_size);
    w.WriteI64Field(3, p.first_row_index);
    w.StructEnd();
  }
  w.StructEnd();
  return out;
}

}  // namespace lakerun::parquet
