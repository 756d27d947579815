#include <lakerun/dist/ddp.h>

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>

#include <torch/nn/modules/linear.h>
#include <torch/nn/module.h>
#include <torch/optim/sgd.h>

#include <future>
#include <mutex>

#include "dist/rank_threads.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using testing::RunRanks;

// Two layers that produce gradients in several buckets with small caps, plus one layer that only some
// ranks (or none) use.
struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(6, 16));
    fc2 = register_module("fc2", torch::nn::Linear(16, 8));
    fc3 = register_module("fc3", torch::nn::Linear(8, 3));
    extra = register_module("extra", torch::nn::Linear(6, 3));
  }
  at::Tensor forward(const at::Tensor& x, bool use_extra) {
    at::Tensor h = fc3(torch::tanh(fc2(torch::tanh(fc1(x)))));
    return use_extra ? h + extra(x) : h;
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr}, extra{nullptr};
};

constexpr int kBatchPerRank = 4;
constexpr int kSteps = 5;

std::vector<at::Tensor> ReferenceInit() {
  at::manual_seed(7);
  Net net;
  std::vector<at::Tensor> params;
  for (const auto& p : net.parameters()) params.push_back(p.detach().clone());
  return params;
}

void Load(Net& net, const std::vector<at::Tensor>& values) {
  at::NoGradGuard no_grad;
  auto params = net.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(values[i]);
}

std::vector<at::Tensor> Snapshot(Net& net) {
  std::vector<at::Tensor> out;
  for (const auto& p : net.parameters()) out.push_back(p.detach().clone());
  return out;
}

struct Data {
  std::vector<at::Tensor> x, y;  // per step, the global batch
};

Data MakeData(int world) {
  at::manual_seed(11);
  Data d;
  for (int s = 0; s < kSteps; ++s) {
    d.x.push_back(at::randn({world * kBatchPerRank, 6}));
    d.y.push_back(at::randn({world * kBatchPerRank, 3}));
  }
  return d;
}

at::Tensor Loss(const at::Tensor& out, const at::Tensor& y) { return (out - y).pow(2).mean(); }

// One process on the concatenated batch.
std::vector<at::Tensor> TrainSingle(const Data& d, const std::vector<at::Tensor>& init, bool use_extra = true) {
  Net net;
  Load(net, init);
  torch::optim::SGD opt(net.parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  for (int s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    Loss(net.forward(d.x[s], use_extra), d.y[s]).backward();
    opt.step();
  }
  return Snapshot(net);
}

void ExpectClose(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    double diff = (a[i] - b[i]).abs().max().item<double>();
    EXPECT_LE(diff, tol) << "parameter " << i;
  }
}

struct DdpCase {
  int world;
  int64_t first_cap, cap;
  bool shared_memory;
};

class DdpEquivalenceTest : public ::testing::TestWithParam<DdpCase> {};

