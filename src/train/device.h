// Where a Trainer runs (Lightning's accelerator): TrainerOptions::accelerator resolved against the rank's process
// group and the machine, and the move of each batch there. Internal.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

#include "lakerun/train/trainer.h"

namespace lakerun::train {

/// What the choice depends on, gathered by the caller (so the choice itself is plain logic, tested on any machine).
struct DeviceFacts {
  bool cuda_available = false;               // at::hasCUDA(): a CUDA build with at least one visible device
  std::optional<c10::Device> group_device{};  // the process group's device (dist::Context::device()) when distributed
  int64_t world_size = 1;
};

/// The device for `accelerator`:
/// - kCpu: the CPU;
/// - kCuda: the process group's CUDA device (NCCL: cuda:LOCAL_RANK, or cuda:0 when the rank sees one GPU); cuda:0 in
///   a single process; a ConfigError without CUDA, or when ranks share a CPU (Gloo) group;
/// - kAuto: the process group's device when it is CUDA, cuda:0 in a single process that has CUDA, else the CPU.
c10::Device ChooseDevice(Accelerator accelerator, const DeviceFacts& facts);

/// Moves every tensor of `batch` to `device` (non-blocking from pinned memory); tensors already there are untouched.
/// sample_ids stay on the CPU: they are bookkeeping, not model input.
void MoveBatch(Batch& batch, c10::Device device);

}  // namespace lakerun::train
