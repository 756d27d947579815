#include "format/parquet/column_chunk_reader.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>

#include "format/parquet/codec.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/rle_decoder.h"
#include "format/parquet/value_decoders.h"
#include "lakerun/base/crc32.h"

namespace lakerun::parquet {
namespace {

// Decodes `n` levels of `max_level` into out. v1 RLE levels carry a 4-byte length prefix; v2 levels are the whole
// `size` bytes. Returns the bytes consumed.
size_t DecodeLevels(int32_t encoding, const uint8_t* data, size_t size, bool length_prefixed, int16_t max_level,
                    int64_t n, int16_t* out, const DecodeContext& ctx, const char* which) {
  const int bw = BitWidthFor(static_cast<uint64_t>(max_level));
  size_t consumed = 0;
  if (encoding == static_cast<int32_t>(Encoding::kRle)) {
    size_t len = size;
    const uint8_t* p = data;
    if (length_prefixed) {
      if (size < 4) ctx.Fail(StrCat(which, " levels: missing 4-byte length"));
      uint32_t l;
      std::memcpy(&l, data, 4);
      if (l > size - 4) ctx.Fail(StrCat(which, " levels: length ", l, " overruns the page (", size - 4, " bytes)"));
      len = l;
      p += 4;
      consumed = 4 + len;
    } else {
      consumed = size;
    }
    RleDecoder dec(p, len, bw, &ctx);
    dec.Decode<int16_t>(out, n);
  } else if (encoding == static_cast<int32_t>(Encoding::kBitPacked)) {
    // Deprecated BIT_PACKED: most significant bit first, no length prefix.
    const uint64_t bytes = (static_cast<uint64_t>(n) * bw + 7) / 8;
    if (bytes > size) ctx.Fail(StrCat(which, " levels: BIT_PACKED needs ", bytes, " bytes, page has ", size));
    for (int64_t i = 0; i < n; ++i) {
      int v = 0;
      for (int b = 0; b < bw; ++b) {
        const uint64_t bit = static_cast<uint64_t>(i) * bw + b;
        v = (v << 1) | ((data[bit >> 3] >> (7 - (bit & 7))) & 1);
      }
      out[i] = static_cast<int16_t>(v);
    }
    consumed = static_cast<size_t>(bytes);
  } else {
    ctx.Fail(StrCat(which, " levels use unsupported encoding ", ToString(static_cast<Encoding>(encoding))));
  }
  int16_t max_seen = 0;
  for (int64_t i = 0; i < n; ++i) max_seen = std::max(max_seen, out[i]);
  if (max_seen > max_level) {
    ctx.Fail(StrCat(which, " level ", max_seen, " exceeds the column's maximum ", max_level));
  }
  return consumed;
}

// Page memory blocks are at most this large (a bigger chunk takes several).
constexpr uint64_t kMaxBlock = uint64_t{256} << 20;

int64_t CountDefined(const int16_t* levels, int64_t n, int16_t max_level) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += levels[i] == max_level;
  return count;
}

class ChunkDecoder {
 public:
  ChunkDecoder(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec, DecodeContext ctx,
               ColumnData* out, const ChunkMemory& memory)
      : chunk_(chunk),
        base_(chunk_offset),
        spec_(spec),
        ctx_(std::move(ctx)),
        out_(*out),
        scratch_(*memory.page_scratch),
        byte_type_(spec.type == PhysicalType::kByteArray || spec.type == PhysicalType::kFixedLenByteArray ||
                   spec.type == PhysicalType::kInt96),
        views_(spec.byte_views && byte_type_),
        keep_dictionary_(spec.keep_dictionary && byte_type_),
        memory_(memory.view_pool, out, static_cast<size_t>(std::min<uint64_t>(spec.view_block_bytes, kMaxBlock)),
                memory.chunk) {
    // Reuse the output's buffers: keep their capacity, drop their contents. Dropping the owners first lets the
    // page memory of the previous result return to the pool.
    out_.ClearForms();
    out_.set_has_views(views_);
    out_.set_type(spec.type, spec.type_length);
    out_.set_num_values(0);
    out_.set_first_row(0);
    out_.mutable_value_buffer().Clear();
    out_.mutable_offsets().clear();
    out_.mutable_def_levels().clear();
    out_.mutable_rep_levels().clear();
    out_.set_def_levels(std::move(out_.mutable_def_levels()), 0);
    out_.set_rep_levels(std::move(out_.mutable_rep_levels()), 0);
    // Reserve the output once (exact for required columns, an upper bound otherwise) so that pages append without
    // reallocating. Reservations are virtual memory until written, so a lying footer costs address space only; it is
    // still capped.
    // A row range reserves for its rows only: the pages it decodes may hold more, and grow the buffers then.
    const int width = FixedWidth(spec.type, spec.type_length);
    uint64_t slots = spec.num_values > 0 ? static_cast<uint64_t>(spec.num_values) : 0;
    if (spec.row_end >= 0) slots = std::min<uint64_t>(slots, static_cast<uint64_t>(spec.row_end - spec.row_begin));
    constexpr uint64_t kMaxReserve = uint64_t{1} << 32;
    const uint64_t slot_bytes = views_ ? sizeof(std::string_view) : static_cast<uint64_t>(std::max(width, 0));
    const uint64_t value_bytes = slots * slot_bytes;
    if (value_bytes > 0 && value_bytes <= kMaxReserve) {
      try {
        (views_ ? out_.mutable_view_buffer() : out_.mutable_value_buffer()).Reserve(value_bytes);
      } catch (const std::bad_alloc&) {
        ctx_.FailAllocation(value_bytes, StrCat("the column's ", slots, " values"));
      }
    }
    if (spec.max_def_level > 0) {
      std::vector<int16_t> levels = std::move(out_.mutable_def_levels());
      if (slots * 2 <= kMaxReserve) levels.reserve(slots);
      out_.set_def_levels(std::move(levels), spec.max_def_level);
    }
    if (spec.max_rep_level > 0) {
      std::vector<int16_t> levels = std::move(out_.mutable_rep_levels());
      if (slots * 2 <= kMaxReserve) levels.reserve(slots);
      out_.set_rep_levels(std::move(levels), spec.max_rep_level);
    }
  }

