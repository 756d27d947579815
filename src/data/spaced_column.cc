#include "spaced_column.h"

#include <algorithm>
#include <cstring>

#include "lakerun/base/error.h"

namespace lakerun::data {

namespace pq = lakerun::parquet;

namespace {

// `count` dense values of T to one slot per row (zero where validity is 0), without a branch per row: the load
// index is clamped to the last value, so trailing null rows never read past the values.
template <typename T>
void Spread(const uint8_t* dense, int64_t count, const uint8_t* validity, uint64_t rows, uint8_t* out) {
  T* dst = reinterpret_cast<T*>(out);
  if (count == 0) {
    std::memset(out, 0, rows * sizeof(T));
    return;
  }
  const T* src = reinterpret_cast<const T*>(dense);
  const uint64_t last = static_cast<uint64_t>(count) - 1;
  uint64_t v = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    const T value = src[v < last ? v : last];
    dst[r] = validity[r] ? value : T{0};
    v += validity[r];
  }
}

}  // namespace

ColumnChunk SpacedColumn::View(const std::shared_ptr<const SpacedColumn>& column) {
  ColumnChunk chunk;
  chunk.data = column->values;
  chunk.size_bytes = column->values_size;
  chunk.offsets = column->offsets.empty() ? nullptr : column->offsets.data();
  chunk.validity = column->validity.empty() ? nullptr : column->validity.data();
  chunk.element_validity = column->element_validity.empty() ? nullptr : column->element_validity.data();
  chunk.value_offsets = column->value_offsets.empty() ? nullptr : column->value_offsets.data();
  chunk.owner = column;
  return chunk;
}

std::shared_ptr<const SpacedColumn> SpaceFlat(std::shared_ptr<const pq::ColumnData> data, uint64_t rows,
                                              const std::string& where) {
  const std::vector<int16_t>& defs = data->def_levels();
  const int16_t max_def = data->max_def_level();
  LAKERUN_CHECK_AS(CorruptDataError, max_def > 0 && defs.size() == rows, where, ": ", defs.size(),
                   " definition levels for ", rows, " rows");
  auto out = std::make_shared<SpacedColumn>();
  out->validity.resize(rows);
  int64_t present = 0;
  for (uint64_t r = 0; r < rows; ++r) present += out->validity[r] = defs[r] == max_def;
  LAKERUN_CHECK_AS(CorruptDataError, present == data->num_values(), where, ": ", data->num_values(),
                   " values for ", present, " non-null rows");
  if (data->type() == pq::PhysicalType::kByteArray) {
    const std::vector<int64_t>& dense = data->offsets();
    out->offsets.resize(rows + 1);
    int64_t v = 0;
    out->offsets[0] = dense.empty() ? 0 : dense[0];
    for (uint64_t r = 0; r < rows; ++r) {
      if (out->validity[r]) ++v;
      out->offsets[r + 1] = dense.empty() ? 0 : dense[v];
    }
    out->values = data->value_buffer().data();
    out->values_size = data->value_buffer().size();
    out->keep = std::move(data);
    return out;
  }
  const size_t width = static_cast<size_t>(data->value_width());
  out->data.resize(rows * width);
  const uint8_t* src = data->value_buffer().data();
  switch (width) {  // typed copies for the common widths: no call per row
    case 4: Spread<uint32_t>(src, data->num_values(), out->validity.data(), rows, out->data.data()); break;
    case 8: Spread<uint64_t>(src, data->num_values(), out->validity.data(), rows, out->data.data()); break;
    case 1: Spread<uint8_t>(src, data->num_values(), out->validity.data(), rows, out->data.data()); break;
    default:
      for (uint64_t r = 0; r < rows; ++r) {
        if (out->validity[r]) {
          std::memcpy(out->data.data() + r * width, src, width);
          src += width;
        } else {
          std::memset(out->data.data() + r * width, 0, width);
        }
      }
  }
  out->values = out->data.data();
  out->values_size = out->data.size();
  return out;
}

