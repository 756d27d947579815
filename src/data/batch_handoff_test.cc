#include "batch_handoff.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace lakerun::data {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(BatchHandoffTest, APublishedBatchIsTakenWithoutWaiting) {
  BatchHandoff handoff;
  PendingBatch slot;
  slot.batch.index = 7;
  handoff.Publish(slot);
  EXPECT_TRUE(handoff.Wait(slot, Clock::now()));  // a deadline already past: no wait needed
  EXPECT_EQ(slot.batch.index, 7u);
}

TEST(BatchHandoffTest, AnUnpublishedBatchTimesOutAtTheDeadline) {
  BatchHandoff handoff;
  PendingBatch slot;
  const auto start = Clock::now();
  EXPECT_FALSE(handoff.Wait(slot, start + milliseconds(50)));
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, milliseconds(50));
  EXPECT_LT(waited, milliseconds(5000));
}

// Many batches published by two threads while the consumer waits on each in turn: every wake-up arrives, and each
// batch is complete when seen. A lost wake-up stalls the consumer until its wait's 10 s deadline, so the run (about
// 0.1 s) would take longer than that.
TEST(BatchHandoffTest, NoWakeUpIsLostBetweenPublishersAndAWaiter) {
  BatchHandoff handoff;
  constexpr int kBatches = 20000;
  std::vector<std::unique_ptr<PendingBatch>> slots;
  for (int i = 0; i < kBatches; ++i) slots.push_back(std::make_unique<PendingBatch>());
  auto publish = [&](int parity) {
    for (int i = parity; i < kBatches; i += 2) {
      slots[i]->batch.index = static_cast<uint64_t>(i);
      if (i % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));  // make the consumer sleep
      handoff.Publish(*slots[i]);
    }
  };
  const auto start = Clock::now();
  std::thread even(publish, 0), odd(publish, 1);
  int taken = 0;
  for (int i = 0; i < kBatches; ++i) {
    if (!handoff.Wait(*slots[i], Clock::now() + std::chrono::seconds(10))) break;
    EXPECT_EQ(slots[i]->batch.index, static_cast<uint64_t>(i));
    ++taken;
  }
  even.join();
  odd.join();
  EXPECT_EQ(taken, kBatches);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10)) << "a wake-up was lost";
}

}  // namespace
}  // namespace lakerun::data
