#include "batch_memory.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace lakerun::data {
namespace {

TEST(BatchMemoryTest, TensorsHaveTheShapeAndTypeAskedForAndAreAligned) {
  BatchMemory memory(1 << 20);
  const at::Tensor t = memory.Empty({100, 28, 28}, at::kByte);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{100, 28, 28}));
  EXPECT_EQ(t.scalar_type(), at::kByte);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.device().is_cpu());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  const at::Tensor f = memory.Empty({3, 5}, at::kFloat);
  EXPECT_EQ(f.scalar_type(), at::kFloat);
  EXPECT_EQ(f.nbytes(), 60u);
  f.fill_(2.5);  // writable over its whole extent
  EXPECT_EQ(f.sum().item<float>(), 37.5f);
  const at::Tensor empty = memory.Empty({0, 4}, at::kLong);
  EXPECT_EQ(empty.numel(), 0);
}

TEST(BatchMemoryTest, AReturnedBlockIsLentAgainForTheSameSize) {
  BatchMemory memory(1 << 20);
  void* first;
  {
    const at::Tensor t = memory.Empty({100, 784}, at::kByte);
    first = t.data_ptr();
    EXPECT_EQ(memory.free_bytes(), 0u);
  }
  EXPECT_GE(memory.free_bytes(), 78400u);
  const at::Tensor again = memory.Empty({100, 784}, at::kByte);
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_EQ(memory.free_bytes(), 0u);
  // Another size does not take a block that is too small or much too large.
  const at::Tensor held = memory.Empty({10}, at::kLong);
  EXPECT_NE(held.data_ptr(), first);
}

TEST(BatchMemoryTest, FreeBlocksNeverExceedTheLimit) {
  BatchMemory memory(200 << 10);  // two 78 KB blocks (rounded to 80 KB), not three
  {
    std::vector<at::Tensor> held;
    for (int i = 0; i < 5; ++i) held.push_back(memory.Empty({100, 784}, at::kByte));
  }
  EXPECT_EQ(memory.free_bytes(), 2u * 80u * 1024u);
}

TEST(BatchMemoryTest, TensorsOutliveTheirMemory) {
  at::Tensor survivor;
  {
    BatchMemory memory(1 << 20);
    survivor = memory.Empty({1000}, at::kInt);
    at::Tensor returned = memory.Empty({1000}, at::kInt);
  }
  survivor.fill_(7);  // the block is still valid; it is freed with the tensor (checked under ASan)
  EXPECT_EQ(survivor.sum().item<int64_t>(), 7000);
}

TEST(BatchMemoryTest, OneThreadAllocatesWhileAnotherFrees) {
  BatchMemory memory(4 << 20);
  constexpr int kBatches = 20000;
  std::vector<at::Tensor> handed(kBatches);
  std::atomic<int> built{0};
  std::thread consumer([&] {
    for (int i = 0; i < kBatches; ++i) {
      while (built.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      ASSERT_EQ(handed[i].data_ptr<int64_t>()[0], i);
      ASSERT_EQ(handed[i].data_ptr<int64_t>()[99], i);
      handed[i] = at::Tensor();
    }
  });
  for (int i = 0; i < kBatches; ++i) {
    at::Tensor t = memory.Empty({100}, at::kLong);
    t.fill_(i);
    handed[i] = std::move(t);
    built.store(i + 1, std::memory_order_release);
  }
  consumer.join();
  EXPECT_LE(memory.free_bytes(), size_t{4} << 20);
}

}  // namespace
}  // namespace lakerun::data
