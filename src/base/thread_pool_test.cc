#include "lakerun/base/thread_pool.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun {
namespace {

TEST(ThreadPoolTest, RunsTasksAndReturnsResults) {
  ThreadPool pool(2, "t");
  std::vector<std::future<int>> results;
  for (int i = 0; i < 50; ++i) results.push_back(pool.Submit([i] { return i * i; }));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(results[i].get(), i * i);
}

TEST(ThreadPoolTest, TaskExceptionsReachTheCaller) {
  ThreadPool pool(1);
  auto f = pool.Submit([]() -> int { throw CorruptDataError("page 7 is bad"); });
  EXPECT_THROW_WITH(f.get(), CorruptDataError, "page 7");
}

TEST(ThreadPoolTest, ZeroThreadsRunsInline) {
  ThreadPool pool(0);
  const auto caller = std::this_thread::get_id();
  auto f = pool.Submit([] { return std::this_thread::get_id(); });
  EXPECT_EQ(f.get(), caller);
}

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnceAndRethrows) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(hits.size(), [&](size_t i) { hits[i]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_THROW(pool.ParallelFor(10, [](size_t i) { if (i == 5) throw std::runtime_error("five"); }),
               std::runtime_error);
}

TEST(ThreadPoolTest, DestructorFinishesQueuedWork) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(2);
    for (int i = 0; i < 100; ++i) pool.Submit([&] { done++; });
  }
  EXPECT_EQ(done.load(), 100);
}

TEST(ThreadPoolTest, PostedTasksRunOnThePoolOrInlineWithoutThreads) {
  std::atomic<int> done{0};
  std::atomic<int> on_caller{0};
  const auto caller = std::this_thread::get_id();
  {
    ThreadPool pool(2, "post");
    for (int i = 0; i < 100; ++i) {
      pool.Post([&] {
        on_caller += std::this_thread::get_id() == caller;
        done++;
      });
    }
  }  // the destructor runs what is still queued
  EXPECT_EQ(done.load(), 100);
  EXPECT_EQ(on_caller.load(), 0);
  ThreadPool inline_pool(0);
  inline_pool.Post([&] { on_caller += std::this_thread::get_id() == caller; });
  EXPECT_EQ(on_caller.load(), 1);  // ran before Post returned
}

}  // namespace
}  // namespace lakerun
