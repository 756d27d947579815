// Autocast's thread-local state, through the one API each libtorch version offers (private to src/train).
//
// libtorch 2.4 made autocast's C++ API device-generic (is_autocast_enabled(device_type), set_autocast_dtype(...))
// and deprecated the per-device functions (is_enabled() for CUDA, is_cpu_enabled(), get_autocast_gpu_dtype(), ...)
// for removal. 1.13 has only the per-device ones. Built against libtorch 1.13 and 2.6 by the suite
// (scripts/test_torch2.sh runs it on 2.6).
#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#define LAKERUN_AUTOCAST_DEVICE_GENERIC \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

namespace lakerun::train::compat {

/// Whether autocast is on for `device` (kCPU or kCUDA) on this thread.
inline bool AutocastEnabled(c10::DeviceType device) {
#if LAKERUN_AUTOCAST_DEVICE_GENERIC
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline void SetAutocastEnabled(c10::DeviceType device, bool enabled) {
#if LAKERUN_AUTOCAST_DEVICE_GENERIC
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::kCUDA) {
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

/// The lower-precision type autocast casts to on `device`.
inline c10::ScalarType AutocastDtype(c10::DeviceType device) {
#if LAKERUN_AUTOCAST_DEVICE_GENERIC
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}

inline void SetAutocastDtype(c10::DeviceType device, c10::ScalarType dtype) {
#if LAKERUN_AUTOCAST_DEVICE_GENERIC
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

}  // namespace lakerun::train::compat

#undef LAKERUN_AUTOCAST_DEVICE_GENERIC