namespace {

// The inner lists (levels 2 and below) of a nested list column, checked against their fixed lengths as the levels
// close them. Level d (1-based) holds open[d] elements so far, -1 when no list of that level is open.
class InnerLists {
 public:
  InnerLists(const std::vector<int64_t>& shape, size_t levels, const std::string& where)
      : shape_(shape), open_(levels + 1, -1), where_(where) {}

  // Closes the open lists of levels deeper than `level`, checking their lengths.
  void CloseBelow(size_t level, size_t row) {
    for (size_t d = open_.size() - 1; d > level && d >= 2; --d) {
      if (open_[d] < 0) continue;
      LAKERUN_CHECK(open_[d] == shape_[d - 1], where_, " row ", row, " of the row group: a list at nesting level ",
                    d, " holds ", open_[d], " elements, but the column's shape ", ShapeText(), " needs ",
                    shape_[d - 1], "; nested lists read as tensors need equal lengths below the outermost level");
      open_[d] = -1;
    }
  }
  void Open(size_t level) { open_[level] = 0; }
  void Add(size_t level) { ++open_[level]; }

 private:
  std::string ShapeText() const {
    std::string text = "[";
    for (size_t i = 0; i < shape_.size(); ++i) text += (i ? ", " : "") + std::to_string(shape_[i]);
    return text + "]";
  }

  const std::vector<int64_t>& shape_;
  std::vector<int64_t> open_;
  const std::string& where_;
};

}  // namespace