  void Run() {
    const bool ranged = spec_.row_end >= 0;
    if (ranged && spec_.max_rep_level > 0) {
      ctx_.Fail("a row range can only be read from a column without repetition");
    }
    int64_t rows_seen = 0;     // rows of the data pages passed so far (ranged reads: one slot per row)
    bool read_any = false;     // a data page of the range was decoded
    bool ended_early = false;  // stopped after the range's last page
    size_t pos = 0;
    while (pos < chunk_.size() && (spec_.num_values < 0 || slots_ < spec_.num_values)) {
      if (ranged && rows_seen >= spec_.row_end && read_any) {
        ended_early = true;
        break;
      }
      ctx_.page_offset = base_ + pos;
      ctx_.page = pages_++;
      size_t header_size = 0;
      PageHeader h = ParsePageHeader(chunk_.substr(pos), ctx_.Describe() + ": page header", base_ + pos,
                                     spec_.max_thrift_depth, &header_size);
      pos += header_size;
      if (static_cast<uint64_t>(h.compressed_page_size) > chunk_.size() - pos) {
        ctx_.Fail(StrCat("page of ", h.compressed_page_size, " bytes overruns the column chunk (",
                         chunk_.size() - pos, " bytes left)"));
      }
      if (static_cast<uint64_t>(h.uncompressed_page_size) > spec_.max_page_bytes ||
          static_cast<uint64_t>(h.compressed_page_size) > spec_.max_page_bytes) {
        ctx_.Fail(StrCat("page size ", h.uncompressed_page_size, " exceeds the limit of ", spec_.max_page_bytes));
      }
      std::string_view body = chunk_.substr(pos, static_cast<size_t>(h.compressed_page_size));
      pos += body.size();
      const auto type = static_cast<PageType>(h.type);
      if (ranged && (type == PageType::kDataPage || type == PageType::kDataPageV2)) {
        // A column without repetition has one slot per row, so a page's header says which rows it holds.
        const int64_t first = rows_seen;
        rows_seen += h.num_values;           // a page read checks its count itself (ReadDataPage*)
        if (rows_seen <= spec_.row_begin) {  // wholly before the range (the loop stops after its last page)
          CheckPageCount(h.num_values, h.uncompressed_page_size);
          slots_ += h.num_values;  // skipped unread
          continue;
        }
        if (!read_any) out_.set_first_row(first);
        read_any = true;
      }
      if (ranged && type == PageType::kDictionaryPage) {
        // A row range may hold no dictionary-encoded page (the chunk fell back to PLAIN before it, or the range
        // lies in the PLAIN part): the dictionary is checked and decoded when the range's first such page needs it.
        if (deferred_dictionary_) ctx_.Fail("a second dictionary page in one column chunk");
        if (slots_ > 0) ctx_.Fail("dictionary page after data pages");
        deferred_dictionary_ = DeferredPage{h, body, ctx_.page_offset, ctx_.page};
        continue;
      }
      if (CopiedWhole(h, body)) {
        pending_crc_ = &h;  // checked by TryDirectPlain during its copy
      } else {
        CheckCrc(h, body);
      }
      if (deferred_dictionary_ && !have_dictionary_ && IsDictionaryEncoding(h.encoding) &&
          (type == PageType::kDataPage || type == PageType::kDataPageV2)) {
        LoadDeferredDictionary();  // before the data page is decompressed: both may use the same scratch
      }
      try {
        switch (static_cast<PageType>(h.type)) {
          case PageType::kDictionaryPage: ReadDictionaryPage(h, body); break;
          case PageType::kDataPage: ReadDataPageV1(h, body); break;
          case PageType::kDataPageV2: ReadDataPageV2(h, body); break;
          default: break;  // index pages and page types newer than this reader are skipped
        }
      } catch (const std::bad_alloc&) {
        // Page memory, a decompressed page, levels or values growing: the page's size says what it needed.
        ctx_.FailAllocation(static_cast<uint64_t>(h.uncompressed_page_size),
                            StrCat("decoding the page (uncompressed; the column's values so far take ",
                                   out_.value_buffer().size(), " bytes)"));
      }
      LAKERUN_INTERNAL_ASSERT(pending_crc_ == nullptr, "a page's CRC was left unchecked");
    }
    if (ranged && !read_any && rows_seen > 0) out_.set_first_row(rows_seen);  // the range lies past every page
    // The chunk's bytes may end with the range's last page (ColumnReadOptions::fetch_range_only).
    if (ranged && read_any && rows_seen >= spec_.row_end) ended_early = true;
    if (!ended_early && spec_.num_values >= 0 && slots_ != spec_.num_values) {
      ctx_.page_offset = base_ + pos;
      ctx_.Fail(StrCat("column chunk holds ", slots_, " values in its pages, its metadata says ", spec_.num_values));
    }
    if (dict_form_) {
      out_.set_has_views(false);
      out_.set_dictionary(std::move(dictionary_));
    }
  }

