#include "train/precision.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <limits>

#include "lakerun/base/error.h"
#include "lakerun/train/trainer.h"
#include "lakerun_testing/matchers.h"
#include "train/autocast_compat.h"

namespace lakerun::train {
namespace {

// CPU gradients are checked one by one; CUDA ones through PyTorch's fused check-and-unscale kernel.
void ExpectScalesUnscalesAndSkipsStepsWithNonFiniteGradients(c10::Device device) {
  const auto on = torch::TensorOptions().device(device);
  at::Tensor w = torch::ones({2}, on.requires_grad(true));
  torch::optim::SGD sgd({w}, torch::optim::SGDOptions(1.0));
  GradScalerOptions options;
  options.init_scale = 8.0;
  options.growth_interval = 2;
  GradScaler scaler(options);
  scaler.Scale((w * torch::tensor({1.0f, 2.0f}).to(device)).sum()).backward();
  EXPECT_TRUE(torch::equal(w.grad().cpu(), torch::tensor({8.0f, 16.0f})));
  scaler.Unscale(sgd);
  scaler.Unscale(sgd);  // once per step
  EXPECT_TRUE(torch::equal(w.grad().cpu(), torch::tensor({1.0f, 2.0f})));
  EXPECT_TRUE(scaler.Step(sgd));
  EXPECT_TRUE(torch::equal(w.detach().cpu(), torch::tensor({0.0f, -1.0f})));
  scaler.Update();
  EXPECT_EQ(scaler.scale(), 8.0f);
  EXPECT_EQ(scaler.growth_tracker(), 1);

  sgd.zero_grad();
  scaler.Scale((w * std::numeric_limits<float>::infinity()).sum()).backward();
  EXPECT_FALSE(scaler.Step(sgd));  // skipped: the weights stay
  EXPECT_TRUE(torch::equal(w.detach().cpu(), torch::tensor({0.0f, -1.0f})));
  scaler.Update();
  EXPECT_EQ(scaler.scale(), 4.0f);  // backoff 0.5
  EXPECT_EQ(scaler.growth_tracker(), 0);

  for (int i = 0; i < 2; ++i) {
    sgd.zero_grad();
    scaler.Scale(w.sum()).backward();
    EXPECT_TRUE(scaler.Step(sgd));
    scaler.Update();
  }
  EXPECT_EQ(scaler.scale(), 8.0f);  // grew after growth_interval clean steps

  GradScaler restored;
  restored.load_state_dict(StateDict::Decode(scaler.state_dict().Encode()));
  EXPECT_EQ(restored.scale(), 8.0f);
  EXPECT_EQ(restored.state_dict(), scaler.state_dict());
}

TEST(GradScalerTest, ScalesUnscalesAndSkipsStepsWithNonFiniteGradients) {
  ExpectScalesUnscalesAndSkipsStepsWithNonFiniteGradients(c10::Device(c10::kCPU));
}

TEST(GradScalerTest, SameOnCuda) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  ExpectScalesUnscalesAndSkipsStepsWithNonFiniteGradients(c10::Device(c10::kCUDA, 0));
}

TEST(PrecisionTest, UnknownOrUnavailablePrecisionIsAConfigErrorNamingTheOption) {
  TrainerOptions o;
  EXPECT_THROW_WITH(ParsePrecision("--precision", "8-mixed"), ConfigError, "--precision: '8-mixed' is not one of "
                    "32-true, bf16-mixed, 16-mixed (did you mean '16-mixed'?)");
  if (!at::hasCUDA()) {
    o.precision = Precision::k16Mixed;
    EXPECT_THROW_WITH(Trainer{o}, ConfigError, "precision='16-mixed'", "CUDA");
  }
  o.precision = ParsePrecision("--precision", "32");  // Lightning's alias of 32-true
  EXPECT_EQ(o.precision, Precision::k32True);
  EXPECT_NO_THROW(Trainer{o});
}

// y = x·w with w = (1, -2, 0.5, 3): a linear layer learns it; the step records its output's dtype and its loss.
struct LinearNet : Module {
  LinearNet() {
    torch::manual_seed(3);
    fc = register_module("fc", torch::nn::Linear(4, 1));
  }
  at::Tensor TrainingStep(const Batch& b, int64_t) override {
    at::Tensor out = fc(b.at("x"));
    dtypes.push_back(out.scalar_type());
    at::Tensor loss = torch::mse_loss(out.to(at::kFloat), b.at("y"));
    losses.push_back(loss.item<float>());
    return loss;
  }
  Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.05))};
  }
  torch::nn::Linear fc{nullptr};
  std::vector<at::ScalarType> dtypes;
  std::vector<float> losses;
};

// Fits LinearNet for 3 epochs of 4 batches under `precision` on `accelerator` and checks what autocast must do:
// `activation` inside the step, float32 weights that change, a finite falling loss, autocast off afterwards.
void ExpectAutocastStepsThatLearn(const std::string& precision, const std::string& accelerator,
                                  c10::DeviceType device, at::ScalarType activation) {
  SCOPED_TRACE(precision + " on " + accelerator);
  torch::manual_seed(7);
  at::Tensor x = torch::randn({32, 4});
  at::Tensor y = x.matmul(torch::tensor({1.0f, -2.0f, 0.5f, 3.0f}).unsqueeze(1));
  TensorBatchSource train({{"x", x}, {"y", y}}, 8);
  LinearNet net;
  const at::Tensor before = net.fc->weight.detach().clone();
  TrainerOptions o;
  o.max_epochs = 3;
  o.distributed = false;
  o.progress_every_n_steps = 0;
  o.accelerator = ParseAccelerator("accelerator", accelerator);  // the spellings a config file would hold
  o.precision = ParsePrecision("precision", precision);
  Trainer t(o);
  t.Fit(net, train);
  EXPECT_EQ(net.fc->weight.device().type(), device);
  ASSERT_EQ(net.dtypes.size(), 12u);
  for (auto d : net.dtypes) EXPECT_EQ(d, activation);
  for (float l : net.losses) EXPECT_TRUE(std::isfinite(l));
  EXPECT_LT(net.losses.back(), net.losses.front());
  EXPECT_FALSE(torch::equal(net.fc->weight.cpu(), before));
  EXPECT_EQ(net.fc->weight.scalar_type(), at::kFloat);  // weights stay float32
  EXPECT_FALSE(compat::AutocastEnabled(device));         // autocast ends with the step
  EXPECT_EQ(net.fc(x.to(net.fc->weight.device())).scalar_type(), at::kFloat);
}

TEST(PrecisionTest, Bf16MixedAutocastsTheStepOnCpuAndStillLearns) {
  // Accelerator "cpu": the CPU autocast path, also on a machine with a GPU.
  ExpectAutocastStepsThatLearn("bf16-mixed", "cpu", c10::kCPU, at::kBFloat16);
}

TEST(PrecisionTest, MixedPrecisionOnCudaAutocastsTheStepAndStillLearns) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  ExpectAutocastStepsThatLearn("16-mixed", "cuda", c10::kCUDA, at::kHalf);
  ExpectAutocastStepsThatLearn("bf16-mixed", "cuda", c10::kCUDA, at::kBFloat16);
}

}  // namespace
}  // namespace lakerun::train
