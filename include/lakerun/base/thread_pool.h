// A fixed-size thread pool that owns and joins its threads.
//
//   lakerun::ThreadPool pool(2, "decode");
//   auto f = pool.Submit([&] { return DecodeChunk(i); });
//   Chunk c = f.get();          // rethrows the task's exception, if any
//
// The destructor finishes queued tasks, then joins. Tasks must not block forever on each other.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace lakerun {

class ThreadPool {
 public:
  /// `threads` == 0 means: run every task inline in Submit (a serial executor, for deterministic tests).
  explicit ThreadPool(size_t threads, std::string name = "pool");
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <typename F>
  auto Submit(F&& fn) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(fn));
    std::future<R> result = task->get_future();
    Enqueue([task] { (*task)(); });
    return result;
  }

  /// Runs `task` on the pool with no future to report to (a task that reports its own outcome, or whose outcome
  /// nobody needs): saves the future's shared state and its wake-up. Exceptions escaping `task` terminate.
  void Post(std::function<void()> task) { Enqueue(std::move(task)); }

  size_t size() const { return workers_.size(); }
  const std::string& name() const { return name_; }

  /// Runs fn(i) for i in [0, n) on the pool (and the calling thread) and waits; rethrows the first exception.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  void Enqueue(std::function<void()> task);
  void WorkerLoop();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace lakerun