 private:
  // Decompresses `input` into scratch_ (or returns it as is when uncompressed).
  std::string_view Decompressed(std::string_view input, size_t size, bool compressed) {
    if (!compressed || spec_.codec == Codec::kUncompressed) {
      if (input.size() != size) {
        ctx_.Fail(StrCat("uncompressed page body has ", input.size(), " bytes, the header says ", size));
      }
      return input;
    }
    scratch_.Clear();
    scratch_.Resize(size);
    Decompress(spec_.codec, input, scratch_.data(), size, ctx_.Describe());
    return std::string_view(reinterpret_cast<const char*>(scratch_.data()), size);
  }

  // Views form: the page's bytes at an address that outlives the decoder — the chunk's own bytes when the page is
  // stored uncompressed and the chunk is shared, else decompressed (or copied) into page memory. Owned by out_ and
  // by `also` when given.
  std::string_view StablePage(std::string_view input, size_t size, bool compressed, ColumnData* also = nullptr) {
    const bool raw = !compressed || spec_.codec == Codec::kUncompressed;
    if (raw && input.size() != size) {
      ctx_.Fail(StrCat("uncompressed page body has ", input.size(), " bytes, the header says ", size));
    }
    if (raw && memory_.has_chunk()) {
      memory_.UseChunk(also);
      return input;
    }
    uint8_t* dst = memory_.Allocate(size, also);
    if (raw) {
      if (size > 0) std::memcpy(dst, input.data(), size);
    } else {
      Decompress(spec_.codec, input, dst, size, ctx_.Describe());
    }
    return std::string_view(reinterpret_cast<const char*>(dst), size);
  }

