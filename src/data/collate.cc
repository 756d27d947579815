#include "collate.h"

#include <ATen/Functions.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "error_context.h"
#include "image_decode.h"
#include "lakerun/base/error.h"
#include "lakerun/data/shuffle.h"

namespace lakerun::data {
namespace {

at::ScalarType ToScalarType(ElementType type) {
  switch (type) {
    case ElementType::kBool: return at::kBool;
    case ElementType::kUInt8: return at::kByte;
    case ElementType::kInt8: return at::kChar;
    case ElementType::kInt16: return at::kShort;
    case ElementType::kInt32: return at::kInt;
    case ElementType::kInt64: return at::kLong;
    case ElementType::kFloat32: return at::kFloat;
    case ElementType::kFloat64: return at::kDouble;
    case ElementType::kBinary: break;
  }
  LAKERUN_THROW(InternalError, "no tensor type for binary columns");
}

constexpr uint64_t kImageStream = 0x696d616765ULL;  // "image"

at::Tensor EmptyTensor(const CollateSpec& spec, at::IntArrayRef shape, at::ScalarType type) {
  if (spec.memory != nullptr && !spec.pinned) return spec.memory->Empty(shape, type);
  return at::empty(shape, at::TensorOptions().pinned_memory(spec.pinned).dtype(type));
}

// Where one sample of the batch lives: its unit (held by the batch) and its row inside it.
struct RowRef {
  const UnitData* data = nullptr;
  uint64_t local = 0;
  size_t unit = 0;
};

template <typename T>
void FillAs(uint8_t* dst, double value, int64_t count) {
  const T v = static_cast<T>(value);
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
}

// Writes `count` elements of `type`, each `value` converted to the type.
void FillElements(uint8_t* dst, ElementType type, double value, int64_t count) {
  switch (type) {
    case ElementType::kBool: return FillAs<uint8_t>(dst, value != 0 ? 1 : 0, count);
    case ElementType::kUInt8: return FillAs<uint8_t>(dst, value, count);
    case ElementType::kInt8: return FillAs<int8_t>(dst, value, count);
    case ElementType::kInt16: return FillAs<int16_t>(dst, value, count);
    case ElementType::kInt32: return FillAs<int32_t>(dst, value, count);
    case ElementType::kInt64: return FillAs<int64_t>(dst, value, count);
    case ElementType::kFloat32: return FillAs<float>(dst, value, count);
    case ElementType::kFloat64: return FillAs<double>(dst, value, count);
    case ElementType::kBinary: break;
  }
}

// Start of a fixed-width row in a chunk without list offsets (contiguous rows, or views).
inline const uint8_t* RowStart(const ColumnChunk& chunk, uint64_t local, size_t row_bytes) {
  return chunk.views != nullptr ? reinterpret_cast<const uint8_t*>(chunk.views[local].data())
                                : chunk.data + local * row_bytes;
}

// Prefetches the cache lines of a row (at most its first 4 KB: the hardware prefetcher follows longer rows itself).
// `locality` as __builtin_prefetch's: 3 = into L1, 2 = into L2.
template <int kLocality>
inline void PrefetchRow(const uint8_t* row, size_t row_bytes) {
  const size_t end = std::min<size_t>(row_bytes, 4096);
  for (size_t offset = 0; offset < end; offset += 64) __builtin_prefetch(row + offset, 0, kLocality);
}

// Copies every sample's row of `row_bytes` bytes (N when N > 0): no nulls, no offsets (the common case, kept
// branch-light). The rows of a shuffled batch are scattered over the table, so each one is a trip to memory. Every
// line of a row is prefetched in two stages: into L2 kFar samples ahead, then into L1 kNear samples ahead. Gathering
// 60,000 rows of 784 bytes in random order from a 47 MB table, in batches of 100: 3.8 ms, against 8.9 ms without
// prefetching and 11 ms prefetching only a row's first two lines 4 samples ahead. Rows of 8 bytes or less (labels,
// scalars) sit in few lines of a small table: one prefetch of their line suffices.
template <size_t N>
void GatherRows(const std::vector<RowRef>& refs, size_t column, size_t row_bytes, uint8_t* dst) {
  constexpr size_t kFar = 12, kNear = 4;
  if constexpr (N > 0) row_bytes = N;
  const size_t n = refs.size();
  const auto row = [&](size_t i) { return RowStart(refs[i].data->columns[column], refs[i].local, row_bytes); };
  for (size_t i = 0; i < n; ++i) {
    if constexpr (N > 0 && N <= 8) {
      if (i + kNear < n) __builtin_prefetch(row(i + kNear));
    } else {
      if (i + kFar < n) PrefetchRow<2>(row(i + kFar), row_bytes);
      if (i + kNear < n) PrefetchRow<3>(row(i + kNear), row_bytes);
    }
    std::memcpy(dst + i * row_bytes, row(i), row_bytes);
  }
}

void GatherRows(const std::vector<RowRef>& refs, size_t column, size_t row_bytes, uint8_t* dst) {
  switch (row_bytes) {
    case 1: return GatherRows<1>(refs, column, row_bytes, dst);
    case 2: return GatherRows<2>(refs, column, row_bytes, dst);
    case 4: return GatherRows<4>(refs, column, row_bytes, dst);
    case 8: return GatherRows<8>(refs, column, row_bytes, dst);
    default: return GatherRows<0>(refs, column, row_bytes, dst);
  }
}

// The row references of the batch being collated on this thread, reused from batch to batch: a new vector per batch
// is a request of a few KB, which glibc serves only after consolidating its fast bins, every time.
std::vector<RowRef>& ThreadRowRefs() {
  thread_local std::vector<RowRef> refs;
  return refs;
}

// Row references a thread keeps between batches (1.5 MB); an unusually large batch's are released after it.
constexpr size_t kKeptRowRefs = 65536;

bool Dense(const ColumnChunk& chunk) {
  return chunk.validity == nullptr && chunk.offsets == nullptr && chunk.element_validity == nullptr;
}

class Collator {
 public:
  Collator(const CollateSpec& spec, const std::vector<uint64_t>& ids, uint64_t epoch, Batch* out)
      : spec_(spec), columns_(spec.source->columns()), ids_(ids), epoch_(epoch), out_(*out),
        batch_(static_cast<int64_t>(ids.size())), refs_(ThreadRowRefs()) {}
  ~Collator() {
    if (refs_.capacity() > kKeptRowRefs) std::vector<RowRef>().swap(refs_);
  }
  Collator(const Collator&) = delete;
  Collator& operator=(const Collator&) = delete;

