// Decoded data of one column chunk (or the input of one column for the writer), in contiguous typed buffers.
//
// Values are dense: only non-null leaf values are stored, in order (nulls and empty lists exist only in the levels).
//   - BOOLEAN: one uint8_t (0/1) per value.
//   - INT32/INT64/FLOAT/DOUBLE: native little-endian arrays (values<int32_t>() ...).
//   - INT96 and FIXED_LEN_BYTE_ARRAY: `type_length` (12 for INT96) bytes per value, back to back.
//   - BYTE_ARRAY: `offsets` (num_values() + 1 entries, offsets[0] == 0) into `bytes`.
// Two further forms exist for BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY and INT96 ("byte values"), produced only when a
// reader asks for them (ColumnReadOptions in file_reader.h):
//   - views (has_views()): views()[i] is value i, a std::string_view into decompressed page memory (or the chunk's
//     bytes) that this ColumnData keeps alive through shared ownership; value_buffer() and offsets() are empty.
//     Copies of the ColumnData share that memory, so views stay valid as long as any copy lives.
//   - dictionary (has_dictionary()): dictionary_indices()[i] (num_values() entries) indexes dictionary(), a
//     ColumnData of the same type holding the chunk's dictionary page (itself copied or views).
// bytes_at() reads every form; Materialize() turns views and dictionary forms into the copied layout above.
// Levels: def_levels has one entry per level slot when max_def_level > 0, rep_levels when max_rep_level > 0;
// otherwise they are empty and every slot holds a value. num_slots() counts slots (= rows for flat columns).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lakerun/format/parquet/types.h"

namespace lakerun::parquet {

/// A growable, 64-byte aligned byte buffer whose new bytes are left uninitialised (decoders overwrite them), unlike
/// std::vector's zero-fill.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t size) { Resize(size); }
  Buffer(const Buffer& o) { *this = o; }
  Buffer& operator=(const Buffer& o);
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer() { std::free(data_); }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  /// Keeps the first min(size, new_size) bytes.
  void Resize(size_t new_size);
  void Reserve(size_t capacity);
  void Clear() { size_ = 0; }
  void Append(const void* bytes, size_t n);
  /// Releases memory beyond size().
  void ShrinkToFit();

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

class ColumnData {
 public:
  ColumnData() = default;
  ColumnData(PhysicalType type, int32_t type_length) : type_(type), type_length_(type_length) {}

  // Builders for writer input (and tests). Levels are added with set_def_levels / set_rep_levels.
  static ColumnData Booleans(const std::vector<bool>& values);
  static ColumnData Int32s(const std::vector<int32_t>& values);
  static ColumnData Int64s(const std::vector<int64_t>& values);
  static ColumnData Floats(const std::vector<float>& values);
  static ColumnData Doubles(const std::vector<double>& values);
  static ColumnData ByteArrays(const std::vector<std::string>& values);
  /// FIXED_LEN_BYTE_ARRAY (or INT96 with width 12): every value must be `width` bytes long.
  static ColumnData FixedBytes(PhysicalType type, int32_t width, const std::vector<std::string>& values);
  /// Fixed-width values from raw memory: `count` values of FixedWidth(type, type_length) bytes.
  static ColumnData FromRaw(PhysicalType type, int32_t type_length, const void* data, size_t count);

  PhysicalType type() const { return type_; }
  int32_t type_length() const { return type_length_; }
  /// Bytes per value for fixed-width types; 0 for BYTE_ARRAY.
  int value_width() const { return FixedWidth(type_, type_length_); }

  /// Number of stored (non-null) values.
  int64_t num_values() const { return num_values_; }
  /// Number of level slots (def_levels.size() when present, else rep_levels.size(), else num_values()).
  int64_t num_slots() const;
  /// Row of the column chunk that the first slot belongs to: 0, unless a read of a row range
  /// (ColumnReadOptions::row_begin) skipped the pages before it.
  int64_t first_row() const { return first_row_; }
  void set_first_row(int64_t row) { first_row_ = row; }

  /// Typed view of fixed-width values. T must match the width (e.g. float for FLOAT, uint8_t for BOOLEAN).
  template <typename T>
  const T* values() const {
    return reinterpret_cast<const T*>(values_.data());
  }
  template <typename T>
  T* mutable_values() {
    return reinterpret_cast<T*>(values_.data());
  }
  /// Value i of a BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY or INT96 column, in any form (copied, views, dictionary).
  std::string_view bytes_at(int64_t i) const;