  // The page bytes values are decoded from: stable in the views form, scratch otherwise.
  std::string_view PageBytes(std::string_view input, size_t size, bool compressed) {
    return views_ ? StablePage(input, size, compressed) : Decompressed(input, size, compressed);
  }

  // The page's CRC-32 covers its bytes as stored (compressed; a v2 page's levels included), as the spec defines.
  void CheckCrc(const PageHeader& h, std::string_view body) {
    if (!spec_.verify_crc || !h.crc) return;
    CompareCrc(h, body.size(), Crc32(body));
  }

  void CompareCrc(const PageHeader& h, size_t stored_bytes, uint32_t crc) {
    if (crc != static_cast<uint32_t>(*h.crc)) {
      ctx_.Fail(StrCat("page CRC mismatch: the ", ToString(static_cast<PageType>(h.type)), " header stores CRC-32 ",
                       Crc32Text(static_cast<uint32_t>(*h.crc)), ", its ", stored_bytes, " stored bytes hash to ",
                       Crc32Text(crc), " (the page is damaged)"));
    }
  }

  // Whether the page is a data page stored uncompressed whose whole body TryDirectPlain will copy into the output
  // (required, flat, fixed-width PLAIN values; a v2 page without levels): its CRC, when checked, is then computed
  // during that copy (Crc32Copy), so the page is read once instead of twice. A page whose CRC fails is copied
  // before it fails, into an output that the failure discards: no value of it is ever returned.
  bool CopiedWhole(const PageHeader& h, std::string_view body) const {
    if (!spec_.verify_crc || !h.crc || !h.has_data_header) return false;
    const bool v2 = h.type == static_cast<int32_t>(PageType::kDataPageV2);
    if (!v2 && h.type != static_cast<int32_t>(PageType::kDataPage)) return false;
    if (v2 && (h.repetition_levels_byte_length != 0 || h.definition_levels_byte_length != 0)) return false;
    const bool raw = spec_.codec == Codec::kUncompressed || (v2 && !h.is_compressed);
    return raw && h.uncompressed_page_size >= 0 && static_cast<uint64_t>(h.uncompressed_page_size) == body.size() &&
           h.num_values >= 0 && DirectPlain(h.encoding, body.size(), h.num_values);
  }

  // A CRC left to TryDirectPlain that it did not take (it always does when CopiedWhole holds): checked here, before
  // any value of the page is decoded.
  void CheckPendingCrc(std::string_view body) {
    if (pending_crc_ == nullptr) return;
    const PageHeader& h = *pending_crc_;
    pending_crc_ = nullptr;
    CheckCrc(h, body);
  }

  // Decodes the dictionary page a row range deferred (Run) for the first data page that needs it. Errors name the
  // dictionary page's offset.
  void LoadDeferredDictionary() {
    const DeferredPage page = *deferred_dictionary_;
    const uint64_t data_page_offset = ctx_.page_offset;
    const int64_t data_page = ctx_.page;
    ctx_.page_offset = page.offset;
    ctx_.page = page.index;
    CheckCrc(page.header, page.body);
    ReadDictionaryPage(page.header, page.body, /*deferred=*/true);
    ctx_.page_offset = data_page_offset;
    ctx_.page = data_page;
  }

