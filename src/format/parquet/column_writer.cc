#include "format/parquet/column_writer.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/parquet/codec.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/rle_decoder.h"
#include "format/parquet/rle_encoder.h"
#include "format/parquet/statistics_builder.h"
#include "format/parquet/value_encoders.h"
#include "lakerun/base/crc32.h"
#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

bool EncodingValidFor(Encoding e, PhysicalType t) {
  switch (e) {
    case Encoding::kPlain: return true;
    case Encoding::kRle: return t == PhysicalType::kBoolean;
    case Encoding::kDeltaBinaryPacked: return t == PhysicalType::kInt32 || t == PhysicalType::kInt64;
    case Encoding::kDeltaLengthByteArray: return t == PhysicalType::kByteArray;
    case Encoding::kDeltaByteArray: return t == PhysicalType::kByteArray || t == PhysicalType::kFixedLenByteArray;
    case Encoding::kByteStreamSplit:
      return t != PhysicalType::kBoolean && t != PhysicalType::kByteArray;
    default: return false;
  }
}

void EncodeValues(Encoding e, const ColumnData& d, int64_t begin, int64_t end, std::string* out) {
  switch (e) {
    case Encoding::kPlain: EncodePlain(d, begin, end, out); return;
    case Encoding::kRle: EncodeRleBooleans(d, begin, end, out); return;
    case Encoding::kDeltaBinaryPacked: EncodeDeltaBinaryPacked(d, begin, end, out); return;
    case Encoding::kDeltaLengthByteArray: EncodeDeltaLengthByteArray(d, begin, end, out); return;
    case Encoding::kDeltaByteArray: EncodeDeltaByteArray(d, begin, end, out); return;
    case Encoding::kByteStreamSplit: EncodeByteStreamSplit(d, begin, end, out); return;
    default: LAKERUN_THROW(InternalError, "no encoder for ", ToString(e));
  }
}

struct Page {
  int64_t slot_begin, slot_end, value_begin, value_end;
};

// Dictionary of distinct values in first-seen order, and per-value indices.
class DictionaryBuilder {
 public:
  static constexpr size_t kProbeValues = 4096;

  explicit DictionaryBuilder(const ColumnData& data) : data_(data) {}

  // Adds values [begin, end); returns false (and stops) once the dictionary's PLAIN size passes `limit`.
  bool Add(int64_t begin, int64_t end, int64_t limit) {
    if (index_.empty()) index_.reserve(static_cast<size_t>(std::min<int64_t>(end - begin, 1 << 16)));
    const int width = data_.value_width();
    const char* base = reinterpret_cast<const char*>(data_.value_buffer().data());
    const int64_t* offsets = data_.offsets().empty() ? nullptr : data_.offsets().data();
    for (int64_t i = begin; i < end; ++i) {
      std::string_view v = width > 0 ? std::string_view(base + i * width, static_cast<size_t>(width))
                                     : std::string_view(base + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i]));
      auto [it, inserted] = index_.emplace(v, static_cast<uint32_t>(entries_.size()));
      if (inserted) {
        entries_.push_back(i);
        bytes_ += width > 0 ? width : static_cast<int64_t>(4 + v.size());
        if (bytes_ > limit) return false;
      }
      indices_.push_back(it->second);
      plain_bytes_ += width > 0 ? width : static_cast<int64_t>(4 + v.size());
      // Mostly distinct values (random floats, ids) gain nothing from a dictionary: give up early, as
      // parquet-mr and Arrow do, instead of hashing the whole chunk.
      const size_t seen = indices_.size();
      if (seen >= kProbeValues && seen % kProbeValues == 0 && entries_.size() * 2 > seen) return false;
    }
    accepted_ = {static_cast<int64_t>(indices_.size()), static_cast<int64_t>(entries_.size()), bytes_, plain_bytes_};
    return true;
  }
  // Whether the values of the pages Add accepted take less room dictionary-encoded (the dictionary page plus
  // bit-packed indices) than PLAIN, as parquet-mr checks before keeping a dictionary. Mostly distinct values
  // (images, embeddings, ids) fail it: one page of them makes a dictionary as large as the page.
  bool Pays() const {
    const int bits = BitWidthFor(static_cast<uint64_t>(std::max<int64_t>(accepted_.entries - 1, 0)));
    const int64_t index_bytes = (accepted_.values * bits + 7) / 8 + 1;
    return accepted_.dictionary_bytes + index_bytes < accepted_.plain_bytes;
  }
  const std::vector<uint32_t>& indices() const { return indices_; }
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  // The dictionary values as a ColumnData (for PLAIN encoding of the dictionary page).
  ColumnData Values() const {
    ColumnData out(data_.type(), data_.type_length());
    for (int64_t i : entries_) {
      std::string_view v = data_.bytes_at(i);
      if (data_.type() == PhysicalType::kByteArray) {
        auto& offsets = out.mutable_offsets();
        if (offsets.empty()) offsets.push_back(0);
        out.mutable_value_buffer().Append(v.data(), v.size());
        offsets.push_back(static_cast<int64_t>(out.value_buffer().size()));
      } else {
        out.mutable_value_buffer().Append(v.data(), v.size());
      }
      out.set_num_values(out.num_values() + 1);
    }
    return out;
  }

 private:
  const ColumnData& data_;
  std::unordered_map<std::string_view, uint32_t> index_;
  std::vector<int64_t> entries_;
  std::vector<uint32_t> indices_;
  int64_t bytes_ = 0;        // the dictionary's PLAIN size
  int64_t plain_bytes_ = 0;  // the PLAIN size of every value added
  struct {                   // the state after the last page Add accepted
    int64_t values = 0, entries = 0, dictionary_bytes = 0, plain_bytes = 0;
  } accepted_;
};

}  // namespace