TEST_P(DdpEquivalenceTest, ShardsGiveTheSameParametersAsOneProcessAndStayBitwiseEqual) {
  const DdpCase c = GetParam();
  const std::vector<at::Tensor> init = ReferenceInit();
  const Data data = MakeData(c.world);
  std::vector<at::Tensor> want = TrainSingle(data, init);

  // per_step[step][rank] = parameters after that step
  std::vector<std::vector<std::vector<at::Tensor>>> per_step(kSteps, std::vector<std::vector<at::Tensor>>(c.world));
  std::vector<std::size_t> buckets(c.world);
  RunRanks(c.world, [&](Context& ctx) {
    auto net = std::make_shared<Net>();
    if (ctx.rank() == 0) Load(*net, init);  // the others start elsewhere: the constructor's broadcast fixes that
    DdpOptions options;
    options.first_bucket_cap_bytes = c.first_cap;
    options.bucket_cap_bytes = c.cap;
    options.shared_memory = c.shared_memory;
    DistributedDataParallel ddp(ctx, net, options);
    EXPECT_EQ(ddp.GradientTransport(), c.shared_memory ? "shared memory" : "gloo");
    buckets[ctx.rank()] = ddp.BucketParameterNames().size();
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
    for (int s = 0; s < kSteps; ++s) {
      at::Tensor x = data.x[s].narrow(0, ctx.rank() * kBatchPerRank, kBatchPerRank);
      at::Tensor y = data.y[s].narrow(0, ctx.rank() * kBatchPerRank, kBatchPerRank);
      opt.zero_grad();
      Loss(net->forward(x, true), y).backward();
      DdpStepStats stats = ddp.LastStepStats();
      EXPECT_EQ(stats.buckets, static_cast<int>(buckets[ctx.rank()]));
      EXPECT_EQ(stats.unused_parameters, 0);
      // Every bucket but the last starts while backward still produces gradients for later buckets.
      EXPECT_EQ(stats.launched_before_last_gradient, stats.buckets - 1);
      opt.step();
      per_step[s][ctx.rank()] = Snapshot(*net);
    }
  }, std::chrono::seconds(30));
  for (int r = 1; r < c.world; ++r) EXPECT_EQ(buckets[r], buckets[0]);
  if (c.cap < 1000) {
    EXPECT_GT(buckets[0], 2u);
  }
  for (int s = 0; s < kSteps; ++s) {
    for (int r = 1; r < c.world; ++r) {
      for (std::size_t i = 0; i < per_step[s][0].size(); ++i) {
        EXPECT_TRUE(at::equal(per_step[s][r][i], per_step[s][0][i])) << "step " << s << " rank " << r << " param " << i;
      }
    }
  }
  ExpectClose(per_step[kSteps - 1][0], want, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(WorldsAndBuckets, DdpEquivalenceTest,
                         ::testing::Values(DdpCase{2, 1 << 20, 25 << 20, true}, DdpCase{2, 64, 256, true},
                                           DdpCase{3, 64, 256, true}, DdpCase{3, 1 << 20, 25 << 20, true},
                                           DdpCase{2, 1 << 20, 25 << 20, false}, DdpCase{3, 64, 256, false}),
                         [](const auto& info) {
                           return "world" + std::to_string(info.param.world) + "_cap" +
                                  std::to_string(info.param.cap) + (info.param.shared_memory ? "_shm" : "_gloo");
                         });

TEST(DdpTest, BucketsFollowReverseRegistrationOrderAndCaps) {
  RunRanks(1, [](Context& ctx) {
    auto net = std::make_shared<Net>();
    DdpOptions options;
    options.find_unused_parameters = true;
    DistributedDataParallel ddp(ctx, net, options);
    // 87 floats of extra + fc3 + ... all fit in the first 1 MiB bucket, last registered first.
    auto names = ddp.BucketParameterNames();
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0].front(), "extra.bias");
    EXPECT_EQ(names[0].back(), "fc1.weight");
    // Caps in bytes: extra.bias (12 B) + extra.weight (72 B) reach the 64-byte first cap; then each layer's
    // bias + weight reaches the 100-byte cap (fc3: 12 + 96, fc2: 32 + 512, fc1: 64 + 384).
    options.first_bucket_cap_bytes = 64;
    options.bucket_cap_bytes = 100;
    auto net2 = std::make_shared<Net>();
    DistributedDataParallel small(ctx, net2, options);
    auto b = small.BucketParameterNames();
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0], (std::vector<std::string>{"extra.bias", "extra.weight"}));
    EXPECT_EQ(b[1], (std::vector<std::string>{"fc3.bias", "fc3.weight"}));
    EXPECT_EQ(b[2], (std::vector<std::string>{"fc2.bias", "fc2.weight"}));
    EXPECT_EQ(b[3], (std::vector<std::string>{"fc1.bias", "fc1.weight"}));
  });
}

