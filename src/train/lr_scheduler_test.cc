// Golden tests: lakerun's schedulers against learning rates computed by PyTorch 1.13's torch.optim.lr_scheduler
// (SGD with two param groups, lr 0.1 and 0.037; hex floats, compared bitwise). Regenerate with
// src/train/testdata/lr_scheduler_golden.py.
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cmath>

#include "lakerun/base/error.h"
#include "lakerun/train/lr_schedulers.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::train {
namespace {

const std::vector<std::vector<double>> kStepLR = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.eb851eb851eb8p-6, 0x1.6bb98c7e28240p-7},
    {0x1.eb851eb851eb8p-6, 0x1.6bb98c7e28240p-7},
    {0x1.eb851eb851eb8p-6, 0x1.6bb98c7e28240p-7},
    {0x1.26e978d4fdf3bp-7, 0x1.b4784230fcf80p-9},
    {0x1.26e978d4fdf3bp-7, 0x1.b4784230fcf80p-9},
    {0x1.26e978d4fdf3bp-7, 0x1.b4784230fcf80p-9},
    {0x1.61e4f765fd8adp-9, 0x1.05e1c15097c80p-10},
    {0x1.61e4f765fd8adp-9, 0x1.05e1c15097c80p-10},
    {0x1.61e4f765fd8adp-9, 0x1.05e1c15097c80p-10},
    {0x1.a8ac5c13fd0cfp-11, 0x1.3a421b2d82f00p-12},
};
const std::vector<std::vector<double>> kMultiStepLR = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.1eb851eb851ebp-4, 0x1.a858793dd97f5p-6},
    {0x1.1eb851eb851ebp-4, 0x1.a858793dd97f5p-6},
    {0x1.1eb851eb851ebp-4, 0x1.a858793dd97f5p-6},
    {0x1.18fc504816effp-5, 0x1.9fdbd2fa0d779p-7},
    {0x1.18fc504816effp-5, 0x1.9fdbd2fa0d779p-7},
    {0x1.18fc504816effp-5, 0x1.9fdbd2fa0d779p-7},
    {0x1.18fc504816effp-5, 0x1.9fdbd2fa0d779p-7},
    {0x1.89613d31b9b65p-6, 0x1.2319e07bd63a1p-7},
    {0x1.89613d31b9b65p-6, 0x1.2319e07bd63a1p-7},
    {0x1.89613d31b9b65p-6, 0x1.2319e07bd63a1p-7},
    {0x1.89613d31b9b65p-6, 0x1.2319e07bd63a1p-7},
};
const std::vector<std::vector<double>> kExponentialLR = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.7ced916872b03p-4, 0x1.19e30014f8b59p-5},
    {0x1.62435696e58a4p-4, 0x1.0627971dbe56fp-5},
    {0x1.4976f1cee4d51p-4, 0x1.e79b8ed60afdep-6},
    {0x1.3266f03dd9ef2p-4, 0x1.c579a0ff61433p-6},
    {0x1.1cf43676f632ep-4, 0x1.a5bb5ad905f96p-6},
    {0x1.0901d67dfe90ap-4, 0x1.8835eb87458e5p-6},
    {0x1.ece9d183f3174p-5, 0x1.6cc1817100afep-6},
    {0x1.ca68cfa63bacbp-5, 0x1.5339148a5f5bep-6},
    {0x1.aa521d461de5cp-5, 0x1.3b7a3461f7676p-6},
    {0x1.8c7a7243c4c3cp-5, 0x1.2564d9ad075dap-6},
    {0x1.70b98e1b2f4fbp-5, 0x1.10db3b141de3ep-6},
    {0x1.56ea01994828ep-5, 0x1.fb834a0bd1322p-7},
};
const std::vector<std::vector<double>> kCosineAnnealingLR = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.72e0b8651adafp-4, 0x1.12f141c6d4c9bp-5},
    {0x1.0d8076dbe38f2p-4, 0x1.926dc7232a998p-6},
    {0x1.20636c64e4e9dp-5, 0x1.b8538c596943cp-7},
    {0x1.568ba549d9496p-7, 0x1.22d42708d6a03p-8},
    {0x1.0624dd2f1a9fcp-10, 0x1.0624dd2f1a9fcp-10},
    {0x1.568ba549d9494p-7, 0x1.22d42708d6a02p-8},
    {0x1.20636c64e4ea0p-5, 0x1.b8538c5969440p-7},
    {0x1.0d8076dbe38f5p-4, 0x1.926dc7232a99bp-6},
    {0x1.72e0b8651adb3p-4, 0x1.12f141c6d4c9dp-5},
    {0x1.999999999999dp-4, 0x1.2f1a9fbe76c8dp-5},
    {0x1.72e0b8651adb5p-4, 0x1.12f141c6d4c9ep-5},
    {0x1.0d8076dbe38f6p-4, 0x1.926dc7232a99bp-6},
    {0x1.20636c64e4ea3p-5, 0x1.b8538c5969442p-7},
    {0x1.568ba549d949cp-7, 0x1.22d42708d6a08p-8},
    {0x1.0624dd2f1a9fcp-10, 0x1.0624dd2f1a9fcp-10},
    {0x1.568ba549d9494p-7, 0x1.22d42708d6a02p-8},
    {0x1.20636c64e4ea0p-5, 0x1.b8538c5969440p-7},
    {0x1.0d8076dbe38f6p-4, 0x1.926dc7232a99ep-6},
    {0x1.72e0b8651adb4p-4, 0x1.12f141c6d4ca0p-5},
    {0x1.99999999999a1p-4, 0x1.2f1a9fbe76c93p-5},
    {0x1.72e0b8651adb7p-4, 0x1.12f141c6d4ca2p-5},
    {0x1.0d8076dbe3900p-4, 0x1.926dc7232a9aep-6},
    {0x1.20636c64e4ea7p-5, 0x1.b8538c596944cp-7},
};
const std::vector<std::vector<double>> kLambdaLR = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.21a1851ff630ap-4, 0x1.aca75e9ff17b2p-6},
    {0x1.d8f7208e6b82fp-5, 0x1.5dfe8dda07e0ep-6},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.6e5b7d16657e1p-5, 0x1.0f1abdd840dd4p-6},
    {0x1.4e6fdf33cf033p-5, 0x1.eef77d8a1de5fp-7},
    {0x1.35a0e521ff985p-5, 0x1.ca400b6fc1f5ep-7},
    {0x1.21a1851ff630ap-5, 0x1.aca75e9ff17b2p-7},
    {0x1.1111111111111p-5, 0x1.94237fa89e60ep-7},
    {0x1.030dc4ea03a73p-5, 0x1.7f664c6494c43p-7},
    {0x1.edff061bbd9d7p-6, 0x1.6d8ea33d7cf47p-7},
    {0x1.d8f7208e6b82fp-6, 0x1.5dfe8dda07e0ep-7},
    {0x1.c6691005fda8ap-6, 0x1.5043819e0881ep-7},
};
const std::vector<std::vector<double>> kLinearLR = {
    {0x1.999999999999ap-6, 0x1.2f1a9fbe76c8bp-7},
    {0x1.3333333333334p-5, 0x1.c6a7ef9db22d0p-7},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8ap-6},
    {0x1.0000000000000p-4, 0x1.7ae147ae147acp-6},
    {0x1.3333333333333p-4, 0x1.c6a7ef9db22cep-6},
    {0x1.6666666666667p-4, 0x1.09374bc6a7ef8p-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c89p-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c89p-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c89p-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c89p-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c89p-5},
};
const std::vector<std::vector<double>> kOneCycleLR = {
    {0x1.47ae147ae1480p-6, 0x1.47ae147ae1480p-6, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.64a89059f1910p-4, 0x1.64a89059f1910p-4, 0x1.df3ecf70db936p-1, 0x1.df3ecf70db936p-1},
    {0x1.00d3a3eed5f36p-2, 0x1.00d3a3eed5f36p-2, 0x1.cdc7d21fa7948p-1, 0x1.cdc7d21fa7948p-1},
    {0x1.adc01d1a4dad9p-2, 0x1.adc01d1a4dad9p-2, 0x1.bbc4858075c67p-1, 0x1.bbc4858075c67p-1},
    {0x1.ff47656b8ffbcp-2, 0x1.ff47656b8ffbcp-2, 0x1.b3466df7fede5p-1, 0x1.b3466df7fede5p-1},
    {0x1.f8ced35260affp-2, 0x1.f8ced35260affp-2, 0x1.b3eb5174d3e4dp-1, 0x1.b3eb5174d3e4dp-1},
    {0x1.e076f99b1d9e0p-2, 0x1.e076f99b1d9e0p-2, 0x1.b65a8177519bcp-1, 0x1.b65a8177519bcp-1},
    {0x1.b8916daf6da8fp-2, 0x1.b8916daf6da8fp-2, 0x1.ba57dd4dd4a11p-1, 0x1.ba57dd4dd4a11p-1},
    {0x1.83e1e6aa71720p-2, 0x1.83e1e6aa71720p-2, 0x1.bf9c9f631913bp-1, 0x1.bf9c9f631913bp-1},
    {0x1.460ef7d6dc27dp-2, 0x1.460ef7d6dc27dp-2, 0x1.c5cb527d8d2e0p-1, 0x1.c5cb527d8d2e0p-1},
    {0x1.03614e867ae02p-2, 0x1.03614e867ae02p-2, 0x1.cc764b91dcb97p-1, 0x1.cc764b91dcb97p-1},
    {0x1.80ef68e0ca577p-3, 0x1.80ef68e0ca577p-3, 0x1.d3274321ea2acp-1, 0x1.d3274321ea2acp-1},
    {0x1.03ea352038f45p-3, 0x1.03ea352038f45p-3, 0x1.d967875bd7e76p-1, 0x1.d967875bd7e76p-1},
    {0x1.30b9695ebcaa7p-4, 0x1.30b9695ebcaa7p-4, 0x1.dec835972cb4ap-1, 0x1.dec835972cb4ap-1},
    {0x1.16eb010eed3bbp-5, 0x1.16eb010eed3bbp-5, 0x1.e2e9e94b6d3c0p-1, 0x1.e2e9e94b6d3c0p-1},
    {0x1.1be23a9695867p-7, 0x1.1be23a9695867p-7, 0x1.e5835834c833bp-1, 0x1.e5835834c833bp-1},
    {0x1.0c6f7a0b5ed8dp-19, 0x1.0c6f7a0b5ed8dp-19, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
};
const std::vector<std::vector<double>> kOneCycleLRThreePhaseLinear = {
    {0x1.47ae147ae147bp-6, 0x1.47ae147ae147bp-6, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.1eb851eb851ebp-3, 0x1.1eb851eb851ebp-3, 0x1.d999999999999p-1, 0x1.d999999999999p-1},
    {0x1.0a3d70a3d70a4p-2, 0x1.0a3d70a3d70a4p-2, 0x1.cccccccccccccp-1, 0x1.cccccccccccccp-1},
    {0x1.851eb851eb852p-2, 0x1.851eb851eb852p-2, 0x1.c000000000000p-1, 0x1.c000000000000p-1},
    {0x1.0000000000000p-1, 0x1.0000000000000p-1, 0x1.b333333333333p-1, 0x1.b333333333333p-1},
    {0x1.851eb851eb852p-2, 0x1.851eb851eb852p-2, 0x1.c000000000000p-1, 0x1.c000000000000p-1},
    {0x1.0a3d70a3d70a4p-2, 0x1.0a3d70a3d70a4p-2, 0x1.cccccccccccccp-1, 0x1.cccccccccccccp-1},
    {0x1.1eb851eb851ecp-3, 0x1.1eb851eb851ecp-3, 0x1.d999999999999p-1, 0x1.d999999999999p-1},
    {0x1.47ae147ae1480p-6, 0x1.47ae147ae1480p-6, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.29e4d5d80e497p-6, 0x1.29e4d5d80e497p-6, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.0c1b97353b4b3p-6, 0x1.0c1b97353b4b3p-6, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.dca4b124d099ep-7, 0x1.dca4b124d099ep-7, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.a11233df2a9d6p-7, 0x1.a11233df2a9d6p-7, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.657fb69984a0ep-7, 0x1.657fb69984a0ep-7, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.29ed3953dea46p-7, 0x1.29ed3953dea46p-7, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.dcb5781c714fcp-8, 0x1.dcb5781c714fcp-8, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.65907d912556cp-8, 0x1.65907d912556cp-8, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.dcd7060bb2bb8p-9, 0x1.dcd7060bb2bb8p-9, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.dd1a21ea35930p-10, 0x1.dd1a21ea35930p-10, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
    {0x1.0c6f7a0b5e000p-19, 0x1.0c6f7a0b5e000p-19, 0x1.e666666666666p-1, 0x1.e666666666666p-1},
};
const std::vector<std::vector<double>> kReduceLROnPlateau = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.999999999999ap-5, 0x1.2f1a9fbe76c8bp-6},
    {0x1.999999999999ap-6, 0x1.47ae147ae147bp-7},
    {0x1.999999999999ap-6, 0x1.47ae147ae147bp-7},
    {0x1.999999999999ap-6, 0x1.47ae147ae147bp-7},
    {0x1.999999999999ap-6, 0x1.47ae147ae147bp-7},
    {0x1.999999999999ap-6, 0x1.47ae147ae147bp-7},
    {0x1.999999999999ap-7, 0x1.47ae147ae147bp-7},
};
const std::vector<double> kPlateauMetrics = {1.0, 0.9, 0.95, 0.91, 0.9, 0.9, 0.9, 0.89, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.6, 0.6};
const std::vector<std::vector<double>> kReduceLROnPlateauMaxAbs = {
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.999999999999ap-4, 0x1.2f1a9fbe76c8bp-5},
    {0x1.47ae147ae147cp-7, 0x1.e4f765fd8adacp-9},
    {0x1.0624dd2f1a9fdp-10, 0x1.83f91e646f157p-12},
    {0x1.a36e2eb1c432fp-14, 0x1.3660e51d25aacp-15},
};
const std::vector<double> kPlateauMaxMetrics = {0.1, 0.2, 0.2, 0.2, 0.2};

