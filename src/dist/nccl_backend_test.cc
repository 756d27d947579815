// The NCCL process group through c10d_compat.h, on a real GPU. One GPU holds one rank (NCCL refuses two ranks on a
// device), so the group here has one rank: what runs is the c10d API lakerun builds on (options, timeout,
// communicator creation, each collective's signature), against whichever libtorch this build uses.
#include <gtest/gtest.h>

#ifdef USE_C10D_NCCL
#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <chrono>
#include <vector>

#include "dist/c10d_compat.h"
#endif

namespace lakerun::dist {
namespace {

TEST(NcclBackendTest, OneRankGroupRunsTheCollectivesLakerunUsesOnTheGpu) {
#ifndef USE_C10D_NCCL
  GTEST_SKIP() << "this libtorch was built without NCCL";
#else
  if (c10::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const std::chrono::milliseconds timeout = std::chrono::seconds(30);
  c10::cuda::set_device(0);
  auto store = c10::make_intrusive<::c10d::HashStore>();
  compat::BackendPtr nccl = compat::MakeNcclBackend(store, 0, 1, timeout);

  at::Tensor x = at::arange(6, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
  std::vector<at::Tensor> tensors{x};
  compat::Wait(nccl->allreduce(tensors), timeout);
  EXPECT_TRUE(x.cpu().equal(at::arange(6, at::kFloat)));

  at::Tensor b = at::full({3}, 7, at::TensorOptions().dtype(at::kLong).device(at::kCUDA));
  std::vector<at::Tensor> broadcast{b};
  ::c10d::BroadcastOptions root;
  root.rootRank = 0;
  compat::Wait(nccl->broadcast(broadcast, root), timeout);
  EXPECT_EQ(b.sum().item<int64_t>(), 21);

  at::Tensor in = at::full({4}, 3, at::TensorOptions().dtype(at::kByte).device(at::kCUDA));
  std::vector<std::vector<at::Tensor>> outputs{{at::zeros_like(in)}};
  std::vector<at::Tensor> inputs{in};
  compat::Wait(nccl->allgather(outputs, inputs), timeout);
  EXPECT_TRUE(outputs[0][0].equal(in));

  compat::Wait(nccl->barrier(), timeout);
#endif
}

}  // namespace
}  // namespace lakerun::dist
