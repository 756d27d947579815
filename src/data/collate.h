// Collation: gathers the rows of one batch from cached units straight into the batch's tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "lakerun/data/image_options.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/row_source.h"
#include "unit_cache.h"

namespace lakerun::data {

struct CollateSpec {
  const RowSource* source = nullptr;
  std::vector<uint64_t> unit_starts;         // num_units + 1 entries
  std::vector<const ImageOptions*> images;   // per column: decode as image (binary columns), else nullptr
  uint64_t seed = 0;
  bool pinned = false;                       // allocate in pinned host memory (CUDA targets)
};

/// Batch of rows `ids` (table rows, in batch order). Fixed-width columns become [B, shape...] tensors of their
/// element type; image columns [B, C, H, W] uint8 or float32. Rows are visited in table order so each unit is
/// fetched from `cache` once per batch.
Batch Collate(const CollateSpec& spec, UnitCache& cache, const std::vector<uint64_t>& ids, uint64_t epoch);

}  // namespace lakerun::data
