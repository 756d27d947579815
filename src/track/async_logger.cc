#include "track/async_logger.h"

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"

namespace lakerun::track {
namespace {

constexpr size_t kMaxBatchEntries = 50000;  // bound on one drained batch, so memory stays flat under a backlog
constexpr auto kPollInterval = std::chrono::milliseconds(100);

}  // namespace

AsyncLogger::AsyncLogger(std::shared_ptr<Store> store, std::string run_id, size_t capacity, QueueFullPolicy on_full)
    : store_(std::move(store)), run_id_(std::move(run_id)), on_full_(on_full), queue_(capacity) {
  thread_ = std::thread([this] { Loop(); });
}

AsyncLogger::~AsyncLogger() {
  try {
    Close(std::chrono::seconds(60));
  } catch (const std::exception& e) {
    LAKERUN_LOG(Error) << "tracking run " << run_id_ << ": " << e.what();
  }
}

void AsyncLogger::Enqueue(LogEntry entry) {
  if (on_full_ == QueueFullPolicy::kDrop && queue_.size() >= queue_.capacity()) {
    dropped_.fetch_add(1);
    if (!warned_full_.exchange(true)) {
      LAKERUN_LOG(Warning) << "tracking run " << run_id_ << ": log queue full (" << queue_.capacity()
                           << " entries); dropping entries until the store catches up";
    }
    return;
  }
  if (!queue_.Push(std::move(entry))) dropped_.fetch_add(1);
}

void AsyncLogger::Flush(std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> future = done->get_future();
  LogEntry marker;
  marker.kind = LogEntry::Kind::kFlush;
  marker.done = done;
  if (!queue_.Push(std::move(marker))) {
    // Closed: the thread has stored everything; report what is left of its errors.
    std::lock_guard<std::mutex> lock(error_mu_);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return;
  }
  if (future.wait_for(timeout) != std::future_status::ready) {
    LAKERUN_THROW(IoError, "tracking run ", run_id_, ": flush did not finish within ", timeout.count(), " ms (",
                  queue_.size(), " entries still queued); the store at ", store_->uri(), " is too slow or stuck");
  }
  future.get();
}

void AsyncLogger::Close(std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(close_mu_);
    if (closed_) return;
    closed_ = true;
  }
  std::exception_ptr flush_error;
  try {
    Flush(timeout);
  } catch (...) {
    flush_error = std::current_exception();
  }
  queue_.Close();
  if (thread_.joinable()) thread_.join();
  if (flush_error) std::rethrow_exception(flush_error);
}

void AsyncLogger::Loop() {
  while (true) {
    std::optional<LogEntry> entry = queue_.PopFor(kPollInterval);
    if (!entry) {
      if (queue_.closed() && queue_.size() == 0) break;
      continue;
    }
    size_t taken = 1;
    Process(*entry);
    while (taken < kMaxBatchEntries) {
      std::optional<LogEntry> next = queue_.TryPop();
      if (!next) break;
      ++taken;
      Process(*next);
    }
    StorePending();
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