  // Resolves every sample to its unit, fetching each unit the batch touches once. Shuffled samples come from a
  // different unit than the one before nearly every time, so the unit's held data is found through a small
  // direct-mapped table (a batch touches few units; a collision only costs a scan of held_) rather than by a search
  // whose branches a shuffled batch mispredicts.
  void Resolve(UnitCache& cache) {
    refs_.resize(ids_.size());
    const std::vector<uint64_t>& starts = spec_.units.starts();
    struct Slot {
      size_t unit = SIZE_MAX;
      const UnitData* data = nullptr;
    };
    std::array<Slot, 64> slots;
    for (size_t i = 0; i < ids_.size(); ++i) {
      const uint64_t row = ids_[i];
      const size_t unit = spec_.units.Find(row);
      Slot& slot = slots[unit % slots.size()];
      if (slot.unit != unit) slot = Slot{unit, Hold(cache, unit)};
      refs_[i] = RowRef{slot.data, row - starts[unit], unit};
    }
  }

  void Column(size_t c) {
    const ColumnPlan& plan = spec_.plans[c];
    if (plan.image != nullptr) return Images(c, *plan.image);
    if (plan.raw_bytes) return columns_[c].is_list ? ListBytes(c, plan) : RawBytes(c, plan);
    if (plan.list != nullptr) return Lists(c, plan);
    Fixed(c, plan);
  }

 private:
  const UnitData* Hold(UnitCache& cache, size_t unit) {
    for (const auto& [u, data] : held_) {
      if (u == unit) return data.get();
    }
    std::shared_ptr<const UnitData> data = cache.Get(unit);
    const std::vector<uint64_t>& starts = spec_.units.starts();
    const uint64_t expected = starts[unit + 1] - starts[unit];
    LAKERUN_CHECK_AS(CorruptDataError, data->rows == expected, spec_.source->DescribeUnit(unit), ": decoded ",
                     data->rows, " rows, expected ", expected);
    held_.emplace_back(unit, std::move(data));
    return held_.back().second.get();
  }

