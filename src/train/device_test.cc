#include "train/device.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <gtest/gtest.h>

#include "lakerun/base/error.h"
#include "lakerun/train/trainer.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::train {
namespace {

const c10::Device kCpu(c10::kCPU);
c10::Device Cuda(int index) { return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index)); }

DeviceFacts Single(bool cuda) { return DeviceFacts{cuda, std::nullopt, 1}; }
DeviceFacts Group(bool cuda, c10::Device device, int64_t world) { return DeviceFacts{cuda, device, world}; }

TEST(ChooseDeviceTest, FollowsTheProcessGroupAsLightningsAutoAcceleratorDoes) {
  EXPECT_EQ(ChooseDevice(Accelerator::kAuto, Single(false)), kCpu);
  EXPECT_EQ(ChooseDevice(Accelerator::kAuto, Single(true)), Cuda(0));
  EXPECT_EQ(ChooseDevice(Accelerator::kAuto, Group(true, Cuda(1), 4)), Cuda(1));  // NCCL: the rank's own GPU
  EXPECT_EQ(ChooseDevice(Accelerator::kAuto, Group(true, kCpu, 2)), kCpu);  // ranks on a Gloo group stay on the CPU
  EXPECT_EQ(ChooseDevice(Accelerator::kAuto, Group(true, kCpu, 1)), Cuda(0));  // one rank joined dist: it has CUDA
  EXPECT_EQ(ChooseDevice(Accelerator::kCpu, Group(true, Cuda(1), 4)), kCpu);
  EXPECT_EQ(ChooseDevice(Accelerator::kCuda, Single(true)), Cuda(0));
  EXPECT_EQ(ChooseDevice(Accelerator::kCuda, Group(true, Cuda(3), 4)), Cuda(3));
  EXPECT_EQ(ChooseDevice(ParseAccelerator("accelerator", "gpu"), Group(true, Cuda(2), 4)), Cuda(2));
}

TEST(ChooseDeviceTest, RefusesWhatCannotRunNamingTheOption) {
  EXPECT_THROW_WITH(ChooseDevice(Accelerator::kCuda, Single(false)), ConfigError, "accelerator='cuda'", "CUDA");
  EXPECT_THROW_WITH(ChooseDevice(Accelerator::kCuda, Group(true, kCpu, 2)), ConfigError, "2 ranks", "NCCL", "cpu");
  EXPECT_THROW_WITH(ParseAccelerator("accelerator", "tpu"), ConfigError, "accelerator", "auto, cpu, cuda", "tpu");
  EXPECT_THROW_WITH(ParseAccelerator("accelerator", ""), ConfigError, "accelerator");
}

TEST(MoveBatchTest, TensorsAlreadyOnTheDeviceAreLeftAsTheyAre) {
  Batch batch;
  batch.tensors["x"] = torch::arange(6, torch::kFloat).reshape({3, 2});
  batch.tensors["y"] = torch::arange(3);
  batch.sample_ids = torch::tensor({4, 5, 6});
  const void* x = batch.tensors["x"].data_ptr();
  const void* ids = batch.sample_ids.data_ptr();
  MoveBatch(batch, kCpu);
  EXPECT_EQ(batch.tensors["x"].data_ptr(), x);
  EXPECT_EQ(batch.sample_ids.data_ptr(), ids);
  EXPECT_TRUE(torch::equal(batch.tensors["y"], torch::arange(3)));
}

struct Linear : Module {
  Linear() { fc = register_module("fc", torch::nn::Linear(2, 1)); }
  at::Tensor TrainingStep(const Batch& b, int64_t) override {
    EXPECT_EQ(b.at("x").device(), device());  // batches arrive on the module's device
    return torch::mse_loss(fc(b.at("x")), b.at("y"));
  }
  Optimizers ConfigureOptimizers() override {
    EXPECT_EQ(fc->weight.device(), device());  // moved before the optimizers are built
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(0.1))};
  }
  torch::nn::Linear fc{nullptr};
};

TEST(TrainerDeviceTest, TheModuleLearnsWhereTheTrainerPutsIt) {
  torch::manual_seed(1);
  at::Tensor x = torch::randn({16, 2});
  TensorBatchSource train({{"x", x}, {"y", x.sum(1, /*keepdim=*/true)}}, 4);
  for (Accelerator accelerator : {Accelerator::kAuto, Accelerator::kCpu}) {
    TrainerOptions o;
    o.max_epochs = 2;
    o.accelerator = accelerator;
    o.progress_every_n_steps = 0;
    Linear model;
    Trainer t(o);
    t.Fit(model, train);
    const c10::Device expected = accelerator == Accelerator::kAuto && at::hasCUDA() ? Cuda(0) : kCpu;
    EXPECT_EQ(model.device(), expected) << ToString(accelerator);
    EXPECT_EQ(model.fc->weight.device(), expected) << ToString(accelerator);
    EXPECT_EQ(t.global_step(), 8) << ToString(accelerator);
  }
}

}  // namespace
}  // namespace lakerun::train
