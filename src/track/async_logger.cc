#include "track/async_logger.h"

#include <algorithm>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"

namespace lakerun::track {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);

}  // namespace

AsyncLogger::AsyncLogger(std::shared_ptr<Store> store, std::string run_id, size_t capacity, QueueFullPolicy on_full)
    : store_(std::move(store)), run_id_(std::move(run_id)), capacity_(capacity), on_full_(on_full) {
  LAKERUN_CHECK(capacity > 0, "tracking queue capacity must be positive");
  pending_.reserve(std::min<size_t>(capacity, 1 << 16));
  thread_ = std::thread([this] { Loop(); });
}

AsyncLogger::~AsyncLogger() {
  try {
    Close(std::chrono::seconds(60));
  } catch (const std::exception& e) {
    LAKERUN_LOG(Error) << "tracking run " << run_id_ << ": " << e.what();
  }
}

bool AsyncLogger::Push(LogEntry entry, bool is_marker) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return false;
  while (!is_marker && pending_.size() >= capacity_) {
    if (on_full_ == QueueFullPolicy::kDrop) {
      lock.unlock();
      dropped_.fetch_add(1);
      if (!warned_full_.exchange(true)) {
        LAKERUN_LOG(Warning) << "tracking run " << run_id_ << ": log queue full (" << capacity_
                             << " entries); dropping entries until the store catches up";
      }
      return true;
    }
    has_room_.wait_for(lock, kPollInterval);
    if (closed_) return false;
  }
  pending_.push_back(std::move(entry));
  if (pending_.size() == 1) has_work_.notify_one();
  return true;
}

void AsyncLogger::Enqueue(LogEntry entry) {
  if (!Push(std::move(entry), /*is_marker=*/false)) dropped_.fetch_add(1);
}

void AsyncLogger::Flush(std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> future = done->get_future();
  LogEntry marker;
  marker.kind = LogEntry::Kind::kFlush;
  marker.done = done;
  if (!Push(std::move(marker), /*is_marker=*/true)) {
    // Closed: the thread has stored everything; report what is left of its errors.
    std::lock_guard<std::mutex> lock(error_mu_);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return;
  }
  if (future.wait_for(timeout) != std::future_status::ready) {
    size_t queued = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queued = pending_.size();
    }
    LAKERUN_THROW(IoError, "tracking run ", run_id_, ": flush did not finish within ", timeout.count(), " ms (",
                  queued, " entries still queued); the store at ", store_->uri(), " is too slow or stuck");
  }
  future.get();
}

void AsyncLogger::Close(std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(close_mu_);
    if (close_started_) return;
    close_started_ = true;
  }
  std::exception_ptr flush_error;
  try {
    Flush(timeout);
  } catch (...) {
    flush_error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  has_work_.notify_all();
  has_room_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (flush_error) std::rethrow_exception(flush_error);
}

void AsyncLogger::Loop() {
  std::vector<LogEntry> batch;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      has_work_.wait_for(lock, kPollInterval, [&] { return !pending_.empty() || closed_; });
      if (pending_.empty()) {
        if (closed_) break;
        continue;
      }
      batch.swap(pending_);  // pending_ gets the drained vector back, with its capacity
    }
    has_room_.notify_all();
    for (auto& entry : batch) Process(entry);
    StorePending();
    batch.clear();
  }
  StorePending();
}

void AsyncLogger::Process(LogEntry& entry) {
  switch (entry.kind) {
    case LogEntry::Kind::kMetric:
      pending_metrics_.push_back(std::move(entry.metric));
      break;
    case LogEntry::Kind::kParam:
      pending_params_.push_back(std::move(entry.kv));
      break;
    case LogEntry::Kind::kTag:
      pending_tags_.push_back(std::move(entry.kv));
      break;
    case LogEntry::Kind::kArtifact:
      StorePending();
      try {
        store_->LogArtifact(run_id_, entry.kv.key, entry.kv.value);
      } catch (...) {
        RecordError(std::current_exception());
      }
      break;
    case LogEntry::Kind::kFlush: {
      StorePending();
      std::exception_ptr error;
      {
        std::lock_guard<std::mutex> lock(error_mu_);
        error = std::exchange(error_, nullptr);
      }
      if (error) {
        entry.done->set_exception(error);
      } else {
        entry.done->set_value();
      }
      break;
    }
  }
}

void AsyncLogger::StorePending() {
  if (pending_metrics_.empty() && pending_params_.empty() && pending_tags_.empty()) return;
  try {
    store_->LogBatch(run_id_, pending_metrics_, pending_params_, pending_tags_);
  } catch (...) {
    RecordError(std::current_exception());
  }
  pending_metrics_.clear();
  pending_params_.clear();
  pending_tags_.clear();
}

void AsyncLogger::RecordError(std::exception_ptr error) {
  // Rewrap with the run id so the caller's thread sees where the failure happened; keep the error family.
  std::exception_ptr wrapped;
  try {
    std::rethrow_exception(error);
  } catch (const InvalidArgument& e) {
    wrapped = std::make_exception_ptr(InvalidArgument(StrCat("tracking run ", run_id_, ": ", e.what())));
  } catch (const Error& e) {
    wrapped = std::make_exception_ptr(IoError(StrCat("tracking run ", run_id_, ": storing logged data failed: ",
                                                     e.what())));
  } catch (const std::exception& e) {
    wrapped = std::make_exception_ptr(IoError(StrCat("tracking run ", run_id_, ": storing logged data failed: ",
                                                     e.what())));
  }
  LAKERUN_LOG(Warning) << "tracking run " << run_id_ << ": background store call failed (reported at next flush)";
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!error_) error_ = wrapped;
}

}  // namespace lakerun::track