  // "part-0.parquet row group 3 column 'x' table row 17" for messages.
  std::string Where(size_t c, size_t i) const {
    return StrCat(spec_.source->DescribeUnit(refs_[i].unit), " column '", columns_[c].name, "' table row ", ids_[i]);
  }

  const NullPolicy& RequireNullPolicy(const ColumnPlan& plan, size_t c, size_t i, const char* what) const {
    LAKERUN_CHECK(plan.nulls != nullptr, Where(c, i), ": ", what, " is null and the column has no null policy; set "
                  "LoaderOptions::nulls[\"", columns_[c].name, "\"] (fill value and a \"", columns_[c].name,
                  kValidSuffix, "\" mask)");
    return *plan.nulls;
  }

  at::Tensor Empty(std::vector<int64_t> shape, at::ScalarType type) const { return EmptyTensor(spec_, shape, type); }

  // A ".valid" mask when the column's null policy asks for one, else nullptr.
  uint8_t* ValidMask(size_t c, const ColumnPlan& plan) {
    if (plan.nulls == nullptr || !plan.nulls->emit_mask) return nullptr;
    at::Tensor mask = Empty({batch_}, at::kBool);
    uint8_t* p = static_cast<uint8_t*>(mask.data_ptr());
    std::memset(p, 1, static_cast<size_t>(batch_));
    out_.tensors.emplace(columns_[c].name + kValidSuffix, std::move(mask));
    return p;
  }

  // Fixed-width values: scalars, FIXED_LEN_BYTE_ARRAY, lists of the column's fixed length.
  void Fixed(size_t c, const ColumnPlan& plan) {
    const ColumnInfo& info = columns_[c];
    std::vector<int64_t> shape{batch_};
    shape.insert(shape.end(), info.shape.begin(), info.shape.end());
    at::Tensor tensor = Empty(shape, ToScalarType(info.type));
    uint8_t* dst = static_cast<uint8_t*>(tensor.data_ptr());
    const size_t row_bytes = info.row_bytes();
    uint8_t* valid = ValidMask(c, plan);
    bool dense = true;
    for (const auto& [unit, data] : held_) dense = dense && Dense(data->columns[c]);
    if (dense) {
      GatherRows(refs_, c, row_bytes, dst);
    } else {
      const int64_t per_row = info.elements_per_row();
      const size_t element = ElementSize(info.type);
      for (size_t i = 0; i < refs_.size(); ++i) {
        const RowRef& r = refs_[i];
        const ColumnChunk& chunk = r.data->columns[c];
        uint8_t* row = dst + i * row_bytes;
        if (chunk.validity != nullptr && !chunk.validity[r.local]) {
          const NullPolicy& nulls = RequireNullPolicy(plan, c, i, "the value");
          FillElements(row, info.type, nulls.fill_value, per_row);
          if (valid) valid[i] = 0;
          continue;
        }
        if (chunk.views != nullptr) {
          std::memcpy(row, chunk.views[r.local].data(), row_bytes);
          continue;
        }
        uint64_t first = r.local * static_cast<uint64_t>(per_row);  // first element of the row in chunk.data
        if (chunk.offsets != nullptr) {
          first = static_cast<uint64_t>(chunk.offsets[r.local]);
          const int64_t length = chunk.offsets[r.local + 1] - chunk.offsets[r.local];
          LAKERUN_CHECK(length == per_row, Where(c, i), ": list of ", length / info.values_per_item(),
                        " elements, but the column's fixed length is ", per_row / info.values_per_item(),
                        "; set LoaderOptions::lists[\"", info.name, "\"] to pad variable-length lists to [B, L] "
                        "(or lay them out flat) with \"", info.name, kLengthsSuffix, "\"");
        }
        std::memcpy(row, chunk.data + first * element, row_bytes);
        if (chunk.element_validity == nullptr) continue;
        for (int64_t k = 0; k < per_row; ++k) {
          if (chunk.element_validity[first + k]) continue;
          const NullPolicy& nulls = RequireNullPolicy(plan, c, i, "a list element");
          FillElements(row + k * element, info.type, nulls.fill_value, 1);
        }
      }
    }
    out_.tensors.emplace(info.name, std::move(tensor));
  }

