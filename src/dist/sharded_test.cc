// ShardedDataParallel against DistributedDataParallel: the same parameters after training, on 2 and 3 ranks, with
// every supported optimizer, clipping and accumulation; 1/world of the optimizer state; gradient sharding.
#include <lakerun/dist/sharded.h>

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>
#include <lakerun/rdzv/progress.h>

#include <torch/optim/lbfgs.h>

#include <mutex>

#include "dist/context_impl.h"
#include "dist/rank_threads.h"
#include "dist/sharded_test_model.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/scoped_env.h"

namespace lakerun::dist {
namespace {

using testing::Opt;
using testing::Parallel;
using testing::RunRanks;
using testing::ShardNet;
using testing::TrainCase;
using testing::TrainOnRanks;
using testing::TrainResult;

double MaxDiff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
  return diff;
}

bool Bitwise(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!at::equal(a[i], b[i])) return false;
  }
  return true;
}

class ShardedEquivalenceTest : public ::testing::TestWithParam<TrainCase> {};

// Level 1's gradients come from DDP's own reducer, level 2's are summed in rank order as DDP's shared-memory
// all-reduce sums them (through shared memory or Gloo's all-to-all), level 3's as level 2's (its units are buckets
// too), and the optimizers update each element from that
// element alone: so without clipping both levels give the reference's bits. Exceptions: level 1 without shared memory
// uses Gloo's ring all-reduce, whose order of addition differs from rank order from 3 ranks on; level 2's clipping
// norm is a sum of per-rank partial sums (in double), which can move the clipping coefficient by an ulp. Level 1 clips
// the whole gradients as DDP does.
TEST_P(ShardedEquivalenceTest, EveryLevelEndsWithDdpsParametersOnEveryRank) {
  const TrainCase c = GetParam();
  const std::vector<TrainResult> ddp = TrainOnRanks(c, Parallel::kDdp);
  for (Parallel level : {Parallel::kZero1, Parallel::kZero2, Parallel::kZero3}) {
    const std::vector<TrainResult> zero = TrainOnRanks(c, level);
    const bool expect_bitwise =
        level == Parallel::kZero1 ? c.shared_memory || c.world == 2 : c.clip_norm == 0;
    for (int r = 0; r < c.world; ++r) {
      // Every rank's gathered parameters are the same bits.
      EXPECT_TRUE(Bitwise(zero[r].params, zero[0].params)) << Name(level) << " rank " << r;
      const double diff = MaxDiff(zero[r].params, ddp[r].params);
      EXPECT_LE(diff, 1e-6) << Name(level) << " rank " << r;
      if (expect_bitwise) {
        EXPECT_TRUE(Bitwise(zero[r].params, ddp[r].params)) << Name(level) << " rank " << r;
      }
      if (r == 0) std::printf("[ %s ] max |%s - ddp| = %g\n", Name(level), Name(level), diff);
    }
    ASSERT_EQ(zero[0].norms.size(), ddp[0].norms.size());
    for (std::size_t s = 0; s < ddp[0].norms.size(); ++s) {
      EXPECT_NEAR(zero[0].norms[s], ddp[0].norms[s], 1e-5 * ddp[0].norms[s]) << Name(level) << " step " << s;
    }
  }
  if (c.clip_norm > 0) {
    EXPECT_GT(ddp[0].norms.front(), c.clip_norm) << "the case must actually clip";
  }
}

TrainCase Case(int world, Opt opt, int accumulate, double clip, bool small_buckets, bool shared_memory = true) {
  TrainCase c;
  c.shared_memory = shared_memory;
  c.world = world;
  c.opt = opt;
  c.accumulate = accumulate;
  c.clip_norm = clip;
  if (small_buckets) {  // several buckets, chunks that cut through parameters
    c.first_cap = 64;
    c.cap = 256;
  }
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ShardedEquivalenceTest,
    ::testing::Values(Case(2, Opt::kSgd, 1, 0, false), Case(2, Opt::kSgd, 3, 0.05, true),
                      Case(2, Opt::kAdam, 1, 0, false), Case(2, Opt::kAdam, 2, 0.05, true),
                      Case(3, Opt::kSgd, 2, 0.05, true), Case(3, Opt::kAdam, 3, 0.05, true),
                      Case(3, Opt::kAdamW, 2, 0.05, false), Case(2, Opt::kRmsprop, 1, 0.05, true),
                      Case(3, Opt::kAdagrad, 2, 0, true), Case(2, Opt::kAdam, 2, 0.05, true, false),
                      Case(3, Opt::kSgd, 3, 0, true, false), Case(3, Opt::kAdam, 1, 0, false, false)),
    [](const auto& info) {
      const TrainCase& c = info.param;
      return std::string("world") + std::to_string(c.world) + "_" + Name(c.opt) + "_accumulate" +
             std::to_string(c.accumulate) + (c.clip_norm > 0 ? "_clip" : "") +
             (c.cap < 1000 ? "_small_buckets" : "") + (c.shared_memory ? "" : "_via_gloo");
    });

