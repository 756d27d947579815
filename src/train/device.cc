#include "train/device.h"

#include "lakerun/base/error.h"

namespace lakerun::train {

c10::Device ChooseDevice(Accelerator accelerator, const DeviceFacts& facts) {
  const bool group_on_cuda = facts.group_device.has_value() && facts.group_device->is_cuda();
  if (accelerator == Accelerator::kCpu) return c10::Device(c10::kCPU);
  if (accelerator == Accelerator::kCuda) {
    LAKERUN_CHECK_AS(ConfigError, facts.cuda_available, "Trainer: accelerator='cuda' needs CUDA, which this build or "
                     "machine lacks (at::hasCUDA() is false); use accelerator='cpu' or 'auto'");
    if (group_on_cuda) return *facts.group_device;
    LAKERUN_CHECK_AS(ConfigError, facts.world_size <= 1, "Trainer: accelerator='cuda' with ", facts.world_size,
                     " ranks needs their process group on CUDA (NCCL), but it runs on ",
                     facts.group_device.value_or(c10::Device(c10::kCPU)).str(), "; use accelerator='cpu' or 'auto'");
    return c10::Device(c10::kCUDA, 0);
  }
  if (group_on_cuda) return *facts.group_device;
  if (facts.world_size <= 1 && facts.cuda_available) return c10::Device(c10::kCUDA, 0);
  return c10::Device(c10::kCPU);
}

void MoveBatch(Batch& batch, c10::Device device) {
  for (auto& [name, tensor] : batch.tensors) {
    if (tensor.defined() && tensor.device() != device) {
      tensor = tensor.to(device, /*non_blocking=*/tensor.is_pinned());
    }
  }
}

}  // namespace lakerun::train