  // Variable-length lists: [B, L, inner...] padded or [E, inner...] flat, plus lengths. Offsets and lengths in the
  // chunks count values; an element (item) of a nested list is values_per_item() values.
  void Lists(size_t c, const ColumnPlan& plan) {
    const ColumnInfo& info = columns_[c];
    const ListPolicy& policy = *plan.list;
    const int64_t fixed = info.elements_per_row();
    const int64_t item = info.values_per_item();
    const size_t item_bytes = ElementSize(info.type) * static_cast<size_t>(item);
    at::Tensor lengths_tensor = Empty({batch_}, at::kLong);
    int64_t* lengths = lengths_tensor.data_ptr<int64_t>();  // in items
    std::vector<int64_t> firsts(refs_.size());                 // in values
    uint8_t* valid = ValidMask(c, plan);
    const bool padded = policy.layout == ListLayout::kPadded;
    int64_t longest = 0, total = 0;
    for (size_t i = 0; i < refs_.size(); ++i) {
      const RowRef& r = refs_[i];
      const ColumnChunk& chunk = r.data->columns[c];
      if (chunk.validity != nullptr && !chunk.validity[r.local]) {
        RequireNullPolicy(plan, c, i, "the list");
        if (valid) valid[i] = 0;
        lengths[i] = 0;
        continue;
      }
      firsts[i] = chunk.offsets ? chunk.offsets[r.local] : static_cast<int64_t>(r.local) * fixed;
      int64_t length = (chunk.offsets ? chunk.offsets[r.local + 1] - chunk.offsets[r.local] : fixed) / item;
      if (padded && policy.pad_to > 0 && length > policy.pad_to) {
        LAKERUN_CHECK(policy.truncate, Where(c, i), ": list of ", length, " elements is longer than ListPolicy::pad_to ",
                      policy.pad_to, " (set truncate to keep the first ", policy.pad_to, ")");
        length = policy.pad_to;
      }
      lengths[i] = length;
      longest = std::max(longest, length);
      total += length;
    }
    const int64_t width = policy.pad_to > 0 ? policy.pad_to : longest;  // padded: items per row
    std::vector<int64_t> shape = padded ? std::vector<int64_t>{batch_, width} : std::vector<int64_t>{total};
    if (info.list_levels > 1) shape.insert(shape.end(), info.shape.begin() + 1, info.shape.end());
    at::Tensor tensor = Empty(shape, ToScalarType(info.type));
    uint8_t* row = static_cast<uint8_t*>(tensor.data_ptr());
    for (size_t i = 0; i < refs_.size(); ++i) {
      const RowRef& r = refs_[i];
      const ColumnChunk& chunk = r.data->columns[c];
      const size_t size = static_cast<size_t>(lengths[i]) * item_bytes;
      if (size > 0) std::memcpy(row, chunk.data + static_cast<size_t>(firsts[i]) * ElementSize(info.type), size);
      if (padded) FillElements(row + size, info.type, policy.pad_value, (width - lengths[i]) * item);
      if (chunk.element_validity != nullptr) {
        for (int64_t k = 0; k < lengths[i] * item; ++k) {
          if (chunk.element_validity[firsts[i] + k]) continue;
          const NullPolicy& nulls = RequireNullPolicy(plan, c, i, "a list element");
          FillElements(row + k * ElementSize(info.type), info.type, nulls.fill_value, 1);
        }
      }
      row += padded ? static_cast<size_t>(width) * item_bytes : size;
    }
    out_.tensors.emplace(info.name, std::move(tensor));
    out_.tensors.emplace(info.name + kLengthsSuffix, std::move(lengths_tensor));
  }