TEST(ShardedDataParallelTest, EachRankHoldsAboutOneWorldthOfTheOptimizerState) {
  for (int world : {2, 3}) {
    TrainCase c = Case(world, Opt::kAdam, 1, 0, true);
    c.steps = 2;
    const std::vector<TrainResult> ddp = TrainOnRanks(c, Parallel::kDdp);
    const std::vector<TrainResult> zero = TrainOnRanks(c, Parallel::kZero2);
    // Adam with amsgrad: three float tensors per element, so DDP's state is 12 bytes per parameter element.
    int64_t elements = 0;
    for (const at::Tensor& p : ddp[0].params) elements += p.numel();
    ASSERT_EQ(ddp[0].state_bytes, 12 * elements);
    int64_t sum = 0;
    for (int r = 0; r < world; ++r) {
      EXPECT_EQ(ddp[r].state_bytes, ddp[0].state_bytes);
      // At most one padding element per bucket beyond an exact split.
      EXPECT_LE(zero[r].state_bytes, 12 * (elements / world + 1)) << "world " << world << " rank " << r;
      EXPECT_GE(zero[r].state_bytes, 12 * (elements / world - 8)) << "world " << world << " rank " << r;
      sum += zero[r].state_bytes;
    }
    EXPECT_EQ(sum, ddp[0].state_bytes) << "the shards cover every element once";
  }
}

class ShardedTransportTest : public ::testing::TestWithParam<bool> {};

// Level 2 with several buckets for ShardNet, through shared memory or the process group.
ShardedOptions SmallBuckets(bool shared_memory) {
  ShardedOptions o;
  o.first_bucket_cap_bytes = 64;
  o.bucket_cap_bytes = 256;
  o.shared_memory = shared_memory;
  return o;
}

TEST_P(ShardedTransportTest, LevelTwoKeepsOnlyGradientChunksAndOverlapsBuckets) {
  const bool shared_memory = GetParam();
  RunRanks(2, [shared_memory](Context& ctx) {
    auto net = std::make_shared<ShardNet>();
    auto opt = testing::MakeOpt(Opt::kSgd, *net);
    ShardedDataParallel sdp(ctx, net, {opt}, SmallBuckets(shared_memory));
    EXPECT_EQ(sdp.GradientTransport(), shared_memory ? "shared memory" : "gloo");
    EXPECT_EQ(sdp.ParameterTransport(), sdp.GradientTransport());
    net->forward(at::randn({4, 6})).sum().backward();
    for (const auto& p : net->parameters()) EXPECT_FALSE(p.grad().defined()) << "full gradients are released";
    const ShardedStepStats stats = sdp.LastStepStats();
    EXPECT_GT(stats.buckets, 2);
    EXPECT_EQ(stats.launched_before_last_gradient, stats.buckets - 1);
    int64_t elements = 0, largest = 0;
    for (const auto& p : net->parameters()) elements += p.numel();
    for (const auto& p : net->parameters()) largest = std::max(largest, p.numel());
    const ShardedMemory m = sdp.Memory();
    EXPECT_LE(m.gradient_bytes, 4 * (elements / 2 + stats.buckets));
    if (shared_memory) {
      // Chunk-sized all-gather slots for every bucket and two reduce-scatter slots of the largest bucket (at most the
      // cap plus one parameter), whatever the size of the model.
      EXPECT_GT(m.transport_bytes, 4 * elements / 2);
      EXPECT_LE(m.transport_bytes, 4 * (elements / 2 + stats.buckets) + 2 * (256 + 4 * largest));
    } else {
      EXPECT_EQ(m.transport_bytes, 0);
    }
    sdp.Step();
  });
}

