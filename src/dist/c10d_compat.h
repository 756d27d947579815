// Every c10d API difference between libtorch 1.13 and 2.x, in one place. Nothing outside src/dist/*.cc sees c10d.
//
// - 1.13: ProcessGroupGloo/NCCL derive from c10d::ProcessGroup. 2.x: they derive from c10d::Backend (ProcessGroup
//   became a dispatcher over backends). Both expose the same collective signatures used here.
// - Work lives in Work.hpp as c10d::Work since 1.13 (earlier: ProcessGroup::Work); wait(timeout) throws on timeout.
// - lakerun does not use c10d's TCPStore (its store is lakerun::rdzv's, through dist/c10d_store.h); c10d >= 2.3
//   numbers its requests differently (kTcpStoreDialect), which matters when torchrun's agent hosts the store.
// - 2.x throws c10::DistNetworkError / DistStoreError (subclasses of c10::Error) where 1.13 throws c10::Error.
// Built and tested against libtorch 2.6.0 by scripts/test_torch2.sh (a CPU build), and with the NCCL branch against
// PyTorch 2.11.0+cu130 on an H100 by scripts/test_cuda.sh; scripts/check_nccl.sh compiles the NCCL branch against
// 1.13 and 2.6 without a GPU.
#pragma once

#include <torch/version.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#ifdef USE_C10D_NCCL
#include <ATen/cuda/CUDAContext.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <cstdio>
#endif

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "lakerun/rdzv/store_client.h"

namespace lakerun::dist::compat {

#if TORCH_VERSION_MAJOR >= 2
using Backend = ::c10d::Backend;
#else
using Backend = ::c10d::ProcessGroup;
#endif
using BackendPtr = c10::intrusive_ptr<Backend>;
using StorePtr = c10::intrusive_ptr<::c10d::Store>;
using WorkPtr = c10::intrusive_ptr<::c10d::Work>;
using GlooDevicePtr = std::shared_ptr<::gloo::transport::Device>;

/// The request numbering of this libtorch's c10d TCPStore (lakerun/rdzv/store_client.h): what torchrun's agent store
/// speaks when torchrun comes with the same PyTorch.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
inline constexpr rdzv::WireDialect kTcpStoreDialect = rdzv::WireDialect::kValidated;
#else
inline constexpr rdzv::WireDialect kTcpStoreDialect = rdzv::WireDialect::kLegacy;
#endif

inline StorePtr MakePrefixStore(const std::string& prefix, StorePtr store) {
  return c10::make_intrusive<::c10d::PrefixStore>(prefix, std::move(store));
}

inline BackendPtr MakeGlooBackend(StorePtr store, int rank, int world_size, std::vector<GlooDevicePtr> devices,
                                  std::chrono::milliseconds timeout) {
  auto options = ::c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices = std::move(devices);
  return c10::make_intrusive<::c10d::ProcessGroupGloo>(std::move(store), rank, world_size, options);
}

#ifdef USE_C10D_NCCL
inline BackendPtr MakeNcclBackend(StorePtr store, int rank, int world_size, std::chrono::milliseconds timeout) {
  auto options = ::c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<::c10d::ProcessGroupNCCL>(std::move(store), rank, world_size, options);
}

/// The PCI address of CUDA device `index` ("0000:3c:00.0"), the same on every process of the host whatever its
/// CUDA_VISIBLE_DEVICES (which renumbers devices).
inline std::string CudaPciAddress(c10::DeviceIndex index) {
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(index);
  char address[32];
  std::snprintf(address, sizeof address, "%04x:%02x:%02x.0", static_cast<unsigned>(p->pciDomainID),
                static_cast<unsigned>(p->pciBusID), static_cast<unsigned>(p->pciDeviceID));
  return address;
}

/// The UUID of CUDA device `index` as nvidia-smi prints it ("GPU-1b2c...-..."): unique to one physical GPU, even
/// across hosts whose names and PCI layouts are the same (cloned VMs, containers).
inline std::string CudaUuid(c10::DeviceIndex index) {
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(index);
  std::string uuid = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(static_cast<unsigned char>(p->uuid.bytes[i])));
    uuid += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) uuid += '-';
  }
  return uuid;
}
#endif

/// An exception's message for lakerun's own errors: c10::Error::what() appends a multi-line C++ backtrace, which is
/// left out.
inline std::string Describe(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

/// Blocks until `work` completes; throws (c10::Error) when it failed or `timeout` passed.
inline void Wait(const WorkPtr& work, std::chrono::milliseconds timeout) { work->wait(timeout); }

}  // namespace lakerun::dist::compat