  // Binary values undecoded: concatenated bytes plus B + 1 offsets.
  void RawBytes(size_t c, const ColumnPlan& plan) {
    const ColumnInfo& info = columns_[c];
    at::Tensor offsets_tensor = Empty({batch_ + 1}, at::kLong);
    int64_t* offsets = offsets_tensor.data_ptr<int64_t>();
    uint8_t* valid = ValidMask(c, plan);
    offsets[0] = 0;
    for (size_t i = 0; i < refs_.size(); ++i) {
      const RowRef& r = refs_[i];
      const ColumnChunk& chunk = r.data->columns[c];
      auto size = static_cast<int64_t>(chunk.RowView(r.local, 0).size());
      if (chunk.validity != nullptr && !chunk.validity[r.local]) {
        RequireNullPolicy(plan, c, i, "the value");
        if (valid) valid[i] = 0;
        size = 0;
      }
      offsets[i + 1] = offsets[i] + size;
    }
    at::Tensor bytes = Empty({offsets[batch_]}, at::kByte);
    uint8_t* dst = static_cast<uint8_t*>(bytes.data_ptr());
    for (size_t i = 0; i < refs_.size(); ++i) {
      const RowRef& r = refs_[i];
      const int64_t size = offsets[i + 1] - offsets[i];
      if (size > 0) std::memcpy(dst + offsets[i], r.data->columns[c].RowView(r.local, 0).data(), size);
    }
    out_.tensors.emplace(info.name, std::move(bytes));
    out_.tensors.emplace(info.name + kOffsetsSuffix, std::move(offsets_tensor));
  }

  // Lists of binary values: every element's bytes concatenated, E + 1 byte offsets of the batch's E elements, and
  // the elements per row (lengths). A null list is empty; a null element is empty bytes.
  void ListBytes(size_t c, const ColumnPlan& plan) {
    const ColumnInfo& info = columns_[c];
    at::Tensor lengths_tensor = Empty({batch_}, at::kLong);
    int64_t* lengths = lengths_tensor.data_ptr<int64_t>();
    std::vector<int64_t> firsts(refs_.size());  // first element of each row in its chunk
    uint8_t* valid = ValidMask(c, plan);
    int64_t elements = 0, bytes = 0;
    for (size_t i = 0; i < refs_.size(); ++i) {
      const RowRef& r = refs_[i];
      const ColumnChunk& chunk = r.data->columns[c];
      firsts[i] = chunk.offsets[r.local];
      lengths[i] = chunk.offsets[r.local + 1] - firsts[i];
      if (chunk.validity != nullptr && !chunk.validity[r.local]) {
        RequireNullPolicy(plan, c, i, "the list");
        if (valid) valid[i] = 0;
        lengths[i] = 0;
      }
      elements += lengths[i];
      bytes += chunk.value_offsets[firsts[i] + lengths[i]] - chunk.value_offsets[firsts[i]];
    }
    at::Tensor data_tensor = Empty({bytes}, at::kByte);
    at::Tensor offsets_tensor = Empty({elements + 1}, at::kLong);
    uint8_t* dst = static_cast<uint8_t*>(data_tensor.data_ptr());
    int64_t* offsets = offsets_tensor.data_ptr<int64_t>();
    uint8_t* element_valid = nullptr;
    if (plan.nulls != nullptr && plan.nulls->emit_mask) {
      at::Tensor mask = Empty({elements}, at::kBool);
      element_valid = static_cast<uint8_t*>(mask.data_ptr());
      std::memset(element_valid, 1, static_cast<size_t>(elements));
      out_.tensors.emplace(info.name + kElementValidSuffix, std::move(mask));
    }
    offsets[0] = 0;
    int64_t e = 0;  // the batch's element index of the row's first element
    for (size_t i = 0; i < refs_.size(); ++i) {
      const ColumnChunk& chunk = refs_[i].data->columns[c];
      const int64_t* from = chunk.value_offsets + firsts[i];
      const int64_t size = from[lengths[i]] - from[0];
      if (size > 0) std::memcpy(dst + offsets[e], chunk.data + from[0], static_cast<size_t>(size));
      const int64_t shift = offsets[e] - from[0];
      for (int64_t k = 0; k < lengths[i]; ++k) offsets[e + k + 1] = from[k + 1] + shift;
      if (chunk.element_validity != nullptr) {
        for (int64_t k = 0; k < lengths[i]; ++k) {
          if (chunk.element_validity[firsts[i] + k]) continue;
          RequireNullPolicy(plan, c, i, "a list element");
          if (element_valid) element_valid[e + k] = 0;
        }
      }
      e += lengths[i];
    }
    out_.tensors.emplace(info.name, std::move(data_tensor));
    out_.tensors.emplace(info.name + kOffsetsSuffix, std::move(offsets_tensor));
    out_.tensors.emplace(info.name + kLengthsSuffix, std::move(lengths_tensor));
  }