  // `deferred`: read after data pages a row range skipped (Run checked its place in the chunk).
  void ReadDictionaryPage(const PageHeader& h, std::string_view body, bool deferred = false) {
    if (!h.has_data_header) ctx_.Fail("dictionary page without its dictionary_page_header");
    if (have_dictionary_) ctx_.Fail("a second dictionary page in one column chunk");
    if (slots_ > 0 && !deferred) ctx_.Fail("dictionary page after data pages");
    if (h.encoding != static_cast<int32_t>(Encoding::kPlain) &&
        h.encoding != static_cast<int32_t>(Encoding::kPlainDictionary)) {
      ctx_.Fail(StrCat("dictionary page encoding ", ToString(static_cast<Encoding>(h.encoding)),
                       " (expected PLAIN)"));
    }
    if (h.num_values < 0) ctx_.Fail(StrCat("dictionary page with ", h.num_values, " values"));
    dictionary_ = std::make_shared<ColumnData>(spec_.type, spec_.type_length);
    if (views_) {
      dictionary_->set_has_views(true);
      std::string_view data = StablePage(body, static_cast<size_t>(h.uncompressed_page_size), true, dictionary_.get());
      DecodePlainViews(reinterpret_cast<const uint8_t*>(data.data()), data.size(), h.num_values, dictionary_.get(),
                       ctx_);
    } else {
      std::string_view data = Decompressed(body, static_cast<size_t>(h.uncompressed_page_size), true);
      DecodePlain(reinterpret_cast<const uint8_t*>(data.data()), data.size(), h.num_values, dictionary_.get(), ctx_);
    }
    have_dictionary_ = true;
  }

  // `page_size`: the page's uncompressed size. Level runs can describe many values in a few bytes, but not
  // unboundedly many: this keeps a lying header from allocating memory far beyond the input.
  void CheckPageCount(int64_t n, int64_t page_size) {
    if (n < 0) ctx_.Fail(StrCat("data page with ", n, " values"));
    if (n > (int64_t{1} << 20) + 64 * page_size) {
      ctx_.Fail(StrCat("data page of ", page_size, " bytes claims ", n, " values"));
    }
    if (spec_.num_values >= 0 && n > spec_.num_values - slots_) {
      ctx_.Fail(StrCat("data page of ", n, " values overruns the chunk's ", spec_.num_values, " values (",
                       slots_, " read)"));
    }
  }

  // Reads levels for `n` slots from `data`; returns the number of non-null values; advances *pos.
  int64_t ReadLevels(const PageHeader& h, const uint8_t* data, size_t size, size_t* pos, int64_t n, bool v2) {
    int64_t values = n;
    if (spec_.max_rep_level > 0) {
      auto& rep = out_.mutable_rep_levels();
      const size_t base = rep.size();
      rep.resize(base + static_cast<size_t>(n));
      size_t len = v2 ? static_cast<size_t>(h.repetition_levels_byte_length) : size - *pos;
      *pos += DecodeLevels(v2 ? static_cast<int32_t>(Encoding::kRle) : h.repetition_level_encoding, data + *pos, len,
                           !v2, spec_.max_rep_level, n, rep.data() + base, ctx_, "repetition");
      if (n > 0 && slots_ == 0 && base == 0 && rep[0] != 0) ctx_.Fail("first repetition level of the chunk is not 0");
    }
    if (spec_.max_def_level > 0) {
      auto& def = out_.mutable_def_levels();
      const size_t base = def.size();
      def.resize(base + static_cast<size_t>(n));
      size_t len = v2 ? static_cast<size_t>(h.definition_levels_byte_length) : size - *pos;
      *pos += DecodeLevels(v2 ? static_cast<int32_t>(Encoding::kRle) : h.definition_level_encoding, data + *pos, len,
                           !v2, spec_.max_def_level, n, def.data() + base, ctx_, "definition");
      values = CountDefined(def.data() + base, n, spec_.max_def_level);
    }
    return values;
  }

  static bool IsDictionaryEncoding(int32_t encoding) {
    return encoding == static_cast<int32_t>(Encoding::kPlainDictionary) ||
           encoding == static_cast<int32_t>(Encoding::kRleDictionary);
  }

