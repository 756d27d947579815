// The Fashion-MNIST table the loader benchmarks read: 60k x (784-byte image + int64 label) rows, from the IDX files
// under /usr/share/datasets/fashion-mnist (a deterministic synthetic stand-in when they are absent).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lakerun/format/parquet/types.h"

namespace lakerun::bench {

/// Fashion-MNIST's training images and labels, repeated or cut to `rows`; *origin says where they came from.
void LoadImages(int64_t rows, std::vector<uint8_t>* images, std::vector<int64_t>* labels, std::string* origin);

/// Writes `images` (784 bytes each, FIXED_LEN_BYTE_ARRAY) and `labels` as a Parquet file with lakerun's writer
/// defaults (page CRCs included), in row groups of `row_group_rows`.
void WriteMnistTable(const std::string& path, const std::vector<uint8_t>& images, const std::vector<int64_t>& labels,
                     int64_t row_group_rows, parquet::Codec codec = parquet::Codec::kSnappy);

}  // namespace lakerun::bench