std::shared_ptr<torch::optim::SGD> TwoGroups(double momentum = 0.0) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<at::Tensor>{torch::zeros({1}, torch::requires_grad())},
                      std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(0.1).momentum(momentum)));
  groups.emplace_back(std::vector<at::Tensor>{torch::zeros({1}, torch::requires_grad())},
                      std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(0.037).momentum(momentum)));
  return std::make_shared<torch::optim::SGD>(std::move(groups), torch::optim::SGDOptions(0.1).momentum(momentum));
}

// The lrs (and momenta with `momentum`) of both groups after construction and after each step, bitwise.
void ExpectSchedule(const std::shared_ptr<torch::optim::SGD>& opt, LRScheduler& s,
                    const std::vector<std::vector<double>>& expected, const std::vector<double>* metrics = nullptr,
                    bool momentum = false) {
  for (size_t i = 0; i < expected.size(); ++i) {
    std::vector<double> got = {GetLearningRate(*opt, 0), GetLearningRate(*opt, 1)};
    if (momentum) {
      got.push_back(*GetMomentum(*opt, 0));
      got.push_back(*GetMomentum(*opt, 1));
    }
    ASSERT_EQ(got.size(), expected[i].size());
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_EQ(got[j], expected[i][j]) << s.class_name() << " step " << i << " value " << j << ": " << std::hexfloat
                                        << got[j] << " vs " << expected[i][j];
    }
    if (i + 1 == expected.size()) break;
    if (metrics != nullptr) {
      s.Step((*metrics)[i]);
    } else {
      s.Step();
    }
  }
}

