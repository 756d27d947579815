#include "dist/gpu_sharing.h"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <string>
#include <thread>
#include <vector>

namespace lakerun::dist {
namespace {

// Runs the two steps for ranks 0..gpus.size()-1 on one thread each, with a barrier between them as WaitForPeers
// gives, and returns what each rank reads. A GPU's id is its name with "uuid:" in front.
std::vector<std::string> Verdicts(const std::vector<std::string>& gpus) {
  auto store = c10::make_intrusive<::c10d::HashStore>();
  store->setTimeout(std::chrono::seconds(10));
  std::vector<std::thread> threads;
  for (size_t r = 0; r < gpus.size(); ++r) {
    threads.emplace_back([&, r] { PublishRankGpu(*store, static_cast<int>(r), "uuid:" + gpus[r], gpus[r]); });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> verdicts;
  for (size_t r = 0; r < gpus.size(); ++r) verdicts.push_back(SharedGpuVerdict(*store));
  return verdicts;
}

TEST(GpuSharingTest, RanksOnDifferentGpusShareNothing) {
  for (const std::string& v : Verdicts({"0000:3c:00.0 of host a", "0000:3d:00.0 of host a",
                                        "0000:3c:00.0 of host b", "0000:3d:00.0 of host b"})) {
    EXPECT_EQ(v, "");
  }
}

TEST(GpuSharingTest, TwoRanksOnOneGpuAreNamedToEveryRank) {
  const std::vector<std::string> v =
      Verdicts({"0000:3c:00.0 of host a", "0000:3d:00.0 of host a", "0000:3c:00.0 of host a"});
  // Threads race for the first add: either rank may be named first.
  EXPECT_TRUE(v[0] == "ranks 0 and 2 both use GPU 0000:3c:00.0 of host a" ||
              v[0] == "ranks 2 and 0 both use GPU 0000:3c:00.0 of host a")
      << v[0];
  EXPECT_EQ(v[1], v[0]);
  EXPECT_EQ(v[2], v[0]);
}

TEST(GpuSharingTest, TwinHostsWithTheSameNamesAreTellingTheirGpusApartById) {
  // Cloned machines: same host name, same PCI address, different GPUs. Only the id decides.
  auto store = c10::make_intrusive<::c10d::HashStore>();
  store->setTimeout(std::chrono::seconds(10));
  PublishRankGpu(*store, 0, "GPU-aaaa", "0000:00:06.0 of host vm");
  PublishRankGpu(*store, 1, "GPU-bbbb", "0000:00:06.0 of host vm");
  EXPECT_EQ(SharedGpuVerdict(*store), "");
  PublishRankGpu(*store, 2, "GPU-bbbb", "0000:00:06.0 of host vm");
  EXPECT_EQ(SharedGpuVerdict(*store), "ranks 1 and 2 both use GPU 0000:00:06.0 of host vm");
}

TEST(GpuSharingTest, ManyRanksOnOneGpuStillGiveOneVerdict) {
  const std::vector<std::string> v(Verdicts(std::vector<std::string>(8, "0000:01:00.0 of host solo")));
  EXPECT_NE(v[0].find("both use GPU 0000:01:00.0 of host solo"), std::string::npos) << v[0];
  for (const std::string& x : v) EXPECT_EQ(x, v[0]);
}

}  // namespace
}  // namespace lakerun::dist