  /// Views form: num_values() views into memory this ColumnData keeps alive (see the file comment).
  bool has_views() const { return has_views_; }
  const std::string_view* views() const { return reinterpret_cast<const std::string_view*>(views_.data()); }
  /// Dictionary form: num_values() indices into dictionary(), each < dictionary().num_values().
  bool has_dictionary() const { return dictionary_ != nullptr; }
  const uint32_t* dictionary_indices() const { return reinterpret_cast<const uint32_t*>(indices_.data()); }
  /// Requires has_dictionary().
  const ColumnData& dictionary() const { return *dictionary_; }
  const std::shared_ptr<const ColumnData>& shared_dictionary() const { return dictionary_; }
  /// Converts the views and dictionary forms into the copied layout (offsets + value_buffer() for BYTE_ARRAY,
  /// width-strided bytes otherwise) and releases the page memory; no-op for a copied column.
  void Materialize();
  const Buffer& value_buffer() const { return values_; }
  Buffer& mutable_value_buffer() { return values_; }
  /// BYTE_ARRAY only: num_values() + 1 offsets into value_buffer().
  const std::vector<int64_t>& offsets() const { return offsets_; }
  std::vector<int64_t>& mutable_offsets() { return offsets_; }

  const std::vector<int16_t>& def_levels() const { return def_levels_; }
  const std::vector<int16_t>& rep_levels() const { return rep_levels_; }
  std::vector<int16_t>& mutable_def_levels() { return def_levels_; }
  std::vector<int16_t>& mutable_rep_levels() { return rep_levels_; }
  ColumnData& set_def_levels(std::vector<int16_t> levels, int16_t max_def_level);
  ColumnData& set_rep_levels(std::vector<int16_t> levels, int16_t max_rep_level);
  int16_t max_def_level() const { return max_def_level_; }
  int16_t max_rep_level() const { return max_rep_level_; }

  /// One byte per slot: 1 where the slot holds a value (def level == max), 0 where it is null or an empty/null
  /// list. For flat columns slot i is row i. All ones when there are no definition levels.
  std::vector<uint8_t> Validity() const;
  /// For nullable flat columns: values spread to one per slot (fixed-width types only), nulls zero-filled.
  Buffer Spaced() const;

  /// Fast-path check for list columns: when every row is a non-null list of the same length D with non-null
  /// elements (one repetition level, no nested lists), returns D; the value buffer is then a row-major
  /// [num_rows, D] array. std::nullopt otherwise (including D == 0 ambiguity with no values).
  std::optional<int64_t> FixedListLength() const;

  /// Internal: used by decoders to append values.
  void set_num_values(int64_t n) { num_values_ = n; }
  /// Internal (decoders): the views form's storage (std::string_view entries) and whether it is in use.
  Buffer& mutable_view_buffer() { return views_; }
  void set_has_views(bool has_views) { has_views_ = has_views; }
  /// Internal (decoders): the dictionary form's indices (uint32_t entries) and dictionary (nullptr: not that form).
  Buffer& mutable_index_buffer() { return indices_; }
  void set_dictionary(std::shared_ptr<const ColumnData> dictionary) { dictionary_ = std::move(dictionary); }
  /// Internal (decoders): keeps `memory` (a Buffer, a file mapping) alive as long as this ColumnData or a copy of it
  /// lives (backs views).
  void AddOwner(std::shared_ptr<const void> memory) { owners_.push_back(std::move(memory)); }
  /// Internal (decoders): drops views, indices, dictionary and owned page memory (capacity of the buffers kept).
  void ClearForms();
  void set_type(PhysicalType type, int32_t type_length) {
    type_ = type;
    type_length_ = type_length;
  }

 private:
  PhysicalType type_ = PhysicalType::kInt32;
  int32_t type_length_ = 0;
  int64_t num_values_ = 0;
  Buffer values_;
  std::vector<int64_t> offsets_;
  std::vector<int16_t> def_levels_;
  std::vector<int16_t> rep_levels_;
  Buffer views_;    // std::string_view per value when has_views_
  Buffer indices_;  // uint32_t per value when dictionary_ is set
  std::shared_ptr<const ColumnData> dictionary_;
  std::vector<std::shared_ptr<const void>> owners_;  // page memory that views_ (or the dictionary's) point into
  bool has_views_ = false;
  int64_t first_row_ = 0;
  int16_t max_def_level_ = 0;
  int16_t max_rep_level_ = 0;
};

}  // namespace lakerun::parquet