TEST(LrSchedulerTest, StepLRMatchesPyTorch) {
  auto opt = TwoGroups();
  StepLR s(opt, {/*step_size=*/3, /*gamma=*/0.3});
  ExpectSchedule(opt, s, kStepLR);
  EXPECT_EQ(s.last_epoch(), 12);
}

TEST(LrSchedulerTest, MultiStepLRMatchesPyTorchWithARepeatedMilestone) {
  auto opt = TwoGroups();
  MultiStepLR s(opt, {/*milestones=*/{2, 5, 5, 9}, /*gamma=*/0.7});
  ExpectSchedule(opt, s, kMultiStepLR);
}

TEST(LrSchedulerTest, ExponentialLRMatchesPyTorch) {
  auto opt = TwoGroups();
  ExponentialLR s(opt, {/*gamma=*/0.93});
  ExpectSchedule(opt, s, kExponentialLR);
}

TEST(LrSchedulerTest, CosineAnnealingLRMatchesPyTorchOverSeveralPeriods) {
  auto opt = TwoGroups();
  CosineAnnealingLR s(opt, {/*t_max=*/5, /*eta_min=*/0.001});
  ExpectSchedule(opt, s, kCosineAnnealingLR);
}

TEST(LrSchedulerTest, LambdaLRMatchesPyTorch) {
  auto opt = TwoGroups();
  LambdaLR s(opt, [](int64_t e) { return 1.0 / std::pow(1.0 + static_cast<double>(e), 0.5); });
  ExpectSchedule(opt, s, kLambdaLR);
}

