#include "scratch_pool.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

TEST(ScratchPoolTest, ReturnedScratchIsLentAgainWithItsPageBlocks) {
  ScratchPool pool;
  parquet::ReadScratch* first = nullptr;
  std::shared_ptr<parquet::Buffer> block = std::make_shared<parquet::Buffer>();
  {
    const ScratchPool::Lease lease = pool.Borrow();
    first = lease.get();
    lease.get()->view_buffers.push_back(block);  // as ReadColumnChunk does with a page block
    EXPECT_EQ(pool.idle(), 0u);
  }
  EXPECT_EQ(pool.idle(), 1u);
  const ScratchPool::Lease again = pool.Borrow();
  EXPECT_EQ(again.get(), first);  // not a fresh scratch: its memory is mapped already
  ASSERT_EQ(again.get()->view_buffers.size(), 1u);
  EXPECT_EQ(again.get()->view_buffers[0], block);
}

TEST(ScratchPoolTest, ConcurrentDecodesGetTheirOwnScratch) {
  ScratchPool pool;
  {
    const ScratchPool::Lease a = pool.Borrow();
    const ScratchPool::Lease b = pool.Borrow();
    EXPECT_NE(a.get(), b.get());
  }
  EXPECT_EQ(pool.idle(), 2u);  // both kept for the next decodes

  // Many threads borrowing at once never share a scratch.
  std::vector<std::thread> threads;
  std::atomic<int> shared{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        const ScratchPool::Lease lease = pool.Borrow();
        // A scratch in use by two decodes would see the other's mark.
        if (!lease.get()->chunk_bytes.empty()) shared.fetch_add(1);
        lease.get()->chunk_bytes.Resize(1);
        std::this_thread::yield();
        lease.get()->chunk_bytes.Resize(0);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(shared.load(), 0);
  EXPECT_LE(pool.idle(), 4u);  // never more scratches than decodes at once
}

}  // namespace
}  // namespace lakerun::data
