#include "lakerun/format/parquet/column_data.h"

#include <algorithm>
#include <new>

#include "lakerun/base/error.h"

namespace lakerun::parquet {
namespace {

// Buffers of at least this many bytes are aligned to, and advised as, transparent huge pages.
constexpr size_t kHugePageThreshold = size_t{4} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

Buffer& Buffer::operator=(const Buffer& o) {
  if (this != &o) {
    Resize(0);
    Append(o.data_, o.size_);
  }
  return *this;
}

Buffer::Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
  o.data_ = nullptr;
  o.size_ = o.capacity_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  return *this;
}

void Buffer::Reserve(size_t capacity) {
  if (capacity <= capacity_) return;
  // 64 bytes of slack past the end let word-at-a-time decoders overrun safely.
  size_t bytes = (capacity + 64 + 63) / 64 * 64;
  size_t align = 64;
  if (bytes >= kHugePageThreshold) {
    align = kHugePage;
    bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  }
  void* p = std::aligned_alloc(align, bytes);
  if (p == nullptr) throw std::bad_alloc();
  // No MADV_HUGEPAGE: with Debian's default `defrag=madvise` every fault in an advised region may compact memory
  // synchronously, and a loader filling fresh buffers (its cache of decoded row groups) ran its cold epoch at half
  // speed (415-649k vs 845k-1.16M samples/s, 1 thread); scans that reuse their buffers gained nothing measurable
  // from it. The 2 MiB alignment stays, so where transparent huge pages are `always` big buffers can still get them.
  if (size_) std::memcpy(p, data_, size_);
  std::free(data_);
  data_ = static_cast<uint8_t*>(p);
  capacity_ = capacity;
}

void Buffer::Resize(size_t new_size) {
  if (new_size > capacity_) Reserve(std::max(new_size, capacity_ + capacity_ / 2));
  size_ = new_size;
}

void Buffer::Append(const void* bytes, size_t n) {
  if (n == 0) return;
  size_t old = size_;
  Resize(size_ + n);
  std::memcpy(data_ + old, bytes, n);
}

void Buffer::ShrinkToFit() {
  if (capacity_ == size_) return;
  Buffer copy;
  copy.Reserve(size_);
  copy.Append(data_, size_);
  *this = std::move(copy);
}

ColumnData ColumnData::FromRaw(PhysicalType type, int32_t type_length, const void* data, size_t count) {
  ColumnData c(type, type_length);
  LAKERUN_CHECK(type != PhysicalType::kByteArray, "ColumnData::FromRaw needs a fixed-width type");
  int width = FixedWidth(type, type_length);
  LAKERUN_CHECK(width > 0, "ColumnData::FromRaw: type_length must be positive for FIXED_LEN_BYTE_ARRAY");
  c.values_.Append(data, count * static_cast<size_t>(width));
  c.num_values_ = static_cast<int64_t>(count);
  return c;
}

ColumnData ColumnData::Booleans(const std::vector<bool>& values) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  return FromRaw(PhysicalType::kBoolean, 0, bytes.data(), bytes.size());
}
ColumnData ColumnData::Int32s(const std::vector<int32_t>& v) {
  return FromRaw(PhysicalType::kInt32, 0, v.data(), v.size());
}
ColumnData ColumnData::Int64s(const std::vector<int64_t>& v) {
  return FromRaw(PhysicalType::kInt64, 0, v.data(), v.size());
}
ColumnData ColumnData::Floats(const std::vector<float>& v) {
  return FromRaw(PhysicalType::kFloat, 0, v.data(), v.size());
}
ColumnData ColumnData::Doubles(const std::vector<double>& v) {
  return FromRaw(PhysicalType::kDouble, 0, v.data(), v.size());
}

ColumnData ColumnData::ByteArrays(const std::vector<std::string>& values) {
  ColumnData c(PhysicalType::kByteArray, 0);
  c.offsets_.reserve(values.size() + 1);
  c.offsets_.push_back(0);
  for (const auto& v : values) {
    c.values_.Append(v.data(), v.size());
    c.offsets_.push_back(static_cast<int64_t>(c.values_.size()));
  }
  c.num_values_ = static_cast<int64_t>(values.size());
  return c;
}

ColumnData ColumnData::FixedBytes(PhysicalType type, int32_t width, const std::vector<std::string>& values) {
  if (type == PhysicalType::kInt96) width = 12;
  LAKERUN_CHECK(width > 0, "ColumnData::FixedBytes: width must be positive, got ", width);
  ColumnData c(type, type == PhysicalType::kInt96 ? 0 : width);
  for (size_t i = 0; i < values.size(); ++i) {
    LAKERUN_CHECK(values[i].size() == static_cast<size_t>(width), "ColumnData::FixedBytes: value ", i, " has ",
                  values[i].size(), " bytes, expected ", width);
    c.values_.Append(values[i].data(), values[i].size());
  }
  c.num_values_ = static_cast<int64_t>(values.size());
  return c;
}

