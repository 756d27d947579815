#include "lakerun/launch/gpu.h"

#include <stdlib.h>

#include "lakerun/base/error.h"
#include "lakerun/launch/launcher.h"
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

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(GpuTest, DetectsFromCudaVisibleDevices) {
  ScopedEnv env("CUDA_VISIBLE_DEVICES", "4,5");
  VisibleGpus gpus = DetectVisibleGpus();
  EXPECT_EQ(gpus.ids, (std::vector<std::string>{"4", "5"}));
  EXPECT_EQ(gpus.source, "CUDA_VISIBLE_DEVICES");
}

TEST(GpuTest, UseGpuWithoutGpusIsAClearError) {
  ScopedEnv env("CUDA_VISIBLE_DEVICES", "");
  LaunchOptions options;
  options.processes = 2;
  options.use_gpu = true;
  options.command = {"/bin/true"};
  EXPECT_THROW_WITH(Launch(options), ConfigError, "--use-gpu", "no GPU is visible", "CUDA_VISIBLE_DEVICES = ''");
}

}  // namespace
}  // namespace lakerun::launch