int64_t ValidateColumnData(const ColumnDescriptor& c, const ColumnData& d) {
  const std::string& name = c.dotted_path;
  LAKERUN_CHECK(d.type() == c.physical_type, "column '", name, "': data is ", ToString(d.type()), ", the schema says ",
                ToString(c.physical_type));
  if (c.physical_type == PhysicalType::kFixedLenByteArray) {
    LAKERUN_CHECK(d.type_length() == c.type_length, "column '", name, "': data has width ", d.type_length(),
                  ", the schema says ", c.type_length);
  }
  LAKERUN_CHECK(!d.has_views() && !d.has_dictionary(), "column '", name,
                "': data in the views or dictionary form; the writer takes the copied layout (ColumnData::Materialize)");
  const int width = d.value_width();
  if (c.physical_type == PhysicalType::kByteArray) {
    const auto& off = d.offsets();
    LAKERUN_CHECK(off.size() == static_cast<size_t>(d.num_values()) + 1 || (d.num_values() == 0 && off.empty()),
                  "column '", name, "': ", off.size(), " offsets for ", d.num_values(), " values");
    for (size_t i = 0; i + 1 < off.size(); ++i) {
      LAKERUN_CHECK(off[i] <= off[i + 1], "column '", name, "': offsets decrease at value ", i);
    }
    LAKERUN_CHECK(off.empty() || (off.front() == 0 && static_cast<size_t>(off.back()) <= d.value_buffer().size()),
                  "column '", name, "': offsets do not fit the value buffer");
  } else {
    LAKERUN_CHECK(d.value_buffer().size() == static_cast<size_t>(d.num_values()) * static_cast<size_t>(width),
                  "column '", name, "': value buffer has ", d.value_buffer().size(), " bytes for ", d.num_values(),
                  " values of ", width, " bytes");
  }
  int64_t slots = d.num_values();
  if (c.max_def_level > 0) {
    slots = static_cast<int64_t>(d.def_levels().size());
    int64_t defined = 0;
    for (int16_t l : d.def_levels()) {
      LAKERUN_CHECK(l >= 0 && l <= c.max_def_level, "column '", name, "': definition level ", l, " outside [0, ",
                    c.max_def_level, "]");
      defined += l == c.max_def_level;
    }
    LAKERUN_CHECK(defined == d.num_values(), "column '", name, "': ", defined, " definition levels at the maximum but ",
                  d.num_values(), " values");
  } else {
    LAKERUN_CHECK(d.def_levels().empty(), "column '", name, "' is required but has definition levels");
  }
  int64_t rows = slots;
  if (c.max_rep_level > 0) {
    LAKERUN_CHECK(static_cast<int64_t>(d.rep_levels().size()) == slots, "column '", name, "': ",
                  d.rep_levels().size(), " repetition levels for ", slots, " level slots");
    rows = 0;
    for (size_t i = 0; i < d.rep_levels().size(); ++i) {
      const int16_t l = d.rep_levels()[i];
      LAKERUN_CHECK(l >= 0 && l <= c.max_rep_level, "column '", name, "': repetition level ", l, " outside [0, ",
                    c.max_rep_level, "]");
      LAKERUN_CHECK(i > 0 || l == 0, "column '", name, "': the first repetition level must be 0");
      rows += l == 0;
    }
  } else {
    LAKERUN_CHECK(d.rep_levels().empty(), "column '", name, "' is not repeated but has repetition levels");
  }
  return rows;
}

