#include "collate.h"

#include <ATen/Functions.h>
#include <ATen/ops/empty.h>

#include <algorithm>
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

}  // namespace

Batch Collate(const CollateSpec& spec, UnitCache& cache, const std::vector<uint64_t>& ids, uint64_t epoch) {
  const auto& columns = spec.source->columns();
  const int64_t batch = static_cast<int64_t>(ids.size());
  const at::TensorOptions base = at::TensorOptions().pinned_memory(spec.pinned);

  Batch out;
  out.sample_ids = at::empty({batch}, base.dtype(at::kLong));
  int64_t* id_out = out.sample_ids.data_ptr<int64_t>();
  std::vector<std::pair<uint64_t, int64_t>> order(ids.size());
  for (int64_t i = 0; i < batch; ++i) {
    order[i] = {ids[i], i};
    id_out[i] = static_cast<int64_t>(ids[i]);
  }
  std::sort(order.begin(), order.end());

  std::vector<at::Tensor> tensors(columns.size());
  std::vector<uint8_t*> dst(columns.size(), nullptr);
  std::vector<size_t> row_bytes(columns.size(), 0);
  std::vector<std::pair<int, int>> image_size(columns.size(), {0, 0});
  for (size_t c = 0; c < columns.size(); ++c) {
    if (spec.images[c] != nullptr) continue;  // allocated once the first image's size is known
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), columns[c].shape.begin(), columns[c].shape.end());
    tensors[c] = at::empty(shape, base.dtype(ToScalarType(columns[c].type)));
    dst[c] = static_cast<uint8_t*>(tensors[c].data_ptr());
    row_bytes[c] = columns[c].row_bytes();
  }

  size_t unit = 0;
  std::shared_ptr<const UnitData> data;
  for (const auto& [row, slot] : order) {
    if (!data || row >= spec.unit_starts[unit + 1]) {
      unit = static_cast<size_t>(std::upper_bound(spec.unit_starts.begin(), spec.unit_starts.end(), row) -
                                 spec.unit_starts.begin()) - 1;
      data = cache.Get(unit);
      LAKERUN_CHECK_AS(CorruptDataError, data->rows == spec.unit_starts[unit + 1] - spec.unit_starts[unit],
                       spec.source->DescribeUnit(unit), ": decoded ", data->rows, " rows, expected ",
                       spec.unit_starts[unit + 1] - spec.unit_starts[unit]);
    }
    const uint64_t local = row - spec.unit_starts[unit];
    for (size_t c = 0; c < columns.size(); ++c) {
      const ColumnChunk& chunk = data->columns[c];
      if (spec.images[c] == nullptr) {
        std::memcpy(dst[c] + slot * row_bytes[c], chunk.data + local * row_bytes[c], row_bytes[c]);
        continue;
      }
      const ImageOptions& opts = *spec.images[c];
      const int64_t begin = chunk.offsets[local], end = chunk.offsets[local + 1];
      int min_side = opts.resize;
      if (min_side == 0 && opts.crop_height > 0) min_side = std::max(opts.crop_height, opts.crop_width);
      DecodedImage image;
      try {
        image = DecodeImage(chunk.data + begin, static_cast<size_t>(end - begin), opts.channels, min_side, "image");
      } catch (...) {
        RethrowWithContext(StrCat(spec.source->DescribeUnit(unit), " column '", columns[c].name, "' row ", row, ": "));
      }
      int h, w;
      OutputSize(opts, image.height, image.width, &h, &w);
      if (!tensors[c].defined()) {
        tensors[c] = at::empty({batch, opts.channels, h, w}, base.dtype(opts.to_float ? at::kFloat : at::kByte));
        dst[c] = static_cast<uint8_t*>(tensors[c].data_ptr());
        image_size[c] = {h, w};
        row_bytes[c] = static_cast<size_t>(opts.channels) * h * w * (opts.to_float ? sizeof(float) : 1);
      }
      LAKERUN_CHECK_AS(CorruptDataError, image_size[c] == std::make_pair(h, w), spec.source->DescribeUnit(unit),
                       " column '", columns[c].name, "' row ", row, ": image becomes ", h, "x",
                       w, " but the batch holds ", image_size[c].first, "x", image_size[c].second,
                       " images; set crop_height and crop_width to make sizes equal");
      const uint64_t random = CounterRandom(spec.seed, epoch, kImageStream, row);
      TransformImage(image, opts, random, h, w, dst[c] + slot * row_bytes[c]);
    }
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!tensors[c].defined()) {  // an image column of an empty batch
      const ImageOptions& opts = *spec.images[c];
      tensors[c] = at::empty({0, opts.channels, opts.crop_height, opts.crop_width},
                             base.dtype(opts.to_float ? at::kFloat : at::kByte));
    }
    out.tensors.emplace(columns[c].name, std::move(tensors[c]));
  }
  return out;
}

}  // namespace lakerun::data