  // `data` is stable page memory in the views form (PageBytes).
  void DecodeValues(int32_t encoding, const uint8_t* data, size_t size, int64_t n) {
    const int64_t before = out_.num_values();
    const bool dictionary_encoded = IsDictionaryEncoding(encoding);
    if (dict_form_ && !dictionary_encoded) ExpandDictionary();  // a fallback page: the chunk is not all-dictionary
    if (dictionary_encoded) {
      if (!have_dictionary_) ctx_.Fail("dictionary-encoded page without a dictionary page");
      if (keep_dictionary_ && (dict_form_ || out_.num_values() == 0)) {
        dict_form_ = true;
        DecodeDictionaryIndexValues(data, size, n, dictionary_->num_values(), &out_, ctx_);
      } else {
        DecodeDictionaryIndices(data, size, n, *dictionary_, &out_, ctx_);
      }
    } else if (views_ && encoding == static_cast<int32_t>(Encoding::kPlain)) {
      DecodePlainViews(data, size, n, &out_, ctx_);
    } else if (views_ && encoding == static_cast<int32_t>(Encoding::kDeltaLengthByteArray)) {
      DecodeDeltaLengthByteArrayViews(data, size, n, &out_, ctx_);
    } else if (views_) {
      // Encodings that rebuild values (DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT): decode copies, then keep them in page
      // memory and view them there.
      ColumnData copied(spec_.type, spec_.type_length);
      DecodeCopied(encoding, data, size, n, &copied);
      uint8_t* bytes = memory_.Allocate(copied.value_buffer().size());
      if (!copied.value_buffer().empty()) {
        std::memcpy(bytes, copied.value_buffer().data(), copied.value_buffer().size());
      }
      AppendViewsOfCopy(copied, bytes, &out_);
    } else {
      DecodeCopied(encoding, data, size, n, &out_);
    }
    if (out_.num_values() - before != n) ctx_.Fail("decoder produced a wrong number of values");
  }

  // Non-dictionary encodings into the copied layout of `target`.
  void DecodeCopied(int32_t encoding, const uint8_t* data, size_t size, int64_t n, ColumnData* target) {
    switch (static_cast<Encoding>(encoding)) {
      case Encoding::kPlain: DecodePlain(data, size, n, target, ctx_); break;
      case Encoding::kRle:
        if (spec_.type != PhysicalType::kBoolean) ctx_.Fail("RLE value encoding is only valid for BOOLEAN");
        DecodeRleBooleans(data, size, n, target, ctx_);
        break;
      case Encoding::kDeltaBinaryPacked: DecodeDeltaBinaryPacked(data, size, n, target, ctx_); break;
      case Encoding::kDeltaLengthByteArray: DecodeDeltaLengthByteArray(data, size, n, target, ctx_); break;
      case Encoding::kDeltaByteArray: DecodeDeltaByteArray(data, size, n, target, ctx_); break;
      case Encoding::kByteStreamSplit: DecodeByteStreamSplit(data, size, n, target, ctx_); break;
      default:
        LAKERUN_THROW(NotImplemented, ctx_.Describe(), ": value encoding ", ToString(static_cast<Encoding>(encoding)),
                      " is not supported");
    }
  }

  // Leaves the dictionary form: the indices decoded so far become values (views or copies) gathered from the
  // dictionary, and later pages append values.
  void ExpandDictionary() {
    Buffer indices;
    std::swap(indices, out_.mutable_index_buffer());
    const int64_t n = out_.num_values();
    out_.set_num_values(0);
    GatherFromDictionary(reinterpret_cast<const uint32_t*>(indices.data()), n, *dictionary_, &out_);
    indices.Clear();
    std::swap(indices, out_.mutable_index_buffer());
    dict_form_ = false;
  }

  // Whether `n` values in `size` bytes of `encoding` go straight into the output buffer (TryDirectPlain): required,
  // flat, fixed-width PLAIN values, in the copied form.
  bool DirectPlain(int32_t encoding, size_t size, int64_t n) const {
    const int width = FixedWidth(spec_.type, spec_.type_length);
    return !views_ && !dict_form_ && spec_.max_def_level == 0 && spec_.max_rep_level == 0 &&
           encoding == static_cast<int32_t>(Encoding::kPlain) && spec_.type != PhysicalType::kBoolean &&
           spec_.type != PhysicalType::kByteArray && width > 0 && size > 0 &&
           static_cast<uint64_t>(n) * static_cast<uint64_t>(width) == size;
  }