ColumnChunkMeta WriteColumnChunk(WritableFile& file, const ColumnDescriptor& c, const ColumnData& d,
                                 const ColumnWriteOptions& opt, ChunkPageIndex* page_index) {
  const std::string& name = c.dotted_path;
  const Encoding fallback = opt.encoding.value_or(Encoding::kPlain);
  LAKERUN_CHECK(EncodingValidFor(fallback, c.physical_type), "column '", name, "': encoding ", ToString(fallback),
                " is not valid for ", ToString(c.physical_type));
  LAKERUN_CHECK(opt.page_version == 1 || opt.page_version == 2, "page_version must be 1 or 2, got ", opt.page_version);
  LAKERUN_CHECK(CanCompress(opt.codec), "column '", name, "': cannot write codec ", ToString(opt.codec));

  // Cut pages on row boundaries once the estimated page size reaches page_bytes.
  const int64_t slots = d.num_slots();
  const bool has_def = c.max_def_level > 0, has_rep = c.max_rep_level > 0;
  const int width = d.value_width();
  std::vector<Page> pages;
  {
    Page p{0, 0, 0, 0};
    int64_t bytes = 0, value = 0;
    for (int64_t s = 0; s < slots; ++s) {
      const bool row_start = !has_rep || d.rep_levels()[s] == 0;
      if (row_start && bytes >= opt.page_bytes && s > p.slot_begin) {
        p.slot_end = s;
        p.value_end = value;
        pages.push_back(p);
        p = Page{s, s, value, value};
        bytes = 0;
      }
      const bool defined = !has_def || d.def_levels()[s] == c.max_def_level;
      if (defined) {
        bytes += width > 0 ? width : 4 + (d.offsets()[value + 1] - d.offsets()[value]);
        ++value;
      }
      bytes += (has_def ? 1 : 0) + (has_rep ? 1 : 0);  // levels: a generous estimate
    }
    p.slot_end = slots;
    p.value_end = value;
    if (p.slot_end > p.slot_begin || pages.empty()) pages.push_back(p);
  }

  // Dictionary pages first: decide per page whether it still fits in the dictionary.
  const bool try_dictionary = opt.dictionary && !opt.encoding && c.physical_type != PhysicalType::kBoolean;
  DictionaryBuilder dict(d);
  size_t dict_pages = 0;  // pages [0, dict_pages) are dictionary-encoded
  if (try_dictionary) {
    for (const Page& p : pages) {
      if (!dict.Add(p.value_begin, p.value_end, opt.dictionary_page_bytes)) break;
      ++dict_pages;
    }
    // A dictionary given up part-way (it outgrew dictionary_page_bytes, or the values proved mostly distinct) keeps
    // its first pages only where it made them smaller; else the whole chunk is PLAIN.
    if (dict_pages < pages.size() && !dict.Pays()) dict_pages = 0;
  }

  ColumnChunkMeta meta;
  meta.column = c.index;
  meta.physical_type = c.physical_type;
  meta.codec = opt.codec;
  meta.num_values = slots;
  std::set<int> encodings;
  int64_t uncompressed_total = 0, compressed_total = 0;
  std::string page_bytes, compressed, header;

  auto emit = [&](PageHeader& h, std::string_view body) {
    if (opt.page_checksums) h.crc = static_cast<int32_t>(Crc32(body));  // over the page as stored
    header.clear();
    SerializePageHeader(h, &header);
    file.Append(header);
    file.Append(body);
    uncompressed_total += static_cast<int64_t>(header.size()) + h.uncompressed_page_size;
    compressed_total += static_cast<int64_t>(header.size() + body.size());
  };
  auto check_size = [&](size_t n) {
    LAKERUN_CHECK(n <= static_cast<size_t>(INT32_MAX), "column '", name, "': page of ", n,
                  " bytes exceeds Parquet's 2 GiB page limit; lower page_bytes");
  };

  const Encoding dict_data_encoding = opt.page_version == 1 ? Encoding::kPlainDictionary : Encoding::kRleDictionary;
  if (dict_pages > 0) {
    ColumnData values = dict.Values();
    page_bytes.clear();
    EncodePlain(values, 0, values.num_values(), &page_bytes);
    compressed.clear();
    Compress(opt.codec, opt.compression_level, page_bytes, &compressed);
    check_size(page_bytes.size());
    PageHeader h;
    h.type = static_cast<int32_t>(PageType::kDictionaryPage);
    h.uncompressed_page_size = static_cast<int32_t>(page_bytes.size());
    h.compressed_page_size = static_cast<int32_t>(compressed.size());
    h.num_values = static_cast<int32_t>(values.num_values());
    h.encoding = static_cast<int32_t>(opt.page_version == 1 ? Encoding::kPlainDictionary : Encoding::kPlain);
    meta.dictionary_page_offset = static_cast<int64_t>(file.Position());
    encodings.insert(h.encoding);
    emit(h, compressed);
  }
  meta.data_page_offset = static_cast<int64_t>(file.Position());

  const int def_bw = BitWidthFor(static_cast<uint64_t>(c.max_def_level));
  const int rep_bw = BitWidthFor(static_cast<uint64_t>(c.max_rep_level));
  const int dict_bw = BitWidthFor(static_cast<uint64_t>(std::max<int64_t>(dict.size() - 1, 0)));
  PageIndexBuilder index(c, opt.statistics);
  int64_t first_row = 0;  // of the current page, within the chunk
  for (size_t pi = 0; pi < pages.size(); ++pi) {
    const Page& p = pages[pi];
    const int64_t n_slots = p.slot_end - p.slot_begin;
    const int64_t n_values = p.value_end - p.value_begin;
    const int64_t page_rows =
        has_rep ? std::count(d.rep_levels().begin() + p.slot_begin, d.rep_levels().begin() + p.slot_end, 0) : n_slots;
    const int64_t page_offset = static_cast<int64_t>(file.Position());
    std::string levels;
    size_t rep_len = 0, def_len = 0;
    const bool v1 = opt.page_version == 1;
    if (has_rep) {
      if (v1) EncodeRleHybridWithLength(d.rep_levels().data() + p.slot_begin, n_slots, rep_bw, &levels);
      else EncodeRleHybrid(d.rep_levels().data() + p.slot_begin, n_slots, rep_bw, &levels);
      rep_len = levels.size();
    }
    if (has_def) {
      if (v1) EncodeRleHybridWithLength(d.def_levels().data() + p.slot_begin, n_slots, def_bw, &levels);
      else EncodeRleHybrid(d.def_levels().data() + p.slot_begin, n_slots, def_bw, &levels);
      def_len = levels.size() - rep_len;
    }
    if (has_rep || has_def) encodings.insert(static_cast<int>(Encoding::kRle));
    std::string values;
    Encoding e = fallback;
    if (pi < dict_pages) {
      e = dict_data_encoding;
      values.push_back(static_cast<char>(dict_bw));
      EncodeRleHybrid(dict.indices().data() + p.value_begin, n_values, dict_bw, &values);
    } else {
      EncodeValues(fallback, d, p.value_begin, p.value_end, &values);
    }
    encodings.insert(static_cast<int>(e));
    PageHeader h;
    h.num_values = static_cast<int32_t>(n_slots);
    h.encoding = static_cast<int32_t>(e);
    compressed.clear();
    if (v1) {
      page_bytes = levels;
      page_bytes += values;
      check_size(page_bytes.size());
      Compress(opt.codec, opt.compression_level, page_bytes, &compressed);
      h.type = static_cast<int32_t>(PageType::kDataPage);
      h.uncompressed_page_size = static_cast<int32_t>(page_bytes.size());
      h.definition_level_encoding = h.repetition_level_encoding = static_cast<int32_t>(Encoding::kRle);
      check_size(compressed.size());
      h.compressed_page_size = static_cast<int32_t>(compressed.size());
      emit(h, compressed);
    } else {
      h.type = static_cast<int32_t>(PageType::kDataPageV2);
      h.num_nulls = static_cast<int32_t>(n_slots - n_values);
      h.num_rows = static_cast<int32_t>(page_rows);
      h.repetition_levels_byte_length = static_cast<int32_t>(rep_len);
      h.definition_levels_byte_length = static_cast<int32_t>(def_len);
      h.is_compressed = opt.codec != Codec::kUncompressed;
      compressed = levels;
      Compress(opt.codec, opt.compression_level, values, &compressed);
      check_size(levels.size() + values.size());
      check_size(compressed.size());
      h.uncompressed_page_size = static_cast<int32_t>(levels.size() + values.size());
      h.compressed_page_size = static_cast<int32_t>(compressed.size());
      emit(h, compressed);
    }
    if (page_index != nullptr && n_slots > 0) {
      index.AddPage(page_offset, static_cast<int64_t>(file.Position()) - page_offset, first_row, d, p.value_begin,
                    p.value_end, n_slots - n_values);
    }
    first_row += page_rows;
  }
  if (page_index != nullptr) *page_index = index.Finish();
  for (int e : encodings) meta.encodings.push_back(static_cast<Encoding>(e));
  meta.total_uncompressed_size = uncompressed_total;
  meta.total_compressed_size = compressed_total;
  if (opt.statistics) meta.statistics = ComputeStatistics(c, d);
  return meta;
}

}  // namespace lakerun::parquet