// Under `lakerun launch` a rank marks every wait on its launcher's progress board, so that a hang names the rank
// that holds the others up (docs/launch.md, "Hung ranks"): level 2's reduce-scatters and both levels' all-gathers
// are marked as DDP's bucket waits are.
TEST_P(ShardedTransportTest, LevelTwoMarksItsWaitsOnTheLaunchersProgressBoard) {
  const bool shared_memory = GetParam();
  rdzv::ProgressBoard board(2);
  std::vector<std::unique_ptr<rdzv::ProgressReporter>> reporters;
  {
    lakerun::testing::ScopedEnv env(rdzv::kProgressBoardEnv, board.Location().c_str());
    for (int slot = 0; slot < 2; ++slot) {
      env.Set(rdzv::kProgressSlotEnv, std::to_string(slot));
      reporters.push_back(rdzv::ProgressReporter::FromEnvironment());
      ASSERT_NE(reporters.back(), nullptr);
    }
  }
  const rdzv::Collective scatter =
      shared_memory ? rdzv::Collective::kSharedMemoryReduceScatter : rdzv::Collective::kReduceScatter;
  const rdzv::Collective gather =
      shared_memory ? rdzv::Collective::kSharedMemoryAllGather : rdzv::Collective::kAllGather;
  RunRanks(2, [&](Context& ctx) {
    ctx.impl().progress = std::move(reporters[ctx.rank()]);
    auto net = std::make_shared<ShardNet>();
    auto opt = testing::MakeOpt(Opt::kSgd, *net);
    ShardedDataParallel sdp(ctx, net, {opt}, SmallBuckets(shared_memory));
    const uint64_t before = board.Read(ctx.rank()).entered;
    net->forward(at::randn({4, 6})).sum().backward();
    rdzv::RankProgress p = board.Read(ctx.rank());
    EXPECT_GE(p.entered, before + static_cast<uint64_t>(sdp.LastStepStats().buckets)) << "a mark per bucket";
    EXPECT_EQ(p.last, scatter);
    EXPECT_FALSE(p.in_collective);
    sdp.Step();
    p = board.Read(ctx.rank());
    EXPECT_EQ(p.last, gather);
    EXPECT_FALSE(p.in_collective);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, ShardedTransportTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "SharedMemory" : "ProcessGroup"; });

TEST(ShardedDataParallelTest, NoSyncAccumulatesLocallyWithoutCommunication) {
  RunRanks(2, [](Context& ctx) {
    auto net = std::make_shared<ShardNet>();
    auto opt = testing::MakeOpt(Opt::kAdam, *net);
    ShardedDataParallel sdp(ctx, net, {opt});
    at::manual_seed(100 + ctx.rank());
    {
      auto scope = sdp.NoSync();
      net->forward(at::randn({4, 6})).sum().backward();
    }
    // The local gradients are still whole and still differ between ranks.
    at::Tensor g = net->fc1->weight.grad().contiguous();
    ASSERT_TRUE(g.defined());
    std::vector<std::string> all =
        AllGatherBytes(ctx, std::string(static_cast<const char*>(g.data_ptr()), g.nbytes()));
    EXPECT_NE(all[0], all[1]);
    net->forward(at::randn({4, 6})).sum().backward();  // the synchronized one reduces the sum
    EXPECT_FALSE(net->fc1->weight.grad().defined());
    sdp.Step();
  });
}

TEST(ShardedDataParallelTest, UnusedParameterIsAnErrorNamingIt) {
  std::mutex mu;
  int errors = 0;
  RunRanks(2, [&](Context& ctx) {
    auto net = std::make_shared<ShardNet>();
    auto opt = testing::MakeOpt(Opt::kSgd, *net);
    ShardedDataParallel sdp(ctx, net, {opt});
    at::Tensor x = at::randn({4, 7});
    EXPECT_THROW_WITH(net->fc3->forward(x).sum().backward(), DistError, "rank " + std::to_string(ctx.rank()),
                      "'fc1.weight'", "'fc2.bias'", "received no gradient");
    std::lock_guard<std::mutex> lock(mu);
    ++errors;
  });
  EXPECT_EQ(errors, 2);
}

TEST(ShardedDataParallelTest, OptimizersThatCannotBeShardedAreConfigErrors) {
  RunRanks(1, [](Context& ctx) {
    auto net = std::make_shared<ShardNet>();
    auto lbfgs = std::make_shared<torch::optim::LBFGS>(net->parameters());
    EXPECT_THROW_WITH(ShardedDataParallel(ctx, net, {lbfgs}), ConfigError, "optimizer 0",
                      "element-wise optimizer");
    auto a = std::make_shared<torch::optim::SGD>(net->parameters(), torch::optim::SGDOptions(0.1));
    auto b = std::make_shared<torch::optim::SGD>(net->fc1->parameters(), torch::optim::SGDOptions(0.1));
    EXPECT_THROW_WITH(ShardedDataParallel(ctx, net, {a, b}), ConfigError, "'fc1.weight'", "two optimizers");
    auto stranger = std::make_shared<torch::optim::SGD>(
        std::vector<at::Tensor>{at::zeros({2}).requires_grad_(true)}, torch::optim::SGDOptions(0.1));
    EXPECT_THROW_WITH(ShardedDataParallel(ctx, net, {stranger}), ConfigError, "not a parameter of the wrapped module");
  });
}

TEST(ShardedDataParallelTest, WorldOfOneTrainsLikeAPlainLoop) {
  TrainCase c = Case(1, Opt::kAdam, 2, 0.05, true);
  const std::vector<TrainResult> plain = TrainOnRanks(c, Parallel::kDdp);
  for (Parallel level : {Parallel::kZero1, Parallel::kZero2}) {
    const std::vector<TrainResult> zero = TrainOnRanks(c, level);
    EXPECT_LE(MaxDiff(zero[0].params, plain[0].params), 1e-6) << Name(level);
    EXPECT_EQ(zero[0].state_bytes, plain[0].state_bytes) << Name(level);
  }
}

}  // namespace
}  // namespace lakerun::dist