  // Required, flat, fixed-width PLAIN pages decompress straight into the output buffer. Empty pages take the general
  // path (an empty output buffer has no storage to copy into). A pending CRC (CopiedWhole) is checked in the copy.
  bool TryDirectPlain(int32_t encoding, std::string_view input, size_t size, bool compressed, int64_t n) {
    if (!DirectPlain(encoding, size, n)) return false;
    Buffer& buf = out_.mutable_value_buffer();
    const size_t base = buf.size();
    try {
      buf.Resize(base + size);
    } catch (const std::bad_alloc&) {
      ctx_.FailAllocation(base + size, "the column's values");
    }
    if (!compressed || spec_.codec == Codec::kUncompressed) {
      if (input.size() != size) ctx_.Fail(StrCat("page body has ", input.size(), " bytes, the header says ", size));
      if (pending_crc_ != nullptr) {
        const PageHeader& h = *pending_crc_;
        pending_crc_ = nullptr;
        const uint32_t crc = Crc32Copy(buf.data() + base, input.data(), size);
        if (crc != static_cast<uint32_t>(*h.crc)) buf.Resize(base);
        CompareCrc(h, size, crc);
      } else {
        std::memcpy(buf.data() + base, input.data(), size);
      }
    } else {
      try {
        Decompress(spec_.codec, input, buf.data() + base, size, ctx_.Describe());
      } catch (...) {
        buf.Resize(base);
        throw;
      }
    }
    out_.set_num_values(out_.num_values() + n);
    return true;
  }

  void ReadDataPageV1(const PageHeader& h, std::string_view body) {
    if (!h.has_data_header) ctx_.Fail("data page without its data_page_header");
    const int64_t n = h.num_values;
    CheckPageCount(n, h.uncompressed_page_size);
    if (TryDirectPlain(h.encoding, body, static_cast<size_t>(h.uncompressed_page_size), true, n)) {
      slots_ += n;
      return;
    }
    CheckPendingCrc(body);
    std::string_view page = PageBytes(body, static_cast<size_t>(h.uncompressed_page_size), true);
    const auto* data = reinterpret_cast<const uint8_t*>(page.data());
    size_t pos = 0;
    const int64_t values = ReadLevels(h, data, page.size(), &pos, n, false);
    DecodeValues(h.encoding, data + pos, page.size() - pos, values);
    slots_ += n;
  }

  // A v2 page of a column without repetition that still stores `size` bytes of repetition levels (some writers
  // do): accepted when they say every one of the `n` levels is 0 (zero-filled bytes, or levels of bit width 1 or
  // 0 that decode to zeros), refused when a level is not 0.
  void SkipZeroRepetitionLevels(const uint8_t* data, size_t size, int64_t n) {
    bool zero_filled = true;
    for (size_t i = 0; i < size && zero_filled; ++i) zero_filled = data[i] == 0;
    if (zero_filled) return;
    std::vector<int16_t> levels(static_cast<size_t>(n));
    try {
      DecodeLevels(static_cast<int32_t>(Encoding::kRle), data, size, false, 1, n, levels.data(), ctx_, "repetition");
    } catch (const CorruptDataError&) {
      // Not levels of width 1; levels of width 0 are all zero by construction, if the runs hold n of them.
      DecodeLevels(static_cast<int32_t>(Encoding::kRle), data, size, false, 0, n, levels.data(), ctx_, "repetition");
      return;
    }
    for (size_t i = 0; i < levels.size(); ++i) {
      if (levels[i] != 0) {
        ctx_.Fail(StrCat("repetition level ", levels[i], " at slot ", i,
                         " of a page in a column without repetition (only zero levels can be skipped)"));
      }
    }
  }

