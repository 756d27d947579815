#include "format/parquet/fuzz_entry_points.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/parquet/codec.h"
#include "format/parquet/column_chunk_reader.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/page_index_thrift.h"
#include "format/parquet/rle_decoder.h"
#include "format/parquet/value_decoders.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/page_pruning.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::parquet::fuzz {
namespace {

// Fuzz inputs must not make the harness allocate unbounded memory: counts are capped.
constexpr int64_t kMaxCount = 1 << 20;

const uint8_t* U8(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

DecodeContext Ctx() {
  DecodeContext ctx;
  ctx.file = "<fuzz>";
  ctx.row_group = 0;
  ctx.column = "c";
  return ctx;
}

bool BadType(PhysicalType type) { return static_cast<int>(type) < 0 || static_cast<int>(type) > 7; }

}  // namespace

namespace {

// The views + dictionary form of a byte-valued chunk of a file must hold what the copied form holds (`copied`,
// which TableReader decoded); std::logic_error otherwise.
void CheckByteForms(const ParquetFile& file, int row_group, int column, const ColumnData& copied) {
  ColumnReadOptions form;
  form.byte_views = true;
  form.dictionary = true;
  ColumnData views;
  try {
    views = file.ReadColumnChunk(row_group, column, form);
  } catch (const Error& e) {
    throw std::logic_error(StrCat("views form failed where the copied form did not: ", e.what()));
  }
  bool same = views.num_values() == copied.num_values() && views.def_levels() == copied.def_levels() &&
              views.rep_levels() == copied.rep_levels();
  for (int64_t i = 0; same && i < views.num_values(); ++i) same = views.bytes_at(i) == copied.bytes_at(i);
  if (!same) throw std::logic_error("views form and copied form of a file's chunk hold different values");
}

}  // namespace

// Reads every chunk's page index, and prunes each row group's pages with "column IS NOT NULL" per flat column.
void CheckPageIndexes(const ParquetFile& file) {
  for (int rg = 0; rg < file.num_row_groups(); ++rg) {
    for (int c = 0; c < file.schema().num_columns(); ++c) {
      file.ReadOffsetIndex(rg, c);
      file.ReadColumnIndex(rg, c);
      if (file.schema().column(c).max_rep_level == 0) {
        PagesMayMatch(file, rg, format::Filter::IsNotNull(file.schema().column(c).dotted_path));
      }
    }
  }
}

void ParseFile(std::string_view file_bytes) {
  ReaderOptions options;
  options.max_page_bytes = 64 << 20;
  options.verify_crc = false;  // mutated pages must reach the decoders, which have to survive them too
  auto file = ParquetFile::OpenBuffer(std::string(file_bytes), "<fuzz>", options);
  CheckPageIndexes(*file);
  TableReader reader(*file, {});
  int64_t rows = 0;
  while (auto rg = reader.Next()) {
    if (rg->num_rows > kMaxCount || (rows += rg->num_rows) > kMaxCount) return;
    for (size_t i = 0; i < rg->columns.size(); ++i) {
      const PhysicalType type = rg->data[i].type();
      if (type == PhysicalType::kByteArray || type == PhysicalType::kFixedLenByteArray ||
          type == PhysicalType::kInt96) {
        CheckByteForms(*file, rg->row_group, rg->columns[i], rg->data[i]);
      }
    }
    AssembleRecords(file->schema(), reader.top_level_fields(), rg->columns, rg->data, rg->num_rows);
  }
}

void ParseFooter(std::string_view thrift_bytes) { ParseFileMetaData(thrift_bytes, "<fuzz>", 0, 64); }

void ParsePageIndex(std::string_view bytes, bool offset_index) {
  if (offset_index) {
    ParseOffsetIndex(bytes, "<fuzz>", 0, 64);
  } else {
    ParseColumnIndex(bytes, "<fuzz>", 0, 64);
  }
}

void ParsePageHeader(std::string_view bytes) {
  size_t size = 0;
  lakerun::parquet::ParsePageHeader(bytes, "<fuzz>", 0, 64, &size);
}

// Value bytes of slot `slot` of a column without repetition, or nullopt for a null slot.
std::optional<std::string_view> SlotValue(const ColumnData& d, int64_t slot, int64_t* next_value) {
  if (!d.def_levels().empty() && d.def_levels()[static_cast<size_t>(slot)] != d.max_def_level()) return std::nullopt;
  const int64_t v = (*next_value)++;
  const int width = d.value_width();
  if (width > 0) {
    return std::string_view(reinterpret_cast<const char*>(d.value_buffer().data()) + v * width,
                            static_cast<size_t>(width));
  }
  return d.bytes_at(v);
}

// A row range of a chunk that decoded whole must decode too (it reads a subset of the same pages) and hold the same
// slots. `seed` picks the range.
void CheckRowRange(std::string_view chunk_bytes, const ChunkSpec& spec, const ColumnData& whole, uint64_t seed) {
  if (spec.max_rep_level > 0 || whole.num_slots() == 0 || whole.has_views() || whole.has_dictionary()) return;
  const int64_t slots = whole.num_slots();
  ChunkSpec ranged = spec;
  ranged.row_begin = static_cast<int64_t>(seed % static_cast<uint64_t>(slots));
  ranged.row_end = ranged.row_begin + 1 + static_cast<int64_t>((seed >> 16) % static_cast<uint64_t>(slots));
  ColumnData part;
  try {
    part = DecodeColumnChunkBytes(chunk_bytes, 0, ranged, Ctx());
  } catch (const Error& e) {
    throw std::logic_error(StrCat("rows ", ranged.row_begin, "-", ranged.row_end, " failed where the whole chunk "
                                  "decoded: ", e.what()));
  }
  const int64_t end = std::min(ranged.row_end, slots);
  if (part.first_row() > ranged.row_begin || part.first_row() + part.num_slots() < end) {
    throw std::logic_error(StrCat("rows ", ranged.row_begin, "-", end, " asked, pages read hold ", part.first_row(),
                                  "-", part.first_row() + part.num_slots()));
  }
  int64_t whole_value = 0, part_value = 0;
  for (int64_t r = 0; r < part.first_row(); ++r) SlotValue(whole, r, &whole_value);
  for (int64_t i = 0; i < part.num_slots(); ++i) {
    if (SlotValue(whole, part.first_row() + i, &whole_value) != SlotValue(part, i, &part_value)) {
      throw std::logic_error(StrCat("row ", part.first_row() + i, " differs between a range read and the whole"));
    }
  }
}

void DecodeColumnChunk(std::string_view chunk_bytes, PhysicalType type, int32_t type_length, int16_t max_def,
                       int16_t max_rep, Codec codec) {
  if (BadType(type) || max_def < 0 || max_rep < 0 || max_def > 64 || max_rep > max_def) return;
  if (type == PhysicalType::kFixedLenByteArray && (type_length <= 0 || type_length > 1024)) return;
  ChunkSpec spec;
  spec.type = type;
  spec.type_length = type_length;
  spec.max_def_level = max_def;
  spec.max_rep_level = max_rep;
  spec.codec = codec;
  spec.max_page_bytes = 16 << 20;
  const bool byte_type = type == PhysicalType::kByteArray || type == PhysicalType::kFixedLenByteArray ||
                         type == PhysicalType::kInt96;
  const uint64_t seed = chunk_bytes.size() * 0x9E3779B97F4A7C15ULL + (chunk_bytes.empty() ? 0 : chunk_bytes.back());
  if (!byte_type) {
    const ColumnData whole = DecodeColumnChunkBytes(chunk_bytes, 0, spec, Ctx());
    CheckRowRange(chunk_bytes, spec, whole, seed);
    return;
  }
  // Every form of the byte values: the copied one is the reference.
  std::optional<ColumnData> copied;
  std::string copied_error;
  std::exception_ptr copied_exception;
  try {
    copied = DecodeColumnChunkBytes(chunk_bytes, 0, spec, Ctx());
  } catch (const Error& e) {
    copied_error = e.what();
    copied_exception = std::current_exception();
  }
  for (const bool dictionary : {false, true}) {
    ChunkSpec form = spec;
    form.byte_views = true;
    form.keep_dictionary = dictionary;
    auto chunk = std::make_shared<Buffer>();
    chunk->Append(chunk_bytes.data(), chunk_bytes.size());
    Buffer scratch;
    ChunkMemory memory;
    memory.page_scratch = &scratch;
    memory.chunk = chunk;
    ColumnData views;
    try {
      DecodeColumnChunkInto(std::string_view(reinterpret_cast<const char*>(chunk->data()), chunk->size()), 0, form,
                            Ctx(), &views, memory);
    } catch (const Error& e) {
      if (copied) throw std::logic_error(StrCat("views form failed where the copied form did not: ", e.what()));
      continue;
    }
    if (!copied) throw std::logic_error(StrCat("views form decoded a chunk the copied form rejects: ", copied_error));
    bool same = views.num_values() == copied->num_values() && views.def_levels() == copied->def_levels() &&
                views.rep_levels() == copied->rep_levels();
    for (int64_t i = 0; same && i < views.num_values(); ++i) same = views.bytes_at(i) == copied->bytes_at(i);
    if (!same) throw std::logic_error("views form and copied form hold different values");
  }
  if (!copied) std::rethrow_exception(copied_exception);
  CheckRowRange(chunk_bytes, spec, *copied, seed);
}

void DecodeRleHybrid(std::string_view bytes, int bit_width, int64_t count) {
  if (count < 0 || count > kMaxCount) return;
  DecodeContext ctx = Ctx();
  RleDecoder dec(U8(bytes), bytes.size(), bit_width, &ctx);
  std::vector<uint32_t> out(static_cast<size_t>(count));
  dec.Decode<uint32_t>(out.data(), count);
}

void DecodePlain(std::string_view bytes, PhysicalType type, int32_t type_length, int64_t count) {
  if (BadType(type) || count < 0 || count > kMaxCount || type_length < 0 || type_length > 1024) return;
  ColumnData out(type, type_length);
  lakerun::parquet::DecodePlain(U8(bytes), bytes.size(), count, &out, Ctx());
}

void DecodeDeltaBinaryPacked(std::string_view bytes, PhysicalType type, int64_t count) {
  if (count < 0 || count > kMaxCount || (type != PhysicalType::kInt32 && type != PhysicalType::kInt64)) return;
  ColumnData out(type, 0);
  lakerun::parquet::DecodeDeltaBinaryPacked(U8(bytes), bytes.size(), count, &out, Ctx());
}

void DecodeDeltaLengthByteArray(std::string_view bytes, int64_t count) {
  if (count < 0 || count > kMaxCount) return;
  ColumnData out(PhysicalType::kByteArray, 0);
  lakerun::parquet::DecodeDeltaLengthByteArray(U8(bytes), bytes.size(), count, &out, Ctx());
}

void DecodeDeltaByteArray(std::string_view bytes, int64_t count) {
  if (count < 0 || count > kMaxCount) return;
  ColumnData out(PhysicalType::kByteArray, 0);
  lakerun::parquet::DecodeDeltaByteArray(U8(bytes), bytes.size(), count, &out, Ctx());
}

void DecodeByteStreamSplit(std::string_view bytes, PhysicalType type, int32_t type_length, int64_t count) {
  if (BadType(type) || count < 0 || count > kMaxCount || type_length < 0 || type_length > 1024) return;
  ColumnData out(type, type_length);
  lakerun::parquet::DecodeByteStreamSplit(U8(bytes), bytes.size(), count, &out, Ctx());
}

void DecodeDictionaryIndices(std::string_view bytes, int64_t count, int64_t dictionary_size) {
  if (count < 0 || count > kMaxCount || dictionary_size < 0 || dictionary_size > kMaxCount) return;
  std::vector<int32_t> entries(static_cast<size_t>(dictionary_size));
  for (size_t i = 0; i < entries.size(); ++i) entries[i] = static_cast<int32_t>(i);
  ColumnData dict = ColumnData::Int32s(entries);
  ColumnData out(PhysicalType::kInt32, 0);
  lakerun::parquet::DecodeDictionaryIndices(U8(bytes), bytes.size(), count, dict, &out, Ctx());
}

void Decompress(std::string_view bytes, Codec codec, size_t uncompressed_size) {
  if (uncompressed_size > (64u << 20)) return;
  std::vector<uint8_t> out(uncompressed_size);
  lakerun::parquet::Decompress(codec, bytes, out.data(), out.size(), "<fuzz>");
}

}  // namespace lakerun::parquet::fuzz