TEST(DdpTest, NoSyncAccumulationEqualsOneLargeStep) {
  const int world = 2;
  const std::vector<at::Tensor> init = ReferenceInit();
  at::manual_seed(3);
  // Two micro-batches per rank; the single process sees all four at once.
  at::Tensor x = at::randn({world * 2 * kBatchPerRank, 6}), y = at::randn({world * 2 * kBatchPerRank, 3});
  Net single;
  Load(single, init);
  torch::optim::SGD opt(single.parameters(), torch::optim::SGDOptions(0.1));
  Loss(single.forward(x, true), y).backward();
  opt.step();
  std::vector<at::Tensor> want = Snapshot(single);

  std::vector<std::vector<at::Tensor>> got(world);
  RunRanks(world, [&](Context& ctx) {
    auto net = std::make_shared<Net>();
    Load(*net, init);
    DistributedDataParallel ddp(ctx, net);
    torch::optim::SGD o(net->parameters(), torch::optim::SGDOptions(0.1));
    o.zero_grad();
    for (int micro = 0; micro < 2; ++micro) {
      int64_t start = (ctx.rank() * 2 + micro) * kBatchPerRank;
      at::Tensor loss = Loss(net->forward(x.narrow(0, start, kBatchPerRank), true),
                             y.narrow(0, start, kBatchPerRank)) / 2;
      if (micro == 0) {
        auto scope = ddp.NoSync();
        loss.backward();
        // Nothing was exchanged: rank 0's and rank 1's local gradients still differ.
        at::Tensor g = net->fc1->weight.grad().clone();
        std::vector<std::string> all = AllGatherBytes(ctx, std::string(static_cast<const char*>(g.data_ptr()), g.nbytes()));
        EXPECT_NE(all[0], all[1]);
      } else {
        loss.backward();
      }
    }
    o.step();
    got[ctx.rank()] = Snapshot(*net);
  });
  ExpectClose(got[0], want, 1e-5);
  for (std::size_t i = 0; i < got[0].size(); ++i) EXPECT_TRUE(at::equal(got[0][i], got[1][i]));
}

TEST(DdpTest, UnusedParameterIsAnErrorNamingIt) {
  std::mutex mu;
  int errors = 0;
  RunRanks(2, [&](Context& ctx) {
    auto net = std::make_shared<Net>();
    DistributedDataParallel ddp(ctx, net);
    at::Tensor x = at::randn({4, 6}), y = at::randn({4, 3});
    EXPECT_THROW_WITH(Loss(net->forward(x, false), y).backward(), DistError,
                      "rank " + std::to_string(ctx.rank()), "'extra.bias'", "'extra.weight'",
                      "find_unused_parameters");
    {
      std::lock_guard<std::mutex> lock(mu);
      ++errors;
    }
    // The wrapper is reusable after the error: a backward through every parameter synchronizes.
    net->zero_grad();
    Loss(net->forward(x, true), y).backward();
    EXPECT_TRUE(net->extra->weight.grad().defined());
  });
  EXPECT_EQ(errors, 2);
}

TEST(DdpTest, FindUnusedParametersTreatsMissingGradientsAsZero) {
  const int world = 2;
  const std::vector<at::Tensor> init = ReferenceInit();
  at::manual_seed(5);
  at::Tensor x = at::randn({world * kBatchPerRank, 6}), y = at::randn({world * kBatchPerRank, 3});
  // Reference for `extra`: only rank 0 uses it, so its averaged gradient is rank 0's gradient / world.
  Net r0;
  Load(r0, init);
  Loss(r0.forward(x.narrow(0, 0, kBatchPerRank), true), y.narrow(0, 0, kBatchPerRank)).backward();
  at::Tensor want_extra = r0.extra->weight.grad() / world;

  std::vector<at::Tensor> extra_grad(world), nobody_grad(world);
  RunRanks(world, [&](Context& ctx) {
    auto net = std::make_shared<Net>();
    Load(*net, init);
    DdpOptions options;
    options.find_unused_parameters = true;
    DistributedDataParallel ddp(ctx, net, options);
    at::Tensor xs = x.narrow(0, ctx.rank() * kBatchPerRank, kBatchPerRank);
    at::Tensor ys = y.narrow(0, ctx.rank() * kBatchPerRank, kBatchPerRank);
    Loss(net->forward(xs, ctx.rank() == 0), ys).backward();
    extra_grad[ctx.rank()] = net->extra->weight.grad().clone();
    EXPECT_EQ(ddp.LastStepStats().unused_parameters, ctx.rank() == 0 ? 0 : 2);
    // A second step where no rank uses `extra`: its .grad stays as it was (not zeroed, not averaged).
    net->extra->weight.mutable_grad() = at::full_like(net->extra->weight, 42.0);
    Loss(net->forward(xs, false), ys).backward();
    nobody_grad[ctx.rank()] = net->extra->weight.grad().clone();
  });
  for (int r = 0; r < world; ++r) {
    ASSERT_TRUE(extra_grad[r].defined()) << "rank " << r;
    EXPECT_LE((extra_grad[r] - want_extra).abs().max().item<double>(), 1e-6) << "rank " << r;
    EXPECT_TRUE(at::equal(nobody_grad[r], at::full_like(nobody_grad[r], 42.0))) << "rank " << r;
  }
  EXPECT_TRUE(at::equal(extra_grad[0], extra_grad[1]));
}

