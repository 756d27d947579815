#include "table_data.h"

#include <ATen/ATen.h>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/table_source.h"

namespace lakerun::examples {

FashionMnistSources OpenFashionMnistSources(const FashionMnistSourceOptions& options) {
  data::TableOptions table;
  table.columns = {"image", "label"};
  table.rank = options.rank;
  return {data::OpenTable(JoinPath(options.table, "train"), table),
          data::OpenTable(JoinPath(options.table, "test"), table)};
}

data::LoaderOptions FashionMnistLoaderOptions(const FashionMnistLoaderSettings& settings) {
  data::LoaderOptions o;
  o.batch_size = settings.batch_size;
  o.rank = settings.rank;
  o.world_size = settings.world_size;
  o.remainder = data::RemainderPolicy::kPad;
  o.seed = settings.seed;
  o.shuffle.enabled = settings.shuffle;
  // One block per sample and one window over the whole table: a full shuffle, like DistributedSampler's. The
  // tables are small (47 MB decoded), so every row group stays in the loader's cache after the first epoch.
  o.shuffle.block_size = 1;
  o.shuffle.window_blocks = 1u << 20;
  o.num_threads = settings.num_threads;
  o.raw_bytes = {"image"};
  o.transforms.push_back(NormalizeImages(settings.mean, settings.std));
  return o;
}

data::BatchTransform NormalizeImages(double mean, double std) {
  LAKERUN_CHECK(std > 0, "normalization std must be positive, got ", std);
  return [mean, std](data::Batch& batch) {
    auto image = batch.tensors.find("image");
    auto offsets = batch.tensors.find("image.offsets");
    LAKERUN_CHECK(image != batch.tensors.end() && offsets != batch.tensors.end(),
                  "NormalizeImages: the batch needs 'image' as raw bytes (with 'image.offsets')");
    const int64_t n = offsets->second.numel() - 1;
    constexpr int64_t kPixels = kFashionMnistSide * kFashionMnistSide;
    const at::Tensor expected = at::arange(0, (n + 1) * kPixels, kPixels, at::kLong);
    if (!offsets->second.to(at::kLong).equal(expected)) {
      const at::Tensor lengths = offsets->second.slice(0, 1) - offsets->second.slice(0, 0, n);
      const int64_t bad = lengths.ne(kPixels).nonzero().select(1, 0)[0].item<int64_t>();
      LAKERUN_THROW(CorruptDataError, "image of table row ", batch.sample_ids[bad].item<int64_t>(), " holds ",
                    lengths[bad].item<int64_t>(), " bytes, expected ", kPixels, " (28 x 28)");
    }
    image->second = image->second.reshape({n, 1, kFashionMnistSide, kFashionMnistSide})
                        .to(at::kFloat)
                        .div_(255.0)
                        .sub_(mean)
                        .div_(std);
    batch.tensors.erase(offsets);
  };
}

}  // namespace lakerun::examples