std::shared_ptr<const SpacedColumn> SpaceList(std::shared_ptr<const pq::ColumnData> data, uint64_t rows,
                                              const std::vector<int16_t>& list_def_levels, const ColumnInfo& info,
                                              const std::string& where) {
  const std::vector<int64_t>& shape = info.shape;
  const std::vector<int16_t>& reps = data->rep_levels();
  const std::vector<int16_t>& defs = data->def_levels();
  const int16_t max_def = data->max_def_level();
  const size_t levels = list_def_levels.size();
  LAKERUN_CHECK_AS(CorruptDataError, levels > 0 && data->max_rep_level() == static_cast<int16_t>(levels) &&
                   max_def > 0 && defs.size() == reps.size(), where,
                   ": expected one repetition level per value slot of a list column");
  const bool binary = data->type() == pq::PhysicalType::kByteArray;
  LAKERUN_INTERNAL_ASSERT(!binary || (levels == 1 && !data->has_views() && !data->has_dictionary()),
                          "SpaceList needs one level of BYTE_ARRAY values in the copied layout");
  LAKERUN_INTERNAL_ASSERT(levels == 1 || shape.size() == levels, "SpaceList: one dimension per level of lists");
  // BYTE_ARRAY: value v is bytes [dense[v], dense[v + 1]) of the value buffer.
  const std::vector<int64_t>& dense = data->offsets();
  const auto dense_at = [&dense](int64_t v) { return dense.empty() ? 0 : dense[static_cast<size_t>(v)]; };
  const size_t width = static_cast<size_t>(data->value_width());
  auto out = std::make_shared<SpacedColumn>();
  out->offsets.reserve(rows + 1);
  out->validity.reserve(rows);
  out->element_validity.reserve(reps.size());
  out->data.reserve(reps.size() * width);
  if (binary) {
    out->value_offsets.reserve(reps.size() + 1);
    out->value_offsets.push_back(dense_at(0));
  }
  InnerLists inner(shape, levels, where);
  const uint8_t* src = data->value_buffer().data();
  int64_t consumed = 0;
  bool any_null_row = false, any_null_element = false;
  for (size_t i = 0; i < reps.size(); ++i) {
    const int16_t def = defs[i];
    const size_t rep = static_cast<size_t>(reps[i]);
    LAKERUN_CHECK_AS(CorruptDataError, rep <= levels, where, ": repetition level ", rep, " above the column's ",
                     levels);
    if (rep == 0) {
      inner.CloseBelow(0, out->validity.size() - 1);
      out->offsets.push_back(static_cast<int64_t>(out->element_validity.size()));
      const bool valid = def >= list_def_levels[0];
      out->validity.push_back(valid);
      any_null_row = any_null_row || !valid;
    } else {
      LAKERUN_CHECK_AS(CorruptDataError, !out->offsets.empty(), where, ": the first value slot continues a row");
      inner.CloseBelow(rep, out->validity.size() - 1);
    }
    // The slot adds an element to the list of each level from max(rep, 1) down, while the level's list has one;
    // levels below `rep` begin new lists here.
    bool value = true;
    for (size_t d = std::max<size_t>(rep, 1); d <= levels; ++d) {
      if (d >= 2 && d > rep) {
        LAKERUN_CHECK(def >= list_def_levels[d - 1], where, " row ", out->validity.size() - 1,
                      " of the row group: a null list at nesting level ", d, " (only the outermost list, the row's "
                      "own, may be null)");
        inner.Open(d);
      }
      if (def <= list_def_levels[d - 1]) {  // an empty list (or a null row): no element
        value = false;
        break;
      }
      if (d >= 2) inner.Add(d);
    }
    if (!value) continue;
    const bool present = def == max_def;
    out->element_validity.push_back(present);
    any_null_element = any_null_element || !present;
    LAKERUN_CHECK_AS(CorruptDataError, !present || consumed < data->num_values(), where,
                     ": levels describe more than ", data->num_values(), " values");
    consumed += present;
    if (binary) {
      out->value_offsets.push_back(dense_at(consumed));  // a null element: empty
      continue;
    }
    const size_t at = out->data.size();
    out->data.resize(at + width);
    if (present) {
      std::memcpy(out->data.data() + at, src + (consumed - 1) * width, width);
    } else {
      std::memset(out->data.data() + at, 0, width);
    }
  }
  if (!out->validity.empty()) inner.CloseBelow(0, out->validity.size() - 1);
  LAKERUN_CHECK_AS(CorruptDataError, out->validity.size() == rows && consumed == data->num_values(), where, ": ",
                   out->validity.size(), " lists and ", consumed, " values from the levels, expected ", rows,
                   " lists and ", data->num_values(), " values");
  out->offsets.push_back(static_cast<int64_t>(out->element_validity.size()));
  const int64_t fixed_length = info.elements_per_row();
  bool fixed = !any_null_row && !binary;
  for (uint64_t r = 0; fixed && r < rows; ++r) fixed = out->offsets[r + 1] - out->offsets[r] == fixed_length;
  if (fixed) out->offsets.clear();
  if (!any_null_row) out->validity.clear();
  if (!any_null_element) out->element_validity.clear();
  if (binary) {
    out->values = src;
    out->values_size = data->value_buffer().size();
    out->keep = std::move(data);
  } else {
    out->values = out->data.data();
    out->values_size = out->data.size();
  }
  return out;
}

std::optional<std::vector<int64_t>> NestedListShape(const pq::ColumnData& data,
                                                   const std::vector<int16_t>& list_def_levels) {
  const std::vector<int16_t>& reps = data.rep_levels();
  const std::vector<int16_t>& defs = data.def_levels();
  const size_t levels = list_def_levels.size();
  std::vector<int64_t> shape(levels, 0);
  std::vector<int64_t> lists(levels + 1, 0);  // lists of each level begun in the row so far
  for (size_t i = 0; i < reps.size() && i < defs.size(); ++i) {
    const size_t rep = static_cast<size_t>(reps[i]);
    if (rep == 0) {
      if (shape.back() > 0) return shape;  // the previous row reached every level
      std::fill(shape.begin(), shape.end(), 0);
      std::fill(lists.begin(), lists.end(), 0);
    }
    for (size_t d = std::max<size_t>(rep, 1); d <= levels; ++d) {
      if (d >= 2 && d > rep) ++lists[d];  // a new list at level d begins at this slot
      if (defs[i] <= list_def_levels[d - 1]) break;
      if (d == 1 || lists[d] == 1) ++shape[d - 1];  // counts the row's list and the first list of deeper levels
    }
  }
  if (shape.back() > 0) return shape;
  return std::nullopt;
}

}  // namespace lakerun::data