TEST(LrSchedulerTest, LinearLRWarmupMatchesPyTorch) {
  auto opt = TwoGroups();
  LinearLR s(opt, {/*start_factor=*/0.25, /*end_factor=*/1.0, /*total_iters=*/6});
  ExpectSchedule(opt, s, kLinearLR);
}

TEST(LrSchedulerTest, OneCycleLRMatchesPyTorchIncludingMomentum) {
  auto opt = TwoGroups(0.9);
  OneCycleLROptions options;
  options.max_lr = 0.5;
  options.total_steps = 17;
  OneCycleLR s(opt, options);
  ExpectSchedule(opt, s, kOneCycleLR, nullptr, /*momentum=*/true);
  s.Step();  // PyTorch allows last_epoch == total_steps and raises past it
  EXPECT_THROW_WITH(s.Step(), InvalidArgument, "tried to step 19 times", "total_steps is 17");
}

TEST(LrSchedulerTest, OneCycleLRThreePhaseLinearMatchesPyTorch) {
  auto opt = TwoGroups(0.9);
  OneCycleLROptions options;
  options.max_lr = 0.5;
  options.total_steps = 20;
  options.pct_start = 0.25;
  options.anneal_strategy = AnnealStrategy::kLinear;
  options.three_phase = true;
  OneCycleLR s(opt, options);
  ExpectSchedule(opt, s, kOneCycleLRThreePhaseLinear, nullptr, /*momentum=*/true);
}