  void ReadDataPageV2(const PageHeader& h, std::string_view body) {
    if (!h.has_data_header) ctx_.Fail("data page v2 without its data_page_header_v2");
    const int64_t n = h.num_values;
    CheckPageCount(n, h.uncompressed_page_size);
    if (h.repetition_levels_byte_length < 0 || h.definition_levels_byte_length < 0 ||
        static_cast<uint64_t>(h.repetition_levels_byte_length) + h.definition_levels_byte_length > body.size()) {
      ctx_.Fail(StrCat("level lengths ", h.repetition_levels_byte_length, " + ", h.definition_levels_byte_length,
                       " exceed the page's ", body.size(), " bytes"));
    }
    const size_t levels_size =
        static_cast<size_t>(h.repetition_levels_byte_length) + static_cast<size_t>(h.definition_levels_byte_length);
    if (static_cast<uint64_t>(h.uncompressed_page_size) < levels_size) {
      ctx_.Fail(StrCat("uncompressed page size ", h.uncompressed_page_size, " is smaller than its levels (",
                       levels_size, " bytes)"));
    }
    const auto* raw = reinterpret_cast<const uint8_t*>(body.data());
    size_t pos = 0;
    if (spec_.max_rep_level == 0 && h.repetition_levels_byte_length != 0) {
      pos = static_cast<size_t>(h.repetition_levels_byte_length);
      SkipZeroRepetitionLevels(raw, pos, n);
    }
    const int64_t values = ReadLevels(h, raw, levels_size, &pos, n, true);
    if (spec_.max_def_level > 0 && h.num_nulls >= 0 && values != n - h.num_nulls && spec_.max_rep_level == 0) {
      ctx_.Fail(StrCat("page v2 says ", h.num_nulls, " nulls, its definition levels say ", n - values));
    }
    std::string_view rest = body.substr(levels_size);
    const size_t values_size = static_cast<size_t>(h.uncompressed_page_size) - levels_size;
    if (values == 0 && rest.empty()) {
      // No values and no values section (all nulls, or an empty page): there is nothing to decompress, and an
      // empty input is not a valid compressed stream for most codecs.
      slots_ += n;
      return;
    }
    if (!TryDirectPlain(h.encoding, rest, values_size, h.is_compressed, values)) {
      CheckPendingCrc(body);
      std::string_view data = PageBytes(rest, values_size, h.is_compressed);
      DecodeValues(h.encoding, reinterpret_cast<const uint8_t*>(data.data()), data.size(), values);
    }
    slots_ += n;
  }

  std::string_view chunk_;
  uint64_t base_;
  const ChunkSpec& spec_;
  DecodeContext ctx_;
  ColumnData& out_;
  Buffer& scratch_;
  const bool byte_type_;        // BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY or INT96
  const bool views_;            // byte values as views into memory_
  const bool keep_dictionary_;  // byte values of an all-dictionary chunk as indices + dictionary
  PageMemory memory_;
  std::shared_ptr<ColumnData> dictionary_;
  bool have_dictionary_ = false;
  struct DeferredPage {
    PageHeader header;
    std::string_view body;
    uint64_t offset;
    int64_t index;
  };
  std::optional<DeferredPage> deferred_dictionary_;  // a row range's dictionary page, not decoded yet
  bool dict_form_ = false;  // out_ holds dictionary indices so far
  const PageHeader* pending_crc_ = nullptr;  // the page whose CRC TryDirectPlain checks while copying (CopiedWhole)
  int64_t slots_ = 0;
  int64_t pages_ = 0;  // page headers read so far
};

}  // namespace

void DecodeColumnChunkInto(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec, DecodeContext ctx,
                           ColumnData* out, const ChunkMemory& memory) {
  ChunkDecoder(chunk, chunk_offset, spec, std::move(ctx), out, memory).Run();
}

void DecodeColumnChunkInto(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec, DecodeContext ctx,
                           ColumnData* out, Buffer* page_scratch) {
  ChunkMemory memory;
  memory.page_scratch = page_scratch;
  DecodeColumnChunkInto(chunk, chunk_offset, spec, std::move(ctx), out, memory);
}

ColumnData DecodeColumnChunkBytes(std::string_view chunk, uint64_t chunk_offset, const ChunkSpec& spec,
                                  DecodeContext ctx) {
  ColumnData out;
  Buffer scratch;
  DecodeColumnChunkInto(chunk, chunk_offset, spec, std::move(ctx), &out, &scratch);
  return out;
}

}  // namespace lakerun::parquet
