// TrainerOptions::strategy on two ranks (threads, each with its own lakerun::dist context): the same Module under
// DDP and every ZeRO level ends with the same weights, and each resumes the others' checkpoints.
#include "lakerun/train/strategy.h"

#include <torch/torch.h>

#include "dist/rank_threads.h"
#include "lakerun/base/error.h"
#include "lakerun/dist/init.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::train {
namespace {

constexpr int kWorld = 2;

struct Net : Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 9));
    fc2 = register_module("fc2", torch::nn::Linear(9, 1));
  }
  at::Tensor TrainingStep(const Batch& b, int64_t) override {
    at::Tensor loss = torch::mse_loss(fc2(torch::tanh(fc1(b.at("x")))), b.at("y"));
    Log("loss", loss);
    return loss;
  }
  Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::Adam>(parameters(), torch::optim::AdamOptions(0.02).weight_decay(1e-3))};
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

std::vector<at::Tensor> Weights(Net& net) {
  std::vector<at::Tensor> out;
  for (const auto& p : net.parameters()) out.push_back(p.detach().clone());
  return out;
}

std::vector<at::Tensor> InitialWeights() {
  torch::manual_seed(3);
  Net net;
  return Weights(net);
}

// 48 rows; rank r trains on rows r, r + 2, ...: 24 rows, 6 batches of 4 per epoch.
struct Data {
  Data() {
    torch::manual_seed(7);
    x = torch::randn({48, 4});
    y = torch::sin(x.sum(1, true));
  }
  TensorBatchSource For(int rank) const {
    at::Tensor rows = torch::arange(rank, 48, kWorld);
    return TensorBatchSource({{"x", x.index_select(0, rows)}, {"y", y.index_select(0, rows)}}, 4);
  }
  at::Tensor x, y;
};

struct FitCase {
  Strategy strategy = Strategy::kDdp;
  int64_t max_epochs = 4;
  double clip = 0;
  std::string dir;        ///< checkpoints (save_last) go to dir/checkpoints
  std::string ckpt_path;  ///< resume from
  Precision precision = Precision::k32True;
  std::optional<c10::ScalarType> param_dtype{};  ///< fsdp's mixed precision
};

// Rank 0's weights after fitting `c` on kWorld ranks; every rank must end with the same bits.
std::vector<at::Tensor> FitOnRanks(const FitCase& c) {
  const Data data;
  const std::vector<at::Tensor> init = InitialWeights();
  std::vector<std::vector<at::Tensor>> weights(kWorld);
  dist::testing::RunRanks(kWorld, [&](dist::Context& ctx) {
    Net net;
    {
      torch::NoGradGuard no_grad;
      auto params = net.parameters();
      for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(init[i]);
    }
    TrainerOptions o;
    o.dist_context = &ctx;
    o.strategy = c.strategy;
    o.fsdp.unit_min_params = 20;  // fsdp: fc1 is a unit, fc2 is in the root unit
    o.fsdp.param_dtype = c.param_dtype;
    o.precision = c.precision;
    o.max_epochs = c.max_epochs;
    o.accumulate_grad_batches = 2;
    o.gradient_clip_val = c.clip;
    o.progress_every_n_steps = 0;
    o.default_root_dir = c.dir;
    ModelCheckpointOptions mc;
    mc.save_last = true;
    mc.save_top_k = 0;
    Trainer trainer(o, {std::make_shared<ModelCheckpoint>(mc)});
    TensorBatchSource train = data.For(ctx.rank());
    trainer.Fit(net, train, nullptr, c.ckpt_path);
    weights[ctx.rank()] = Weights(net);
  }, std::chrono::seconds(60));
  for (std::size_t i = 0; i < weights[0].size(); ++i) {
    EXPECT_TRUE(at::equal(weights[1][i], weights[0][i])) << "ranks differ at parameter " << i;
  }
  return weights[0];
}

double MaxDiff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
  return diff;
}

TEST(StrategyTest, NamesRoundTripAndLightningsAliasesParse) {
  for (Strategy s : {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kFsdp}) {
    EXPECT_EQ(ParseStrategy("strategy", ToString(s)), s);
  }
  EXPECT_STREQ(ToString(Strategy::kFsdp), "fsdp");
  EXPECT_EQ(ParseStrategy("strategy", "deepspeed_stage_1"), Strategy::kZero1);
  EXPECT_EQ(ParseStrategy("strategy", "deepspeed_stage_2"), Strategy::kZero2);
  EXPECT_EQ(ParseStrategy("strategy", "deepspeed_stage_3"), Strategy::kFsdp);
  EXPECT_EQ(ParseStrategy("strategy", "zero3"), Strategy::kFsdp);
  EXPECT_THROW_WITH(ParseStrategy("strategy", "fsdp2"), ConfigError, "strategy: 'fsdp2' is not one of ddp, zero1, zero2, fsdp");
  EXPECT_THROW_WITH(ParseStrategy("--strategy", "zero4"), ConfigError, "(did you mean 'zero1'?)");
}