TEST(LrSchedulerTest, ReduceLROnPlateauMatchesPyTorchWithCooldownAndMinLr) {
  auto opt = TwoGroups();
  ReduceLROnPlateauOptions options;
  options.factor = 0.5;
  options.patience = 2;
  options.cooldown = 1;
  options.min_lr = 0.01;
  ReduceLROnPlateau s(opt, options);
  ExpectSchedule(opt, s, kReduceLROnPlateau, &kPlateauMetrics);
  EXPECT_THROW_WITH(s.Step(), InvalidArgument, "needs the monitored metric");
}

TEST(LrSchedulerTest, ReduceLROnPlateauMaxModeAbsoluteThresholdMatchesPyTorch) {
  auto opt = TwoGroups();
  ReduceLROnPlateauOptions options;
  options.mode = MonitorMode::kMax;
  options.factor = 0.1;
  options.patience = 0;
  options.threshold = 0.05;
  options.threshold_mode = ThresholdMode::kAbs;
  ReduceLROnPlateau s(opt, options);
  ExpectSchedule(opt, s, kReduceLROnPlateauMaxAbs, &kPlateauMaxMetrics);
}

TEST(LrSchedulerTest, StateDictRoundTripContinuesTheScheduleExactly) {
  auto straight_opt = TwoGroups();
  const CosineAnnealingLROptions cosine{/*t_max=*/5, /*eta_min=*/0.001};
  CosineAnnealingLR straight(straight_opt, cosine);
  auto first_opt = TwoGroups();
  CosineAnnealingLR first(first_opt, cosine);
  for (int i = 0; i < 7; ++i) {
    straight.Step();
    first.Step();
  }
  const StateDict saved = StateDict::Decode(first.state_dict().Encode());
  auto second_opt = TwoGroups();
  CosineAnnealingLR second(second_opt, cosine);
  second.load_state_dict(saved);
  EXPECT_EQ(GetLearningRate(*second_opt, 1), GetLearningRate(*straight_opt, 1));
  for (int i = 0; i < 9; ++i) {
    straight.Step();
    second.Step();
    EXPECT_EQ(second.last_lr(), straight.last_lr()) << "step " << i;
  }
  ReduceLROnPlateau plateau(TwoGroups(), {});
  EXPECT_THROW_WITH(plateau.load_state_dict(saved), CorruptDataError, "CosineAnnealingLR", "ReduceLROnPlateau");
}

