#include "lakerun/base/thread_pool.h"

#include <pthread.h>

#include <atomic>
#include <exception>

namespace lakerun {

ThreadPool::ThreadPool(size_t threads, std::string name) : name_(std::move(name)) {
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
    // Thread names show up in top/gdb; Linux limits them to 15 characters.
    const std::string thread_name = (name_ + "-" + std::to_string(i)).substr(0, 15);
    pthread_setname_np(workers_.back().native_handle(), thread_name.c_str());
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::Enqueue(std::function<void()> task) {
  if (workers_.empty()) {
    task();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  std::atomic<size_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mu;
  auto drain = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!first_error) first_error = std::current_exception();
        next.store(n);  // stop handing out work
      }
    }
  };
  const size_t helpers = std::min(workers_.size(), n - 1);
  std::vector<std::future<void>> pending;
  pending.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) pending.push_back(Submit(drain));
  drain();
  for (auto& f : pending) f.get();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace lakerun