TEST(DdpTest, WorldOfOneLeavesGradientsAlone) {
  const std::vector<at::Tensor> init = ReferenceInit();
  const Data data = MakeData(1);
  std::vector<at::Tensor> want = TrainSingle(data, init, /*use_extra=*/false);
  std::vector<at::Tensor> got;
  RunRanks(1, [&](Context& ctx) {
    auto net = std::make_shared<Net>();
    Load(*net, init);
    DdpOptions options;
    options.find_unused_parameters = true;
    DistributedDataParallel ddp(ctx, net, options);
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
    for (int s = 0; s < kSteps; ++s) {
      opt.zero_grad();
      Loss(net->forward(data.x[s], false), data.y[s]).backward();
      opt.step();
    }
    got = Snapshot(*net);
  });
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(at::equal(got[i], want[i])) << "parameter " << i;
}

// A module with a buffer (as batch norm's running statistics) that each rank changes in forward.
struct Counting : torch::nn::Module {
  Counting() {
    fc = register_module("fc", torch::nn::Linear(3, 1));
    seen = register_buffer("seen", at::zeros({2}));
  }
  torch::nn::Linear fc{nullptr};
  at::Tensor seen;
};

TEST(DdpTest, BuffersFollowRankZero) {
  std::vector<at::Tensor> after_init(2), after_step(2);
  RunRanks(2, [&](Context& ctx) {
    auto net = std::make_shared<Counting>();
    net->seen.fill_(10.0 * (ctx.rank() + 1));
    DistributedDataParallel ddp(ctx, net);
    after_init[ctx.rank()] = net->seen.clone();
    net->seen.add_(ctx.rank() + 1.0);  // diverges in "forward"
    net->fc->forward(at::ones({2, 3})).sum().backward();
    after_step[ctx.rank()] = net->seen.clone();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(at::equal(after_init[r], at::full({2}, 10.0))) << "rank " << r;
    EXPECT_TRUE(at::equal(after_step[r], at::full({2}, 11.0))) << "rank " << r;
  }
}

TEST(DdpTest, RankThatSkipsBackwardMakesPeersTimeOutNotHang) {
  std::promise<void> rank0_done;
  std::shared_future<void> done = rank0_done.get_future().share();
  EXPECT_THROW_WITH(RunRanks(
                        2,
                        [&](Context& ctx) {
                          auto net = std::make_shared<Net>();
                          DdpOptions options;
                          options.find_unused_parameters = true;
                          DistributedDataParallel ddp(ctx, net, options);
                          if (ctx.rank() == 0) {
                            try {
                              Loss(net->forward(at::randn({2, 6}), true), at::randn({2, 3})).backward();
                            } catch (...) {
                              rank0_done.set_value();
                              throw;
                            }
                            rank0_done.set_value();
                          } else {
                            done.wait_for(std::chrono::seconds(20));  // stay in the group, silent
                          }
                        },
                        std::chrono::milliseconds(2000)),
                    CommTimeout, "rank 0 of 2");
}

}  // namespace
}  // namespace lakerun::dist
