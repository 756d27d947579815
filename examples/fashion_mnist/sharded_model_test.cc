// The main example's MNIST CNN under every ZeRO level against DDP: 20 Adam steps on 2 and 4 ranks (threads) end
// within 1e-5 of DDP's parameters, and every rank holds the same bits.
#include <lakerun/dist/sharded.h>

#include <gtest/gtest.h>

#include <torch/nn/functional/loss.h>

#include <mutex>

#include "dist/rank_threads.h"
#include "dist/sharded_test_model.h"
#include "model.h"

namespace lakerun::examples {
namespace {

using dist::testing::Parallel;

std::shared_ptr<NetImpl> MakeNet() {
  static std::mutex mu;  // ranks are threads: seeding and drawing weights must not interleave
  std::lock_guard<std::mutex> lock(mu);
  at::manual_seed(1);
  NetOptions options;
  options.dropout = false;  // ranks as threads would share dropout's generator
  return std::make_shared<NetImpl>(options);
}

// Rank `rank`'s 16 images of step `step`: noise around one pattern per class, so the loss falls.
at::Tensor CnnLoss(NetImpl& net, int step, int rank) {
  at::Generator gen = at::detail::createCPUGenerator(700 + 31 * step + rank);
  at::Tensor labels = at::randint(10, {16}, gen);
  at::Tensor images = at::randn({16, 1, 28, 28}, gen) * 0.3 + labels.view({16, 1, 1, 1}).to(at::kFloat) / 10;
  return torch::nn::functional::nll_loss(net.forward(images), labels);
}

std::vector<std::vector<at::Tensor>> Train(int world, Parallel parallel) {
  dist::ShardedOptions options;
  options.unit_min_params = 5000;  // level 3: conv2 and fc1 are units, conv1 and fc2 the root unit
  std::vector<std::vector<at::Tensor>> out(world);
  dist::testing::RunRanks(world, [&](dist::Context& ctx) {
    out[ctx.rank()] = dist::testing::TrainModel<NetImpl>(ctx, parallel, MakeNet, CnnLoss, 20, options);
  }, std::chrono::seconds(120));
  return out;
}

double MaxDiff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
  return diff;
}

class CnnUnderEveryLevelTest : public ::testing::TestWithParam<int> {};

TEST_P(CnnUnderEveryLevelTest, EndsWithinAMillionthOfDdpOnEveryRank) {
  const int world = GetParam();
  const auto ddp = Train(world, Parallel::kDdp);
  for (Parallel level : {Parallel::kZero1, Parallel::kZero2, Parallel::kZero3}) {
    const auto zero = Train(world, level);
    for (int r = 0; r < world; ++r) {
      for (std::size_t i = 0; i < zero[r].size(); ++i) {
        EXPECT_TRUE(at::equal(zero[r][i], zero[0][i])) << Name(level) << " rank " << r << " parameter " << i;
      }
      EXPECT_LE(MaxDiff(zero[r], ddp[r]), 1e-5) << Name(level) << " rank " << r;
    }
    std::printf("[ %s, %d ranks ] max |%s - ddp| = %g\n", Name(level), world, Name(level), MaxDiff(zero[0], ddp[0]));
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, CnnUnderEveryLevelTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "_ranks"; });

}  // namespace
}  // namespace lakerun::examples