TEST(StrategyTest, ShardedStrategiesRefuseTheFloat16GradScaler) {
  TrainerOptions o;
  o.strategy = Strategy::kZero1;
  o.precision = Precision::k16Mixed;
  EXPECT_THROW_WITH(Trainer t(o), ConfigError, "strategy 'zero1'", "'16-mixed'");
}

TEST(TrainerStrategyTest, TheSameModuleEndsWithTheSameWeightsUnderEveryStrategy) {
  testing::TempDir dir;
  FitCase c;
  c.clip = 0.05;
  c.dir = dir.Join("ddp");
  const std::vector<at::Tensor> ddp = FitOnRanks(c);
  c.strategy = Strategy::kZero1;
  c.dir = dir.Join("zero1");
  const std::vector<at::Tensor> zero1 = FitOnRanks(c);
  c.strategy = Strategy::kZero2;
  c.dir = dir.Join("zero2");
  const std::vector<at::Tensor> zero2 = FitOnRanks(c);
  c.strategy = Strategy::kFsdp;
  c.dir = dir.Join("fsdp");
  const std::vector<at::Tensor> fsdp = FitOnRanks(c);
  EXPECT_EQ(MaxDiff(zero1, ddp), 0.0) << "level 1 clips and steps as DDP does";
  EXPECT_LE(MaxDiff(zero2, ddp), 1e-6) << "level 2's clipping norm is a sum of per-rank parts";
  EXPECT_LE(MaxDiff(fsdp, ddp), 1e-6) << "level 3 clips as level 2 does";
  EXPECT_GT(MaxDiff(ddp, InitialWeights()), 0.01) << "training moved the weights";
}

// fsdp with bf16 parameters under bf16-mixed against fsdp with fp32 ones. This module's Linears take 2-D input, so
// autocast casts weights and biases alike and each micro-batch's forward and gradients are the same bits either way
// (checkpoints gather the fp32 masters in between); the runs differ only because the 2 accumulated micro-batches'
// gradients are summed in bf16 (as FSDP's no_sync does with bf16 parameters). The module ends with fp32 weights.
TEST(TrainerStrategyTest, FsdpMixedPrecisionEndsCloseToFullPrecisionWithFloatWeights) {
  testing::TempDir dir;
  FitCase c;
  c.strategy = Strategy::kFsdp;
  c.precision = Precision::kBf16Mixed;
  c.dir = dir.Join("fp32");
  const std::vector<at::Tensor> full = FitOnRanks(c);
  c.param_dtype = at::kBFloat16;
  c.dir = dir.Join("bf16");
  const std::vector<at::Tensor> mixed = FitOnRanks(c);
  const std::vector<at::Tensor> init = InitialWeights();
  double apart = 0, moved = 0;
  for (std::size_t i = 0; i < init.size(); ++i) {
    EXPECT_EQ(mixed[i].scalar_type(), at::kFloat) << i;
    apart += (mixed[i] - full[i]).pow(2).sum().item<double>();
    moved += (full[i] - init[i]).pow(2).sum().item<double>();
  }
  EXPECT_GT(apart, 0.0);
  EXPECT_LT(std::sqrt(apart / moved), 0.25);
}

TEST(TrainerStrategyTest, EachStrategyResumesTheOthersCheckpoints) {
  testing::TempDir dir;
  FitCase straight;
  straight.dir = dir.Join("straight");
  const std::vector<at::Tensor> want = FitOnRanks(straight);
  for (Strategy first : {Strategy::kDdp, Strategy::kZero2, Strategy::kFsdp}) {
    for (Strategy second : {Strategy::kDdp, Strategy::kZero1, Strategy::kZero2, Strategy::kFsdp}) {
      if (first == second) continue;
      const std::string run = dir.Join(std::string(ToString(first)) + "-" + ToString(second));
      FitCase head;
      head.strategy = first;
      head.max_epochs = 2;
      head.dir = run;
      FitOnRanks(head);
      FitCase tail;
      tail.strategy = second;
      tail.dir = run;
      tail.ckpt_path = run + "/checkpoints/last.ckpt";
      EXPECT_EQ(MaxDiff(FitOnRanks(tail), want), 0.0) << ToString(first) << " -> " << ToString(second);
    }
  }
}

}  // namespace
}  // namespace lakerun::train