int64_t ColumnData::num_slots() const {
  if (!def_levels_.empty() || max_def_level_ > 0) return static_cast<int64_t>(def_levels_.size());
  if (!rep_levels_.empty() || max_rep_level_ > 0) return static_cast<int64_t>(rep_levels_.size());
  return num_values_;
}

std::string_view ColumnData::bytes_at(int64_t i) const {
  LAKERUN_CHECK(i >= 0 && i < num_values_, "value index ", i, " out of range [0, ", num_values_, ")");
  if (dictionary_) return dictionary_->bytes_at(dictionary_indices()[i]);
  if (has_views_) return views()[i];
  if (type_ == PhysicalType::kByteArray) {
    return std::string_view(reinterpret_cast<const char*>(values_.data()) + offsets_[i],
                            static_cast<size_t>(offsets_[i + 1] - offsets_[i]));
  }
  size_t w = static_cast<size_t>(value_width());
  return std::string_view(reinterpret_cast<const char*>(values_.data()) + i * w, w);
}

void ColumnData::ClearForms() {
  views_.Clear();
  indices_.Clear();
  dictionary_.reset();
  owners_.clear();
  has_views_ = false;
}

void ColumnData::Materialize() {
  if (!has_views_ && !dictionary_) return;
  const size_t n = static_cast<size_t>(num_values_);
  Buffer bytes;
  std::vector<int64_t> offsets;
  if (type_ == PhysicalType::kByteArray) {
    offsets.resize(n + 1);
    offsets[0] = 0;
    for (size_t i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + static_cast<int64_t>(bytes_at(i).size());
    bytes.Resize(static_cast<size_t>(offsets[n]));
    for (size_t i = 0; i < n; ++i) {
      const std::string_view v = bytes_at(i);
      if (!v.empty()) std::memcpy(bytes.data() + offsets[i], v.data(), v.size());
    }
  } else {
    const size_t w = static_cast<size_t>(value_width());
    bytes.Resize(n * w);
    for (size_t i = 0; i < n; ++i) std::memcpy(bytes.data() + i * w, bytes_at(i).data(), w);
  }
  ClearForms();
  values_ = std::move(bytes);
  offsets_ = std::move(offsets);
}

ColumnData& ColumnData::set_def_levels(std::vector<int16_t> levels, int16_t max_def_level) {
  def_levels_ = std::move(levels);
  max_def_level_ = max_def_level;
  return *this;
}

ColumnData& ColumnData::set_rep_levels(std::vector<int16_t> levels, int16_t max_rep_level) {
  rep_levels_ = std::move(levels);
  max_rep_level_ = max_rep_level;
  return *this;
}

std::vector<uint8_t> ColumnData::Validity() const {
  if (max_def_level_ == 0) return std::vector<uint8_t>(static_cast<size_t>(num_slots()), 1);
  std::vector<uint8_t> out(def_levels_.size());
  for (size_t i = 0; i < def_levels_.size(); ++i) out[i] = def_levels_[i] == max_def_level_;
  return out;
}

Buffer ColumnData::Spaced() const {
  LAKERUN_CHECK(type_ != PhysicalType::kByteArray, "ColumnData::Spaced needs a fixed-width type");
  LAKERUN_CHECK(!has_views_ && !dictionary_, "ColumnData::Spaced needs the copied layout (call Materialize())");
  const size_t w = static_cast<size_t>(value_width());
  const int64_t slots = num_slots();
  Buffer out(static_cast<size_t>(slots) * w);
  if (max_def_level_ == 0) {
    std::memcpy(out.data(), values_.data(), static_cast<size_t>(slots) * w);
    return out;
  }
  int64_t v = 0;
  for (int64_t i = 0; i < slots; ++i) {
    if (def_levels_[i] == max_def_level_ && v < num_values_) {
      std::memcpy(out.data() + i * w, values_.data() + v * w, w);
      ++v;
    } else {
      std::memset(out.data() + i * w, 0, w);
    }
  }
  return out;
}

std::optional<int64_t> ColumnData::FixedListLength() const {
  if (max_rep_level_ != 1 || rep_levels_.empty()) return std::nullopt;
  if (max_def_level_ > 0 && def_levels_.size() != rep_levels_.size()) return std::nullopt;
  if (max_def_level_ > 0) {
    for (int16_t d : def_levels_) {
      if (d != max_def_level_) return std::nullopt;
    }
  }
  // Every slot is a value now; rows start where rep == 0.
  const int64_t n = static_cast<int64_t>(rep_levels_.size());
  int64_t length = -1, current = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (rep_levels_[i] == 0 && i > 0) {
      if (length < 0) {
        length = current;
      } else if (current != length) {
        return std::nullopt;
      }
      current = 0;
    }
    ++current;
  }
  if (length < 0) length = current;
  if (current != length || num_values_ != n) return std::nullopt;
  return length;
}

}  // namespace lakerun::parquet
