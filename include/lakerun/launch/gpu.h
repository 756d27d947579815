// GPUs visible to the launcher, for `--use-gpu`.
//
// Model: one GPU per local rank. Rank with local rank i gets CUDA_VISIBLE_DEVICES=<the i-th visible GPU>, so inside
// the rank its GPU is always cuda:0 (LOCAL_RANK keeps its real value). The visible GPUs come from, in order:
// CUDA_VISIBLE_DEVICES (if set; its entries are passed through unchanged, indices or UUIDs), the entries of
// /proc/driver/nvidia/gpus, or `nvidia-smi -L`.
#pragma once

#include <string>
#include <vector>

namespace lakerun::launch {

struct VisibleGpus {
  /// Device identifiers to put in CUDA_VISIBLE_DEVICES, one per GPU.
  std::vector<std::string> ids;
  /// Where they came from, for messages ("CUDA_VISIBLE_DEVICES", "/proc/driver/nvidia/gpus", "nvidia-smi -L").
  std::string source;
};

/// Detects the GPUs this process may use (see above). Never throws; no GPU gives an empty list.
VisibleGpus DetectVisibleGpus();

/// Parses a CUDA_VISIBLE_DEVICES value: comma-separated, blanks trimmed; "" and "-1" mean none, and as CUDA does,
/// the list stops at the first invalid entry (a negative index).
std::vector<std::string> ParseCudaVisibleDevices(const std::string& value);

}  // namespace lakerun::launch
