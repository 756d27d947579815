#include "lakerun/base/bounded_queue.h"

#include <thread>

#include "lakerun_testing/matchers.h"

namespace lakerun {
namespace {

TEST(BoundedQueueTest, FifoAndCapacity) {
  BoundedQueue<int> q(2);
  EXPECT_TRUE(q.Push(1));
  EXPECT_TRUE(q.Push(2));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.Pop(), 2);
  EXPECT_EQ(q.TryPop(), std::nullopt);
}

TEST(BoundedQueueTest, ProducerBlocksUntilConsumerMakesRoom) {
  BoundedQueue<int> q(1);
  q.Push(0);
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.Push(1);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(pushed.load());
  EXPECT_EQ(q.Pop(), 0);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.Pop(), 1);
}

TEST(BoundedQueueTest, CloseDrainsThenEnds) {
  BoundedQueue<int> q(4);
  q.Push(7);
  q.Close();
  EXPECT_FALSE(q.Push(8));
  EXPECT_EQ(q.Pop(), 7);
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(BoundedQueueTest, CloseWakesBlockedConsumer) {
  BoundedQueue<int> q(1);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    q.Close();
  });
  EXPECT_EQ(q.Pop(), std::nullopt);
  closer.join();
}

TEST(BoundedQueueTest, PopForTimesOut) {
  BoundedQueue<int> q(1);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(q.PopFor(std::chrono::milliseconds(30)), std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(25));
  EXPECT_FALSE(q.closed());
}

}  // namespace
}  // namespace lakerun
