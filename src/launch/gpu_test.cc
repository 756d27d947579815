#include "lakerun/launch/gpu.h"

#include <stdlib.h>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::launch {
namespace {

TEST(GpuTest, ParsesCudaVisibleDevicesLikeCuda) {
  EXPECT_EQ(ParseCudaVisibleDevices("0,1, 3"), (std::vector<std::string>{"0", "1", "3"}));
  EXPECT_EQ(ParseCudaVisibleDevices("GPU-abc,GPU-def"), (std::vector<std::string>{"GPU-abc", "GPU-def"}));
  EXPECT_TRUE(ParseCudaVisibleDevices("").empty());
  EXPECT_TRUE(ParseCudaVisibleDevices("-1").empty());
  EXPECT_EQ(ParseCudaVisibleDevices("2,-1,3"), std::vector<std::string>{"2"});
}

TEST(GpuTest, DetectsFromCudaVisibleDevices) {
  const char* old = getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old != nullptr ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
  VisibleGpus gpus = DetectVisibleGpus();
  if (old != nullptr) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(gpus.ids, (std::vector<std::string>{"4", "5"}));
  EXPECT_EQ(gpus.source, "CUDA_VISIBLE_DEVICES");
}

}  // namespace
}  // namespace lakerun::launch
