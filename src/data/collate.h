// Collation: gathers the rows of one batch from cached units straight into the batch's tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "lakerun/data/column_policy.h"
#include "lakerun/data/image_options.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/row_source.h"
#include "batch_memory.h"
#include "unit_cache.h"
#include "unit_index.h"

namespace lakerun::data {

/// How one projected column is collated (at most one of image / raw_bytes / list applies).
struct ColumnPlan {
  const ImageOptions* image = nullptr;  // binary column decoded as images
  bool raw_bytes = false;               // binary column (or list of binary values) handed over as bytes + offsets
  const ListPolicy* list = nullptr;     // list column padded to [B, L] or flat [E], + lengths
  const NullPolicy* nulls = nullptr;    // what a null becomes; nullptr: a null is an error
};

struct CollateSpec {
  const RowSource* source = nullptr;
  UnitIndex units;                           // where each table row lies
  std::vector<ColumnPlan> plans;             // per projected column
  uint64_t seed = 0;
  bool pinned = false;                       // allocate in pinned host memory (CUDA targets)
  BatchMemory* memory = nullptr;             // where unpinned tensors come from; nullptr: at::empty
};

/// Batch of rows `ids` (table rows, in batch order). Fixed-width columns become [B, shape...] tensors of their
/// element type; image columns [B, C, H, W] uint8 or float32; the policies of ColumnPlan add padded lists, raw bytes,
/// and fills with ".valid" / ".lengths" / ".offsets" companions. Each unit the batch touches is fetched from `cache`
/// once per batch and held until the batch is built.
Batch Collate(const CollateSpec& spec, UnitCache& cache, const std::vector<uint64_t>& ids, uint64_t epoch);

}  // namespace lakerun::data
