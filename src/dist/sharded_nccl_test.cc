// ShardedDataParallel on NCCL, on a real GPU. One GPU holds one rank (NCCL refuses two ranks on a device), so the
// group has one rank: what runs is every NCCL call sharding makes (_reduce_scatter_base, _allgather_base) on CUDA
// tensors, every level training a CUDA model, and level 3 with bf16 mixed precision on a transformer-style model
// (its peak GPU memory printed against an unwrapped model's), against whichever libtorch this build uses. Several
// ranks are covered on Gloo by the other sharded tests.
#include <gtest/gtest.h>

#ifdef USE_C10D_NCCL
#include <lakerun/dist/sharded.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "dist/context_impl.h"
#include "dist/optimizer_state.h"
#include "dist/shard_collectives.h"
#include "dist/sharded_test_model.h"
#include "lakerun_testing/transformer.h"
#include "train/autocast_compat.h"
#endif

namespace lakerun::dist {
namespace {

#ifdef USE_C10D_NCCL
// A one-rank job on cuda:0 whose collectives really go through NCCL (Init() makes no group at world size 1).
std::unique_ptr<Context> OneRankNcclContext() {
  c10::cuda::set_device(0);
  auto impl = std::make_unique<Context::Impl>();
  impl->env.rank = 0;
  impl->env.world_size = 1;
  impl->env.local_world_size = 1;
  impl->backend_kind = Backend::kNccl;
  impl->device = c10::Device(c10::kCUDA, 0);
  impl->timeout = std::chrono::seconds(60);
  impl->store = c10::make_intrusive<::c10d::HashStore>();
  impl->backend = compat::MakeNcclBackend(impl->store, 0, 1, impl->timeout);
  return std::make_unique<Context>(std::move(impl));
}
#endif

#define LAKERUN_NEEDS_A_GPU()                                                       \
  do {                                                                              \
    if (c10::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";           \
  } while (false)

TEST(ShardedNcclTest, ReduceScatterAndAllGatherRunThroughNcclOnCudaTensors) {
#ifndef USE_C10D_NCCL
  GTEST_SKIP() << "this libtorch was built without NCCL";
#else
  LAKERUN_NEEDS_A_GPU();
  std::unique_ptr<Context> ctx = OneRankNcclContext();
  const auto cuda = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);
  at::Tensor input = at::arange(10, cuda), chunk = at::empty({10}, cuda);
  StartReduceScatter(*ctx, input, chunk).Wait();
  EXPECT_TRUE(chunk.cpu().equal(at::arange(10, at::kFloat)));
  at::Tensor whole = at::empty({10}, cuda);
  StartAllGather(*ctx, chunk * 2, whole).Wait();
  EXPECT_TRUE(whole.cpu().equal(at::arange(10, at::kFloat) * 2));
#endif
}

TEST(ShardedNcclTest, EveryLevelTrainsACudaModelAsAPlainLoopDoes) {
#ifndef USE_C10D_NCCL
  GTEST_SKIP() << "this libtorch was built without NCCL";
#else
  LAKERUN_NEEDS_A_GPU();
  std::unique_ptr<Context> ctx = OneRankNcclContext();
  testing::TrainCase c;
  c.world = 1;
  c.accumulate = 2;
  c.clip_norm = 0.05;
  c.first_cap = 64;
  c.cap = 256;
  const std::vector<at::Tensor> init = testing::InitialParameters();
  auto run = [&](testing::Parallel parallel) {
    auto net = std::make_shared<testing::ShardNet>();
    testing::Load(*net, init);
    net->to(at::kCUDA);
    auto opt = testing::MakeOpt(testing::Opt::kAdam, *net);
    std::unique_ptr<ShardedDataParallel> sdp;
    if (parallel != testing::Parallel::kDdp) {
      ShardedOptions o;
      o.stage = testing::StageOf(parallel);
      o.unit_min_params = c.unit_min_params;
      o.first_bucket_cap_bytes = c.first_cap;
      o.bucket_cap_bytes = c.cap;
      sdp = std::make_unique<ShardedDataParallel>(*ctx, net, std::vector{opt}, o);
      EXPECT_EQ(sdp->ParameterTransport(), "nccl");
    }
    for (int s = 0; s < c.steps; ++s) {
      opt->zero_grad();
      for (int m = 0; m < c.accumulate; ++m) {
        auto [x, y] = testing::Batch(c, s, 0, m);
        at::Tensor loss = (net->forward(x.cuda()) - y.cuda()).pow(2).mean() / c.accumulate;
        if (sdp && m + 1 < c.accumulate) {
          auto scope = sdp->NoSync();
          loss.backward();
        } else {
          loss.backward();
        }
      }
      if (sdp) {
        sdp->ClipGradNorm(c.clip_norm);
        sdp->Step();
      } else {
        torch::nn::utils::clip_grad_norm_(net->parameters(), c.clip_norm);
        opt->step();
      }
    }
    std::vector<StateParts> state;
    std::optional<ShardedDataParallel::FullParameters> full;  // level 3 holds only shards between steps
    if (sdp) full.emplace(sdp->GatherFullParameters());
    {
      std::optional<ShardedDataParallel::GatheredState> gathered;
      if (sdp) gathered.emplace(sdp->GatherOptimizerState(0));
      for (const auto& p : net->parameters()) {
        state.push_back(Decompose(OptimizerKind::kAdam, *opt->state().at(StateKey(p))));
      }
    }
    return std::make_pair(testing::Snapshot(*net), state);
  };
  const auto plain = run(testing::Parallel::kDdp);
  for (testing::Parallel level : {testing::Parallel::kZero1, testing::Parallel::kZero2, testing::Parallel::kZero3}) {
    const auto sharded = run(level);
    for (std::size_t i = 0; i < plain.first.size(); ++i) {
      EXPECT_LE((sharded.first[i] - plain.first[i]).abs().max().item<double>(), 1e-6)
          << testing::Name(level) << " parameter " << i;
      EXPECT_EQ(sharded.second[i].step, plain.second[i].step);
      EXPECT_LE((sharded.second[i].tensors[0].second - plain.second[i].tensors[0].second).abs().max().item<double>(),
                1e-6)
          << testing::Name(level) << " exp_avg of parameter " << i;
    }
  }
#endif
}

// Level 3 with bf16 parameters on CUDA under bf16 autocast, against the same model unwrapped (fp32 parameters, the
// same autocast): both train, to losses within 5 % of each other, and the peak GPU memory of each is printed. One rank
// keeps the whole fp32 master and optimizer state, so the saving here is the parameters' bf16 units, freed between
// uses; with N ranks the state divides by N as on the CPU.
TEST(ShardedNcclTest, LevelThreeTrainsATransformerInBf16OnCuda) {
#ifndef USE_C10D_NCCL
  GTEST_SKIP() << "this libtorch was built without NCCL";
#else
  LAKERUN_NEEDS_A_GPU();
  std::unique_ptr<Context> ctx = OneRankNcclContext();
  const lakerun::testing::TransformerOptions shape{512, 8, 8, 128, 4096};
  auto run = [&](bool sharded) {
    at::manual_seed(5);
    auto net = std::make_shared<lakerun::testing::TransformerLm>(shape);
    net->to(at::kCUDA);
    auto adam = std::make_shared<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-4));
    std::unique_ptr<ShardedDataParallel> sdp;
    if (sharded) {
      ShardedOptions o;
      o.stage = ZeroStage::kParameters;
      o.unit_min_params = 1'000'000;  // each block
      o.param_dtype = at::kBFloat16;
      sdp = std::make_unique<ShardedDataParallel>(*ctx, net, std::vector<std::shared_ptr<torch::optim::Optimizer>>{adam}, o);
    }
    c10::cuda::CUDACachingAllocator::emptyCache();
    c10::cuda::CUDACachingAllocator::resetPeakStats(0);
    at::Generator gen = at::detail::createCPUGenerator(9);
    const at::Tensor ids = at::randint(shape.vocab, {16, shape.context + 1}, gen).to(at::kCUDA);
    double first = 0, last = 0;
    for (int step = 0; step < 30; ++step) {
      adam->zero_grad();
      at::Tensor loss;
      {
        train::compat::SetAutocastDtype(c10::DeviceType::CUDA, at::kBFloat16);
        train::compat::SetAutocastEnabled(c10::DeviceType::CUDA, true);
        at::autocast::increment_nesting();
        loss = net->NextTokenLoss(ids);
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        train::compat::SetAutocastEnabled(c10::DeviceType::CUDA, false);
      }
      loss.backward();
      if (sdp) {
        sdp->Step();
      } else {
        adam->step();
      }
      (step == 0 ? first : last) = loss.item<double>();
    }
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
    // Index 0 is StatType::AGGREGATE (the enum moved to c10::CachingDeviceAllocator in libtorch 2.x).
    const int64_t peak = stats.allocated_bytes[0].peak;
    return std::make_tuple(first, last, peak);
  };
  const auto [plain_first, plain_last, plain_peak] = run(false);
  const auto [sharded_first, sharded_last, sharded_peak] = run(true);
  std::printf("[ CUDA, bf16 autocast, %d-block transformer ] unwrapped: loss %.4f -> %.4f, peak %.1f MB; level 3 with "
              "bf16 units: loss %.4f -> %.4f, peak %.1f MB\n",
              shape.blocks, plain_first, plain_last, plain_peak / 1e6, sharded_first, sharded_last, sharded_peak / 1e6);
  EXPECT_LT(plain_last, plain_first);
  EXPECT_LT(sharded_last, sharded_first);
  EXPECT_NEAR(sharded_last, plain_last, 0.05 * plain_last);
#endif
}

}  // namespace
}  // namespace lakerun::dist
