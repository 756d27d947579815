// Fashion-MNIST from its Delta tables to normalized batches through lakerun::data::Loader.
//
//   FashionMnistSourceOptions tables;
//   tables.table = "data/fashion-mnist";
//   FashionMnistSources s = OpenFashionMnistSources(tables);
//   FashionMnistLoaderSettings settings;
//   settings.batch_size = 100;
//   train::LoaderBatchSource train = data::Loader(s.train, FashionMnistLoaderOptions(settings));  // Trainer shards
//   batch->at("image")   // float32 [B, 1, 28, 28], (x / 255 - mean) / std: the same values as dataset.h's
//   batch->at("label")   // int64 [B]
//
// The image column is what `lakerun table import fashion-mnist` writes: one 784-byte binary value per row. The
// loader hands it over as raw bytes (LoaderOptions::raw_bytes) and NormalizeImages checks every value's length and
// turns the bytes into the normalized tensor on the loader's decoding thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lakerun/data/loader.h"
#include "lakerun/data/row_source.h"

namespace lakerun::examples {

inline constexpr int64_t kFashionMnistSide = 28;

struct FashionMnistSourceOptions {
  /// The directory holding the train/ and test/ Delta tables (table_setup.h).
  std::string table = "data/fashion-mnist";
  /// This process's rank, for error messages.
  int64_t rank = -1;
};

struct FashionMnistSources {
  std::shared_ptr<const data::RowSource> train;
  std::shared_ptr<const data::RowSource> test;
};

/// Opens both tables (logs and footers only) with the columns image and label; throws what OpenTable throws.
FashionMnistSources OpenFashionMnistSources(const FashionMnistSourceOptions& options);

struct FashionMnistLoaderSettings {
  int64_t batch_size = 100;
  /// LoaderOptions::rank and world_size: unset, a Trainer of several ranks gives each rank its share.
  std::optional<int64_t> rank{};
  std::optional<int64_t> world_size{};
  uint64_t seed = 0;
  bool shuffle = true;
  /// MNIST's statistics, as the seed example uses (Fashion-MNIST's own are 0.2860 / 0.3530).
  double mean = 0.1307;
  double std = 0.3081;
  size_t num_threads = 1;
};

/// Loader options: samples sharded over the ranks (padded by repetition), shuffled over the whole table when
/// `shuffle` (a pure function of seed and epoch), images normalized on the decoding threads.
data::LoaderOptions FashionMnistLoaderOptions(const FashionMnistLoaderSettings& settings);

/// The transform that turns the raw image bytes (uint8 [B * 784] and image.offsets [B + 1]) into float32
/// [B, 1, 28, 28], (x / 255 - mean) / std — the same float operations, in the same order, as LoadFashionMnist
/// (dataset.h), so the values are bit-identical — and drops image.offsets. Throws CorruptDataError naming the
/// batch's first table row whose image is not 784 bytes.
data::BatchTransform NormalizeImages(double mean, double std);

}  // namespace lakerun::examples
