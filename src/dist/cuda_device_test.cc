#include "dist/cuda_device.h"

#include <gtest/gtest.h>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

TEST(ChooseCudaDeviceTest, OneVisibleGpuIsCuda0WhateverTheLocalRank) {
  // `lakerun launch --use-gpu`: local rank 3 sees only its own GPU.
  EXPECT_EQ(ChooseCudaDevice(0, 1, "GPU-a"), 0);
  EXPECT_EQ(ChooseCudaDevice(3, 1, "3"), 0);
}

TEST(ChooseCudaDeviceTest, EveryGpuVisibleMeansCudaLocalRank) {
  // torchrun / Slurm / MPI: every rank of the node sees all its GPUs.
  EXPECT_EQ(ChooseCudaDevice(0, 4, ""), 0);
  EXPECT_EQ(ChooseCudaDevice(3, 4, ""), 3);
  EXPECT_EQ(ChooseCudaDevice(1, 2, "0,1"), 1);
}

TEST(ChooseCudaDeviceTest, ALocalRankWithoutAGpuOfItsOwnIsAConfigError) {
  try {
    ChooseCudaDevice(2, 2, "0,1");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("local rank 2 has no GPU of its own: 2 are visible to it "
                                               "(CUDA_VISIBLE_DEVICES = '0,1')"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--use-gpu"));
  }
  EXPECT_THROW(ChooseCudaDevice(4, 3, ""), ConfigError);
}

}  // namespace
}  // namespace lakerun::dist