TEST(LrSchedulerTest, ScaleLearningRatesScalesTheWholeSchedule) {
  auto opt = TwoGroups();
  StepLR s(opt, {/*step_size=*/2, /*gamma=*/0.5});
  s.ScaleLearningRates(4.0);
  EXPECT_DOUBLE_EQ(GetLearningRate(*opt, 0), 0.4);
  s.Step();
  s.Step();
  EXPECT_DOUBLE_EQ(GetLearningRate(*opt, 0), 0.2);
  EXPECT_DOUBLE_EQ(s.base_lrs()[1], 0.148);
}

TEST(LrSchedulerTest, BadOptionsAreConfigErrorsNamingThem) {
  StepLROptions step;
  step.step_size = 0;
  EXPECT_THROW_WITH(StepLR(TwoGroups(), step), ConfigError, "step_size", "got 0");
  CosineAnnealingLROptions cosine;
  cosine.t_max = 0;
  EXPECT_THROW_WITH(CosineAnnealingLR(TwoGroups(), cosine), ConfigError, "t_max");
  LinearLROptions linear;
  linear.start_factor = 1.5;
  EXPECT_THROW_WITH(LinearLR(TwoGroups(), linear), ConfigError, "start_factor", "1.5");
  ReduceLROnPlateauOptions plateau;
  plateau.factor = 1.0;
  EXPECT_THROW_WITH(ReduceLROnPlateau(TwoGroups(), plateau), ConfigError, "factor");
  EXPECT_THROW_WITH(ParseThresholdMode("threshold_mode", "relative"), ConfigError, "'relative'", "rel, abs");
  OneCycleLROptions one_cycle;
  one_cycle.max_lr = 0.1;
  EXPECT_THROW_WITH(OneCycleLR(TwoGroups(), one_cycle), ConfigError, "epochs");
  EXPECT_THROW_WITH(ParseAnnealStrategy("anneal_strategy", "exp"), ConfigError, "anneal_strategy", "'exp'",
                    "cos, linear");
  auto adagrad = std::make_shared<torch::optim::Adagrad>(
      std::vector<at::Tensor>{torch::zeros({1}, torch::requires_grad())}, torch::optim::AdagradOptions(0.1));
  OneCycleLROptions five_steps;
  five_steps.total_steps = 5;
  EXPECT_THROW_WITH(OneCycleLR(adagrad, five_steps), ConfigError, "Adagrad", "momentum");
  EXPECT_THROW_WITH(LambdaLR(TwoGroups(), std::vector<LrLambda>{[](int64_t) { return 1.0; }}), ConfigError,
                    "expected 2 lr_lambdas");
}

TEST(LrSchedulerTest, ConfigValidationNamesTheScheduler) {
  auto opt = TwoGroups();
  LRSchedulerConfig c;
  c.scheduler = std::make_shared<StepLR>(opt, StepLROptions{});
  c.interval = Interval::kStep;
  c.frequency = 0;
  EXPECT_THROW_WITH(ValidateLRSchedulerConfig(c, 0), ConfigError, "frequency");
  LRSchedulerConfig p;
  p.scheduler = std::make_shared<ReduceLROnPlateau>(opt, ReduceLROnPlateauOptions{});
  EXPECT_THROW_WITH(ValidateLRSchedulerConfig(p, 0), ConfigError, "must include a monitor", "ReduceLROnPlateau");
  p.monitor = "val_loss";
  EXPECT_NO_THROW(ValidateLRSchedulerConfig(p, 0));
}

TEST(LrSchedulerTest, OptimizerIntrospection) {
  auto adam = std::make_shared<torch::optim::Adam>(std::vector<at::Tensor>{torch::zeros({1}, torch::requires_grad())},
                                                   torch::optim::AdamOptions(0.01).betas({0.8, 0.99}));
  EXPECT_EQ(OptimizerClassName(*adam), "Adam");
  EXPECT_EQ(OptimizerClassName(*TwoGroups()), "SGD");
  EXPECT_EQ(*GetMomentum(*adam, 0), 0.8);
  EXPECT_THROW_WITH(GetLearningRate(*adam, 3), InvalidArgument, "param group 3");
}

}  // namespace
}  // namespace lakerun::train