  void Images(size_t c, const ImageOptions& opts) {
    const ColumnInfo& info = columns_[c];
    at::Tensor tensor;
    uint8_t* dst = nullptr;
    size_t row_bytes = 0;
    std::pair<int, int> size{0, 0};
    int min_side = opts.resize;
    if (min_side == 0 && opts.crop_height > 0) min_side = std::max(opts.crop_height, opts.crop_width);
    thread_local DecodedImage image;  // pixels reused from image to image
    for (size_t i = 0; i < refs_.size(); ++i) {
      const RowRef& r = refs_[i];
      const ColumnChunk& chunk = r.data->columns[c];
      LAKERUN_CHECK_AS(NotImplemented, chunk.validity == nullptr || chunk.validity[r.local], Where(c, i),
                       ": the image is null; image columns cannot hold nulls");
      const std::string_view bytes = chunk.RowView(r.local, 0);
      try {
        DecodeImage(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), opts.channels, min_side, "image",
                    &image, opts.max_pixels);
      } catch (...) {
        RethrowWithContext(StrCat(spec_.source->DescribeUnit(r.unit), " column '", info.name, "' row ", ids_[i],
                                  ": "));
      }
      int h, w;
      OutputSize(opts, image.height, image.width, &h, &w);
      if (!tensor.defined()) {
        tensor = Empty({batch_, opts.channels, h, w}, opts.to_float ? at::kFloat : at::kByte);
        dst = static_cast<uint8_t*>(tensor.data_ptr());
        size = {h, w};
        row_bytes = static_cast<size_t>(opts.channels) * h * w * (opts.to_float ? sizeof(float) : 1);
      }
      LAKERUN_CHECK_AS(CorruptDataError, size == std::make_pair(h, w), spec_.source->DescribeUnit(r.unit),
                       " column '", info.name, "' row ", ids_[i], ": image becomes ", h, "x", w,
                       " but the batch holds ", size.first, "x", size.second,
                       " images; set crop_height and crop_width to make sizes equal");
      const uint64_t random = CounterRandom(spec_.seed, epoch_, kImageStream, ids_[i]);
      TransformImage(image, opts, random, h, w, dst + i * row_bytes);
    }
    if (!tensor.defined()) {  // an empty batch
      tensor = Empty({0, opts.channels, opts.crop_height, opts.crop_width}, opts.to_float ? at::kFloat : at::kByte);
    }
    out_.tensors.emplace(info.name, std::move(tensor));
  }

  const CollateSpec& spec_;
  const std::vector<ColumnInfo>& columns_;
  const std::vector<uint64_t>& ids_;
  const uint64_t epoch_;
  Batch& out_;
  const int64_t batch_;
  std::vector<RowRef>& refs_;  // the thread's (see ThreadRowRefs)
  std::vector<std::pair<size_t, std::shared_ptr<const UnitData>>> held_;  // units this batch reads, fetched once
};

}  // namespace

Batch Collate(const CollateSpec& spec, UnitCache& cache, const std::vector<uint64_t>& ids, uint64_t epoch) {
  Batch out;
  const auto batch = static_cast<int64_t>(ids.size());
  out.sample_ids = EmptyTensor(spec, {batch}, at::kLong);
  std::memcpy(out.sample_ids.data_ptr<int64_t>(), ids.data(), ids.size() * sizeof(int64_t));
  Collator collator(spec, ids, epoch, &out);
  collator.Resolve(cache);
  for (size_t c = 0; c < spec.source->columns().size(); ++c) collator.Column(c);
  return out;
}

}  // namespace lakerun::data
